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
 */
public final class AccessControl {
  private static final int READ = 4;
  private static final int WRITE = 2;
  private static final int SEARCH = 1;

  private final FileSystem fs;
  private final Cache<String, FileInfo> folders;

  public AccessControl(FileSystem fs, Duration folderTtl) {
    this.fs = fs;
    this.folders = Caffeine.newBuilder().maximumSize(10_000).expireAfterWrite(folderTtl).build();
  }

  /** May {@code p} read the file {@code file} (found at its path)? */
  public void checkRead(Principal p, FileInfo file) throws StrataException {
    if (p.superuser()) {
      return;
    }
    checkSearchOfAncestors(p, file.getPath());
    require(p, file, READ, "read");
  }

  /** May {@code p} list the folder at {@code dir}? */
  public void checkList(Principal p, FileInfo dir) throws StrataException {
    if (p.superuser()) {
      return;
    }
    checkSearchOfAncestors(p, dir.getPath());
    require(p, dir, READ | SEARCH, "list");
  }

  /**
   * May {@code p} create, replace or delete entries in the folder {@code parentPath}? Checks the
   * nearest existing folder on the way when the parent does not exist yet (it is created there).
   */
  public void checkWriteIn(Principal p, String parentPath) throws StrataException {
    if (p.superuser()) {
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
    checkSearchOfAncestors(p, dir);
    require(p, info, WRITE | SEARCH, "write in");
  }

  /** May {@code p} change the metadata (tags) of {@code file}: its owner or a writer. */
  public void checkWriteOf(Principal p, FileInfo file) throws StrataException {
    if (p.superuser()) {
      return;
    }
    checkSearchOfAncestors(p, file.getPath());
    require(p, file, WRITE, "write");
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
