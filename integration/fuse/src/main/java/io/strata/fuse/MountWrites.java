package io.strata.fuse;

import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.ErrorCodes;

/**
 * The calls of a mount that change the namespace: creating and writing new files, directories,
 * removal, rename, mode, ownership and times. Each answers 0 or a negative errno and keeps the
 * mount's metadata cache true to what it changed, so the mount's own changes are visible to it
 * at once whatever the cache's TTL.
 *
 * <p>What Strata does not support answers a precise errno, never a hang or a silent success:
 * rewriting part of an existing file or extending it ({@code EOPNOTSUPP}), truncating to a size
 * other than 0 or the current one ({@code EOPNOTSUPP}). A rename onto an existing file removes
 * that file first; the two steps are not atomic, so a crash between them loses the target.
 * Permission checks are the kernel's (the mount runs with {@code default_permissions}); this
 * class records the caller as the owner of what it creates.
 */
final class MountWrites {
  private static final Logger LOG = LoggerFactory.getLogger(MountWrites.class);
  private static final int O_ACCMODE = 3;
  private static final int O_RDONLY = 0;
  private static final int O_EXCL = 0200;
  private static final int O_TRUNC = 01000;

  private final FileSystem fs;
  private final MetadataCache metadata;
  private final UserNames names;
  private final ConcurrentMap<String, WriteHandle> writersByPath = new ConcurrentHashMap<>();

  MountWrites(FileSystem fs, MetadataCache metadata, UserNames names) {
    this.fs = fs;
    this.metadata = metadata;
    this.names = names;
  }

  /** Whether open flags ask for writing. */
  static boolean writes(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY;
  }

  /** The writer of {@code path} open on this mount, or null. */
  WriteHandle writerOf(String path) {
    return writersByPath.get(path);
  }

  /**
   * Creates {@code path} and opens it for writing. An existing file is replaced only when the
   * open truncates it or it is empty, as a new file would be; {@code O_EXCL} keeps EEXIST.
   *
   * @return the new handle
   * @throws StrataException with the errno's cause; see {@link #errnoOf}
   */
  WriteHandle create(String path, long mode, int flags, Caller caller) throws StrataException {
    CreateOptions options = CreateOptions.defaults().mode((int) (mode & 07777))
        .owner(names.userName(caller.uid())).group(names.groupName(caller.gid()));
    try {
      return register(path, startWriting(path, options, null));
    } catch (StrataException e) {
      if (e.code() != ErrorCode.ALREADY_EXISTS || (flags & O_EXCL) != 0) {
        throw e;
      }
    }
    // The kernel saw no such file, but it exists: the cache, or another client, was behind.
    // Opened as open(2) opens an existing file: replaced only with O_TRUNC or when empty.
    metadata.invalidate(path);
    return openForWrite(path, metadata.get(path), flags);
  }

