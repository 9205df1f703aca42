package io.strata.fuse;

import io.strata.client.CloseableIterator;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.common.PathNames;
import io.strata.common.conf.ConfigType;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;
import jnr.ffi.Pointer;
import jnr.ffi.types.mode_t;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.ErrorCodes;
import ru.serce.jnrfuse.FuseFillDir;
import ru.serce.jnrfuse.FuseStubFS;
import ru.serce.jnrfuse.struct.FileStat;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * A read-only FUSE file system over a Strata namespace directory: the mount's root is the
 * namespace path given at construction, and every file below it reads through the Strata client.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>All open handles of one file share one {@link FileInStream} (see {@link OpenFileTable});
 *       a read is a positioned read of exactly the range the kernel asked for, and takes no lock
 *       that would make readers of one file wait for each other.
 *   <li>Directory listings stream from the master page by page straight into the kernel's
 *       buffer; the listing is closed however the call ends.
 *   <li>Every call that would change the namespace or a file answers EROFS at once.
 *   <li>A missing path answers ENOENT; an unreachable cluster answers EIO and logs a line.
 *   <li>getattr, access and open answer from the {@link MetadataCache}, so a status (or a
 *       path's absence) is at most the cache's TTL old; listings refresh the cache's entries of
 *       the children they return.
 *   <li>An open sets {@code keep_cache}, so the kernel keeps the pages it cached of the file,
 *       only when the file has the same id, length and modification time as at its previous
 *       open on this mount; otherwise the kernel drops them and reads again.
 * </ul>
 * Ownership is that of the mounting user for now; mode bits and times come from the namespace.
 */
public final class StrataFuseFileSystem extends FuseStubFS {
  private static final Logger LOG = LoggerFactory.getLogger(StrataFuseFileSystem.class);
  private static final int O_ACCMODE = 3;
  private static final int O_RDONLY = 0;
  private static final int W_OK = 2;
  private static final long STATFS_BLOCK = 4096;
  // libfuse 2's struct fuse_file_info on 64-bit Linux keeps its flag bits (direct_io bit 0,
  // keep_cache bit 1, ...) in the 32-bit word at byte 20; jnr-fuse maps them as separate bytes
  // at 16..20, so the bit is set in the struct's memory directly.
  private static final long FLAG_WORD_OFFSET = 20;
  private static final int KEEP_CACHE_BIT = 1 << 1;

  private final FileSystem fs;
  private final String root;
  private final long uid;
  private final long gid;
  private final MetadataCache metadata;
  private final FileVersions versions;
  private final OpenFileTable<FileInStream> openFiles = new OpenFileTable<>();
  private final LongAdder readCalls = new LongAdder();
  private final LongAdder getattrCalls = new LongAdder();

  /**
   * @param fs the client every call goes through; the caller closes it after unmounting
   * @param root the namespace directory shown at the mount point
   * @param uid owner reported for every file and directory
   * @param gid group reported for every file and directory
   * @param metadata the statuses getattr, access and open answer from
   * @param maxFiles most files whose last opened version is remembered for keep_cache
   */
  public StrataFuseFileSystem(FileSystem fs, String root, long uid, long gid,
      MetadataCache metadata, long maxFiles) {
    this.fs = fs;
    this.root = root;
    this.uid = uid;
    this.gid = gid;
    this.metadata = metadata;
    this.versions = new FileVersions(maxFiles);
  }

  /**
   * A file system whose files are owned by the user running this process, with the metadata
   * cache the configuration describes ({@code strata.fuse.metadata.cache.*}).
   */
  public static StrataFuseFileSystem ownedByCurrentUser(FileSystem fs, String root,
      StrataConfig conf) {
    int size = conf.getInt(FuseKeys.METADATA_CACHE_SIZE);
    return ownedByCurrentUser(fs, root, new MetadataCache(fs::getStatus,
        conf.getDuration(FuseKeys.METADATA_CACHE_TTL), size), size);
  }

  /** A file system whose files are owned by the user running this process. */
  public static StrataFuseFileSystem ownedByCurrentUser(FileSystem fs, String root,
      MetadataCache metadata, long maxFiles) {
    com.sun.security.auth.module.UnixSystem user = new com.sun.security.auth.module.UnixSystem();
    return new StrataFuseFileSystem(fs, root, user.getUid(), user.getGid(), metadata, maxFiles);
  }

  /** A file system with the metadata cache's default TTL and size. */
  public static StrataFuseFileSystem ownedByCurrentUser(FileSystem fs, String root) {
    int size = Integer.parseInt(FuseKeys.METADATA_CACHE_SIZE.defaultValue());
    Duration ttl = ConfigType.parseDuration(FuseKeys.METADATA_CACHE_TTL.defaultValue());
    return ownedByCurrentUser(fs, root, new MetadataCache(fs::getStatus, ttl, size), size);
  }

  /** The namespace path behind a path of the mount ({@code "/"} is the root). */
  String namespacePath(String mountPath) {
    if (mountPath == null || mountPath.isEmpty() || mountPath.equals("/")) {
      return root;
    }
    return root.equals(PathNames.ROOT) ? mountPath : root + mountPath;
  }

  /** How many files have a shared reader open (for tests and status). */
  int openFileCount() {
    return openFiles.size();
  }

  /** How many handles share the reader of a file. */
  int handleCount(long fileId) {
    return openFiles.references(fileId);
  }

  /** How many read upcalls this file system has served (for tests). */
  long readCalls() {
    return readCalls.sum();
  }

  /** How many getattr upcalls (lookups included) this file system has served (for tests). */
  long getattrCalls() {
    return getattrCalls.sum();
  }

  @Override
  protected String getFSName() {
    return "strata";
  }

  @Override
  public int getattr(String path, FileStat stat) {
    getattrCalls.increment();
    String p = namespacePath(path);
    try {
      fillStat(metadata.get(p), stat);
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("getattr", p, e);
    }
  }

  private void fillStat(FileInfo info, FileStat stat) {
    int perms = info.getMode() & 07777;
    if (info.getDirectory()) {
      stat.st_mode.set(FileStat.S_IFDIR | (perms == 0 ? 0755 : perms));
      stat.st_nlink.set(2);
    } else {
      stat.st_mode.set(FileStat.S_IFREG | (perms == 0 ? 0644 : perms));
      stat.st_nlink.set(1);
      stat.st_size.set(info.getLength());
      stat.st_blocks.set((info.getLength() + 511) / 512);
    }
    stat.st_blksize.set(STATFS_BLOCK);
    stat.st_uid.set(uid);
    stat.st_gid.set(gid);
    long ms = info.getModificationTimeMs();
    setTime(stat.st_mtim, ms);
    setTime(stat.st_ctim, ms);
    setTime(stat.st_atim, ms);
  }

  private static void setTime(Timespec t, long ms) {
    t.tv_sec.set(Math.floorDiv(ms, 1000));
    t.tv_nsec.set(Math.floorMod(ms, 1000) * 1_000_000L);
  }

  @Override
  public int access(String path, int mask) {
    String p = namespacePath(path);
    if ((mask & W_OK) != 0) {
      return -ErrorCodes.EROFS();
    }
    try {
      metadata.get(p);
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("access", p, e);
    }
  }

  @Override
  public int readdir(String path, Pointer buf, FuseFillDir filler, @off_t long offset,
      FuseFileInfo fi) {
    String p = namespacePath(path);
    // Offset 0 for every entry: libfuse keeps the entries in its own buffer and serves the
    // kernel's successive calls from it, so the listing is walked once, as it streams in.
    filler.apply(buf, ".", null, 0);
    filler.apply(buf, "..", null, 0);
    try (CloseableIterator<FileInfo> children = fs.listStatus(p)) {
      while (children.hasNext()) {
        FileInfo child = children.next();
        metadata.put(childPath(p, child.getName()), child);
        if (filler.apply(buf, child.getName(), null, 0) != 0) {
          return -ErrorCodes.ENOMEM();
        }
      }
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("readdir", p, e);
    }
  }

  @Override
  public int open(String path, FuseFileInfo fi) {
    String p = namespacePath(path);
    if ((fi.flags.get() & O_ACCMODE) != O_RDONLY) {
      return -ErrorCodes.EROFS();
    }
    try {
      FileInfo info = metadata.get(p);
      if (info.getDirectory()) {
        return -ErrorCodes.EISDIR();
      }
      openFiles.acquire(info.getFileId(), () -> fs.openFile(p));
      fi.fh.set(info.getFileId());
      if (versions.openedUnchanged(p, info)) {
        setKeepCache(fi);
      }
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("open", p, e);
    }
  }

  private static String childPath(String dir, String name) {
    return dir.equals(PathNames.ROOT) ? "/" + name : dir + "/" + name;
  }

  private static void setKeepCache(FuseFileInfo fi) {
    Pointer mem = jnr.ffi.Struct.getMemory(fi);
    mem.putInt(FLAG_WORD_OFFSET, mem.getInt(FLAG_WORD_OFFSET) | KEEP_CACHE_BIT);
  }

  @Override
  public int read(String path, Pointer buf, @size_t long size, @off_t long offset,
      FuseFileInfo fi) {
    readCalls.increment();
    FileInStream in = openFiles.reader(fi.fh.get());
    if (in == null) {
      return -ErrorCodes.EBADF();
    }
    if (size <= 0 || offset >= in.length()) {
      return 0;
    }
    int want = (int) Math.min(size, in.length() - offset);
    byte[] bytes = new byte[want];
    try {
      int n = in.read(offset, bytes, 0, want);
      if (n <= 0) {
        return 0;
      }
      buf.put(0, bytes, 0, n);
      return n;
    } catch (Exception e) {
      return FuseErrors.toErrno("read", namespacePath(path), e);
    }
  }

  @Override
  public int release(String path, FuseFileInfo fi) {
    try {
      openFiles.release(fi.fh.get());
    } catch (IOException e) {
      LOG.warn("Closing the reader of {} failed: {}", namespacePath(path), e.toString());
    }
    return 0;
  }

  @Override
  public int statfs(String path, Statvfs stat) {
    long capacity = 0;
    long used = 0;
    try {
      for (WorkerInfo w : fs.getWorkers()) {
        if (w.getState() != WorkerState.WORKER_LIVE) {
          continue;
        }
        for (TierUsage t : w.getTiersList()) {
          capacity += t.getCapacityBytes();
          used += t.getUsedBytes();
        }
      }
    } catch (Exception e) {
      return FuseErrors.toErrno("statfs", namespacePath(path), e);
    }
    long free = Math.max(0, capacity - used);
    stat.f_bsize.set(STATFS_BLOCK);
    stat.f_frsize.set(STATFS_BLOCK);
    stat.f_blocks.set(capacity / STATFS_BLOCK);
    stat.f_bfree.set(free / STATFS_BLOCK);
    stat.f_bavail.set(free / STATFS_BLOCK);
    stat.f_namemax.set(255);
    return 0;
  }

  // Everything below changes the namespace or a file: a later slice adds writes.

  @Override
  public int create(String path, @mode_t long mode, FuseFileInfo fi) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int mknod(String path, @mode_t long mode, long rdev) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int write(String path, Pointer buf, @size_t long size, @off_t long offset,
      FuseFileInfo fi) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int mkdir(String path, @mode_t long mode) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int unlink(String path) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int rmdir(String path) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int rename(String oldpath, String newpath) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int truncate(String path, @off_t long size) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int chmod(String path, @mode_t long mode) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int chown(String path, long uid, long gid) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int symlink(String oldpath, String newpath) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int link(String oldpath, String newpath) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int utimens(String path, Timespec[] timespec) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int setxattr(String path, String name, Pointer value, @size_t long size, int flags) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int removexattr(String path, String name) {
    return -ErrorCodes.EROFS();
  }

  @Override
  public int fallocate(String path, int mode, @off_t long off, @off_t long length,
      FuseFileInfo fi) {
    return -ErrorCodes.EROFS();
  }
}
