package io.strata.proxy.access;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.client.FileSystem;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.time.Duration;
import java.util.List;

/**
 * POSIX permission checks of the namespace for S3 requests: reading an object needs read permission
 * on its file, listing needs read and search on the folder, creating, replacing or deleting needs
 * write and search on the parent folder, and every folder on the way needs search, as the kernel
 * checks a process in the FUSE mount. Folder statuses are cached for {@code
 * strata.proxy.permission.cache.ttl}, so a change of mode takes effect within it. Refusals are
 * AccessDenied naming the path and the missing permission. Thread-safe.
 *
 * <p>On top of the modes, the grants of S3's canned ACLs that modes cannot express ({@link
 * CannedAcl}): an object or bucket made public may be read or listed by anyone, a public-read-write
 * bucket written in by anyone, and an object given to its bucket's owner read by that owner. As in
 * S3, a grant on an object stands by itself: the folders above it need not let the reader in. A
 * request without a signature is refused everything else, unless {@code strata.proxy.anonymous}
 * lets the modes decide for it as for the user {@code nobody}. A request the bucket's policy allows
 * passes every check here; one it denies never gets here ({@link BucketPolicy}).
 */
public final class AccessControl {
  private static final int READ = 4;
  private static final int WRITE = 2;
  private static final int SEARCH = 1;

  private final FileSystem fs;
  private final Cache<String, FileInfo> folders;
  private final boolean modesForUnsigned;

  /**
   * @param modesForUnsigned whether the modes decide for requests without a signature as for the
   *     user {@code nobody} ({@code strata.proxy.anonymous}); otherwise only public ACLs let them
   *     in
   */
  public AccessControl(FileSystem fs, Duration folderTtl, boolean modesForUnsigned) {
    this.fs = fs;
    this.folders = Caffeine.newBuilder().maximumSize(10_000).expireAfterWrite(folderTtl).build();
    this.modesForUnsigned = modesForUnsigned;
  }

  /** May {@code p} read the file {@code file} (found at its path)? */
  public void checkRead(Principal p, FileInfo file) throws StrataException {
    if (p.superuser() || p.grantedByPolicy()) {
      return;
    }
    CannedAcl.StoredAcl acl = CannedAcl.stored(file);
    if (acl.readableByAnyone()
        || (p.signed() && (acl.readableBySigned() || acl.readableByBucketOwner(p.user())))) {
      return;
    }
    requireModes(p, "read", file.getPath());
    checkSearchOfAncestors(p, file.getPath());
    require(p, file, READ, "read");
  }

  /** May {@code p} list the folder at {@code dir}? */
  public void checkList(Principal p, FileInfo dir) throws StrataException {
    CannedAcl.StoredAcl acl = CannedAcl.stored(dir);
    if (p.superuser()
        || p.grantedByPolicy()
        || acl.readableByAnyone()
        || (p.signed() && acl.readableBySigned())) {
      return;
    }
    requireModes(p, "list", dir.getPath());
    checkSearchOfAncestors(p, dir.getPath());
    require(p, dir, READ | SEARCH, "list");
  }

  /**
   * May {@code p} create, replace or delete entries in the folder {@code parentPath}? Checks the
   * nearest existing folder on the way when the parent does not exist yet (it is created there).
   */
  public void checkWriteIn(Principal p, String parentPath) throws StrataException {
    if (p.superuser() || p.grantedByPolicy()) {
      return;
    }
    String dir = parentPath;
    FileInfo info = folder(dir);
    while (info == null && !dir.equals(PathNames.ROOT)) {
      dir = PathNames.parent(dir);
      info = folder(dir);
    }
    if (info == null) {
      return;
    }
    if (!p.signed() && writableByAnyone(dir, info)) {
      return;
    }
    requireModes(p, "write in", parentPath);
    checkSearchOfAncestors(p, dir);
    require(p, info, WRITE | SEARCH, "write in");
  }

  /** May {@code p} change the metadata (tags) of {@code file}: its owner or a writer. */
  public void checkWriteOf(Principal p, FileInfo file) throws StrataException {
    if (p.superuser() || p.grantedByPolicy()) {
      return;
    }
    requireModes(p, "write", file.getPath());
    checkSearchOfAncestors(p, file.getPath());
    require(p, file, WRITE, "write");
  }

  /**
   * May {@code p} change the ACL or mode of {@code f}: its owner alone, as S3 gives WRITE_ACP to
   * the owner and chmod is the owner's.
   */
  public void checkOwnerOf(Principal p, FileInfo f) {
    if (p.superuser() || p.grantedByPolicy() || (p.signed() && p.user().equals(f.getOwner()))) {
      return;
    }
    throw new S3Exception(
        S3ErrorCode.ACCESS_DENIED,
        "Access Denied: only the owner ("
            + f.getOwner()
            + ") may change the ACL of "
            + f.getPath()
            + "; user "
            + p.user()
            + " is not");
  }

  /**
   * Whether a folder or one above it is a public-read-write bucket, which anyone may write in: as
   * in S3, the bucket's grant covers every key below it.
   */
  private boolean writableByAnyone(String dir, FileInfo info) throws StrataException {
    String path = dir;
    FileInfo f = info;
    while (true) {
      if (f != null && CannedAcl.stored(f).writableByAnyone()) {
        return true;
      }
      if (path.equals(PathNames.ROOT)) {
        return false;
      }
      path = PathNames.parent(path);
      f = folder(path);
    }
  }

  /** Refuses a request without a signature what only the modes could allow it. */
  private void requireModes(Principal p, String what, String path) {
    if (!p.signed() && !modesForUnsigned) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: a request without a signature may not "
              + what
              + " "
              + path
              + ": unsigned requests may only read what a public-read ACL opens and write in"
              + " public-read-write buckets; sign the request with an access key from the"
              + " proxy's credentials file");
    }
  }

  /** Forgets what is cached of a folder (after the proxy changed or deleted it). */
  public void forget(String path) {
    folders.invalidate(path);
  }

  private void checkSearchOfAncestors(Principal p, String path) throws StrataException {
    String parent = PathNames.parent(path);
    List<String> chain = new java.util.ArrayList<>();
    while (parent != null) {
      chain.add(parent);
      parent = PathNames.parent(parent);
    }
    for (int i = chain.size() - 1; i >= 0; i--) {
      FileInfo dir = folder(chain.get(i));
      if (dir == null) {
        return;
      }
      require(p, dir, SEARCH, "enter");
    }
  }

  private FileInfo folder(String path) throws StrataException {
    FileInfo cached = folders.getIfPresent(path);
    if (cached != null) {
      return cached;
    }
    try {
      FileInfo f = fs.getStatus(path);
      folders.put(path, f);
      return f;
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }

  private static void require(Principal p, FileInfo f, int wanted, String what) {
    int mode = f.getMode();
    int bits;
    if (p.user().equals(f.getOwner())) {
      bits = (mode >> 6) & 7;
    } else if (p.groups().contains(f.getGroup())) {
      bits = (mode >> 3) & 7;
    } else {
      bits = mode & 7;
    }
    if ((bits & wanted) != wanted) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: user "
              + p.user()
              + " may not "
              + what
              + " "
              + f.getPath()
              + " (owner "
              + f.getOwner()
              + ", group "
              + f.getGroup()
              + ", mode "
              + String.format("%04o", mode & 07777)
              + ")");
    }
  }
}