  /**
   * Opens an existing file for writing. With {@code O_TRUNC}, or when the file is empty, it is
   * written anew at once (keeping its mode and owner); otherwise the handle is pending (see
   * {@link WriteHandle}) and changes nothing unless it truncates the file to 0.
   */
  WriteHandle openForWrite(String path, FileInfo info, int flags) throws StrataException {
    if (info.getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, "Is a directory: " + path);
    }
    CreateOptions options = CreateOptions.defaults().overwrite(true).mode(info.getMode())
        .owner(info.getOwner()).group(info.getGroup());
    WriteHandle handle;
    if ((flags & O_TRUNC) != 0 || info.getLength() == 0) {
      handle = WriteHandle.writing(path, startWriting(path, options, null));
    } else {
      WriteHandle[] self = new WriteHandle[1];
      handle = WriteHandle.pending(path, info.getLength(),
          () -> startWriting(path, options, self[0]));
      self[0] = handle;
    }
    writersByPath.put(path, handle);
    return handle;
  }

  /**
   * Starts a new version of {@code path}. A handle of this mount still writing an older version
   * is completed first: the master completes a file by path, so two versions in flight would
   * complete each other's; the newer open wins, as the last writer does in POSIX.
   */
  private FileOutStream startWriting(String path, CreateOptions options, WriteHandle self)
      throws StrataException {
    WriteHandle previous = writersByPath.get(path);
    if (previous != null && previous != self) {
      try {
        close(previous);
      } catch (IOException e) {
        LOG.info("Completing the earlier writer of {} before a new one failed: {}", path,
            e.toString());
      }
    }
    FileOutStream out = fs.createFile(path, options);
    metadata.invalidate(path);
    return out;
  }

  private WriteHandle register(String path, FileOutStream out) {
    WriteHandle handle = WriteHandle.writing(path, out);
    writersByPath.put(path, handle);
    metadata.invalidate(path);
    return handle;
  }

  /** Completes the file of {@code handle}; its new status is read again on the next call. */
  void close(WriteHandle handle) throws IOException {
    try {
      handle.close();
    } finally {
      writersByPath.remove(handle.path(), handle);
      metadata.invalidate(handle.path());
    }
  }

  /** Truncates by path: through this mount's open writer of the file when there is one. */
  int truncate(String path, long size) throws StrataException {
    WriteHandle open = writersByPath.get(path);
    FileInfo info = open == null ? metadata.get(path) : null;
    if (info != null && info.getDirectory()) {
      return -ErrorCodes.EISDIR();
    }
    WriteHandle handle = open != null ? open : openForWrite(path, info, 0);
    try {
      int result = handle.truncate(size);
      if (open == null) {
        close(handle);
      }
      return result;
    } catch (IOException e) {
      throw asStrata(path, e);
    }
  }

  int mkdir(String path, long mode, Caller caller) throws StrataException {
    fs.createDirectory(path, false, false, (int) (mode & 07777),
        names.userName(caller.uid()), names.groupName(caller.gid()));
    metadata.invalidate(path);
    return 0;
  }

  int unlink(String path) throws StrataException {
    FileInfo info = metadata.get(path);
    if (info.getDirectory()) {
      return -ErrorCodes.EISDIR();
    }
    try {
      fs.delete(path, false);
    } finally {
      metadata.invalidate(path);
    }
    return 0;
  }

  int rmdir(String path) throws StrataException {
    FileInfo info = metadata.get(path);
    if (!info.getDirectory()) {
      return -ErrorCodes.ENOTDIR();
    }
    if (path.equals(PathNames.ROOT)) {
      return -ErrorCodes.EBUSY();
    }
    if (!isEmpty(path)) {
      return -ErrorCodes.ENOTEMPTY();
    }
    try {
      fs.delete(path, false);
    } finally {
      metadata.invalidateTree(path);
    }
    return 0;
  }

  private boolean isEmpty(String dir) throws StrataException {
    try (CloseableIterator<FileInfo> children = fs.listStatus(dir)) {
      return !children.hasNext();
    }
  }

  /** POSIX rename: an existing target of the same kind is replaced (a directory only if empty). */
  int rename(String from, String to) throws StrataException {
    FileInfo source = metadata.get(from);
    FileInfo target = null;
    metadata.invalidate(to);
    try {
      target = metadata.get(to);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
    if (source.getDirectory() && (to + "/").startsWith(from + "/")) {
      return -ErrorCodes.EINVAL();
    }
    try {
      if (target != null) {
        if (target.getFileId() == source.getFileId()) {
          return 0;
        }
        if (target.getDirectory() && !source.getDirectory()) {
          return -ErrorCodes.EISDIR();
        }
        if (!target.getDirectory() && source.getDirectory()) {
          return -ErrorCodes.ENOTDIR();
        }
        if (target.getDirectory() && !isEmpty(to)) {
          return -ErrorCodes.ENOTEMPTY();
        }
        fs.delete(to, false);
      }
      fs.rename(from, to);
    } finally {
      metadata.invalidateTree(from);
      metadata.invalidateTree(to);
    }
    return 0;
  }

  int chmod(String path, long mode) throws StrataException {
    return setAttribute(path, SetAttributeOptions.defaults().mode((int) (mode & 07777)));
  }

  /** chown with -1 (all bits set in either width) for an id that stays. */
  int chown(String path, long uid, long gid) throws StrataException {
    SetAttributeOptions options = SetAttributeOptions.defaults();
    boolean any = false;
    if (!unchanged(uid)) {
      options = options.owner(names.userName(uid));
      any = true;
    }
    if (!unchanged(gid)) {
      options = options.group(names.groupName(gid));
      any = true;
    }
    return any ? setAttribute(path, options) : 0;
  }

  private static boolean unchanged(long id) {
    return id == -1 || id == 0xFFFF_FFFFL;
  }

  /** Sets the modification time; {@code -1} leaves it (UTIME_OMIT). */
  int setModificationTime(String path, long ms) throws StrataException {
    if (ms < 0) {
      return 0;
    }
    return setAttribute(path, SetAttributeOptions.defaults().modificationTimeMs(ms));
  }

  private int setAttribute(String path, SetAttributeOptions options) throws StrataException {
    long mark = metadata.mark();
    try {
      metadata.put(path, fs.setAttribute(path, options), mark);
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    return 0;
  }

  private static StrataException asStrata(String path, IOException e) {
    return e instanceof StrataException se ? se
        : new StrataException(ErrorCode.INTERNAL, "Cannot write " + path + ": " + e, e);
  }
}
