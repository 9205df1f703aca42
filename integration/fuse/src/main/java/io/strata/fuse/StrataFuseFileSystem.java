package io.strata.fuse;

import com.google.protobuf.ByteString;
import com.kenai.jffi.MemoryIO;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.CloseableIterator;
import io.strata.client.FileCompletion;
import io.strata.client.FileSystem;
import io.strata.client.NamespaceWatch;
import io.strata.client.SyncOption;
import io.strata.common.DaemonThreads;
import io.strata.common.PathNames;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
import ru.serce.jnrfuse.struct.FuseContext;
import ru.serce.jnrfuse.struct.FuseFileInfo;
import ru.serce.jnrfuse.struct.FuseOperations;
import ru.serce.jnrfuse.struct.Statvfs;
import ru.serce.jnrfuse.struct.Timespec;

/**
 * A FUSE file system over a Strata namespace directory: the mount's root is the namespace path
 * given at construction; files read through the Strata client and new files are written through it
 * to the under store.
 *
 * <p>Guarantees:
 *
 * <ul>
 *   <li>All open handles of one file share one {@link CachedFileReader} (see {@link OpenFileTable})
 *       and its pages; a read takes no lock that would make readers of one file wait for each
 *       other. Each handle keeps its own access pattern, so a handle reading sequentially gets
 *       read-ahead while one reading at random offsets fetches exactly what it asks.
 *   <li>Directory listings stream from the master page by page straight into the kernel's buffer;
 *       the listing is closed however the call ends.
 *   <li>Changes (create and sequential write, mkdir, unlink, rmdir, rename, chmod, chown, utimens,
 *       truncate to 0) go to the master at once, see {@link MountWrites}; what Strata cannot do
 *       answers EOPNOTSUPP or EPERM.
 *   <li>A missing path answers ENOENT; an unreachable cluster answers EIO and logs a line.
 *   <li>getattr, access and open answer from the {@link MetadataCache}: a status stays until the
 *       master's change stream says it changed (a path's absence, and every status while the stream
 *       is down, for the cache's TTL at most); this mount's own changes are seen at once. Directory
 *       listings bring each file's blocks, so opening and reading a listed file makes no master
 *       call, and a lookup in a folder not listed yet lists it once.
 *   <li>A changed path is also dropped from the kernel's caches ({@link KernelEntries}), so a
 *       change made through another client shows through this mount within the stream's delay,
 *       whatever the kernel's attribute and entry timeouts.
 *   <li>A read of a range in a local worker's block file goes straight into libfuse's reply buffer,
 *       with no call to the worker and one copy.
 *   <li>An open sets {@code keep_cache}, so the kernel keeps the pages it cached of the file, only
 *       when the file has the same id, length and modification time as at its previous open on this
 *       mount; otherwise the kernel drops them and reads again.
 *   <li>Owner, group and mode come from the namespace, translated to this machine's ids by {@link
 *       UserNames}; the kernel checks permissions against them ({@code default_permissions}, see
 *       {@link MountOptions}).
 * </ul>
 */
public final class StrataFuseFileSystem extends FuseStubFS {
  private static final Logger LOG = LoggerFactory.getLogger(StrataFuseFileSystem.class);
  private static final long STATFS_BLOCK = 4096;

  /** Native memory access, to hand libfuse's reply buffers to Java as direct buffers. */
  private static final MemoryIO MEMORY = MemoryIO.getInstance();

  /** Largest read buffer an upcall thread keeps: libfuse 2 asks at most 128 KiB a read. */
  private static final int KEPT_READ_BUFFER = 128 << 10;

  private static final int S_IFMT = 0170000;

  /** The extended attributes the mount shows: the namespace's "user." ones. */
  private static final String USER_XATTRS = "user.";

  /**
   * Kernel invalidations that may wait to be sent before the backlog is replaced by one of
   * everything.
   */
  private static final int KERNEL_QUEUE = 65_536;

  private static final int S_IFREG = 0100000;
  // libfuse 2's struct fuse_file_info on 64-bit Linux keeps its flag bits (direct_io bit 0,
  // keep_cache bit 1, ...) in the 32-bit word at byte 20; jnr-fuse maps them as separate bytes
  // at 16..20, so the bit is set in the struct's memory directly.
  private static final long FLAG_WORD_OFFSET = 20;
  private static final int KEEP_CACHE_BIT = 1 << 1;
  // utimensat(2)'s special nanosecond values.
  private static final long UTIME_NOW = (1L << 30) - 1;
  private static final long UTIME_OMIT = (1L << 30) - 2;
  // libfuse 2.9's struct fuse_operations on 64-bit Linux: 38 function pointers (getattr to
  // bmap), the flag bits in the unsigned int after them, then six more pointers.
  private static final int FLAGS_OFFSET = 38 * 8;
  private static final int OPERATIONS_SIZE = FLAGS_OFFSET + 8 + 6 * 8;
  // libfuse 2's fuse_operations flag bits (the unsigned int after bmap).
  private static final int FLAG_NULLPATH_OK = 1;
  private static final int FLAG_UTIME_OMIT_OK = 1 << 2;

  /** The longest name Linux file systems take (NAME_MAX); the kernel lets FUSE names reach 1024. */
  private static final int NAME_MAX = 255;

  /** Names libfuse gives files unlinked while open (kept until their last handle goes). */
  private static final String HIDDEN_PREFIX = MountWrites.HIDDEN_PREFIX;

  private static final int FALLOC_FL_KEEP_SIZE = 1;
  private static final int O_TRUNC = 01000;
  private static final int XATTR_CREATE = 1;
  private static final int XATTR_REPLACE = 2;

  /** Largest extended attribute value Linux takes (XATTR_SIZE_MAX). */
  private static final int XATTR_SIZE_MAX = 65536;

  private static final java.util.List<String> XATTR_NAMESPACES =
      java.util.List.of("user.", "trusted.", "security.", "system.");

  /**
   * A handle opened for reading: the shared reader of the version it opened, and the file's inode
   * number, by which reads find a staged copy this mount began writing since.
   */
  private record ReadHandle(
      long fileId, long inode, CachedFileReader reader, ReadPattern pattern) {}

  private final FileSystem fs;
  private final String root;
  private final MountPaths paths;
  private final MetadataCache metadata;
  private final KernelEntries kernel;
  private final MountResources resources;
  private final FileVersions versions;
  private final UserNames names;
  private final ReadSettings reads;
  private final MountWrites writes;
  private final Aliases aliases;
  private final OpenFileTable<CachedFileReader> openFiles = new OpenFileTable<>();
  private final HandleTable<Object> handles = new HandleTable<>();
  private final ThreadLocal<byte[]> readBuffers = ThreadLocal.withInitial(() -> new byte[0]);
  private final LongAdder readCalls = new LongAdder();
  private final LongAdder getattrCalls = new LongAdder();
  private final Timer readTime;
  private final Timer writeTime;
  private final Timer getattrTime;
  private final Timer openTime;
  private final MeterRegistry registry;

  /** Timers of the other upcalls, by operation, made at their first call. */
  private final java.util.concurrent.ConcurrentMap<String, Timer> otherTimes =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * @param fs the client every call goes through; the caller closes it after unmounting
   * @param root the namespace directory shown at the mount point
   * @param metadata the statuses getattr, access and open answer from
   * @param maxFiles most files whose last opened version is remembered for keep_cache
   * @param names how owner and group names map to this machine's ids
   * @param reads the page cache and read-ahead every file's reader uses
   * @param registry where the upcall timers go
   */
  StrataFuseFileSystem(
      FileSystem fs,
      String root,
      MetadataCache metadata,
      long maxFiles,
      UserNames names,
      ReadSettings reads,
      StagingArea staging,
      MeterRegistry registry) {
    this(
        fs,
        root,
        metadata,
        new KernelEntries(2 * Math.max(1, maxFiles), KERNEL_QUEUE),
        MountResources.NONE,
        maxFiles,
        names,
        reads,
        staging,
        registry);
  }

  private StrataFuseFileSystem(
      FileSystem fs,
      String root,
      MetadataCache metadata,
      KernelEntries kernel,
      MountResources resources,
      long maxFiles,
      UserNames names,
      ReadSettings reads,
      StagingArea staging,
      MeterRegistry registry) {
    this.fs = fs;
    this.root = root;
    this.paths = new MountPaths(root);
    this.metadata = metadata;
    this.kernel = kernel;
    this.resources = resources;
    this.versions = new FileVersions(maxFiles);
    this.names = names;
    this.reads = reads;
    this.aliases = new Aliases(maxFiles);
    this.writes = new MountWrites(fs, metadata, names, staging, aliases, kernel, paths, registry);
    this.registry = registry;
    setOperationFlags();
    this.readTime = upcallTimer(registry, "read");
    this.writeTime = upcallTimer(registry, "write");
    this.getattrTime = upcallTimer(registry, "getattr");
    this.openTime = upcallTimer(registry, "open");
    registerMetadataMeters(registry);
    registerStagingMeters(registry, staging);
  }

  /**
   * Sets libfuse's flag bits in the operations table (jnr-fuse maps them as padding): the handle
   * operations of a file whose path is gone may be called without one ({@code flag_nullpath_ok}),
   * and utimens gets UTIME_OMIT for a time left as it is rather than libfuse dropping a change of
   * only one of the two times ({@code flag_utime_omit_ok}). libfuse copies the table, flags
   * included, when the mount is set up.
   */
  private void setOperationFlags() {
    if (jnr.ffi.Struct.size(fuseOperations) != OPERATIONS_SIZE) {
      LOG.warn(
          "The FUSE operations table is {} bytes, not the {} of libfuse 2.9 on 64-bit"
              + " Linux: its flags are left unset (utimens of one time only is then dropped)",
          jnr.ffi.Struct.size(fuseOperations),
          OPERATIONS_SIZE);
      return;
    }
    Pointer table = jnr.ffi.Struct.getMemory(fuseOperations);
    table.putInt(FLAGS_OFFSET, table.getInt(FLAGS_OFFSET) | FLAG_NULLPATH_OK | FLAG_UTIME_OMIT_OK);
  }

  private static void registerStagingMeters(MeterRegistry registry, StagingArea staging) {
    Gauge.builder(MetricNames.FUSE_STAGING_BYTES, staging, StagingArea::heldBytes)
        .description(
            "Bytes the mount's staged copies of files open for writing hold on"
                + " local disk (written, not yet written through)")
        .register(registry);
    Gauge.builder(MetricNames.FUSE_STAGING_FILES, staging, StagingArea::fileCount)
        .description("Files open for writing through the mount, each with a staged copy")
        .register(registry);
  }

  private void registerMetadataMeters(MeterRegistry registry) {
    FunctionCounter.builder(MetricNames.FUSE_METADATA_HITS, metadata, MetadataCache::hits)
        .description("Lookups, getattr and opens answered from the mount's metadata cache")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_LOADS, metadata, MetadataCache::loads)
        .description("Statuses asked of the master one path at a time")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_LISTINGS, metadata, MetadataCache::listings)
        .description("Folder listings put into the metadata cache (readdir and lookups)")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_CHANGES, metadata, MetadataCache::notices)
        .description("Change notices received from the master's change stream")
        .register(registry);
    Gauge.builder(MetricNames.FUSE_METADATA_WATCH, metadata, m -> m.watchLive() ? 1 : 0)
        .description(
            "1 while the master's change stream is in step, 0 while entries are held"
                + " to the metadata TTL")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_KERNEL_INVALIDATIONS, kernel, KernelEntries::sent)
        .description("Names and nodes dropped from the kernel's caches on change notices")
        .register(registry);
  }

  private static Timer upcallTimer(MeterRegistry registry, String operation) {
    return Timer.builder(MetricNames.FUSE_UPCALL)
        .tag(MetricNames.TAG_OPERATION, operation)
        .description("Time the mount's code spends answering one FUSE upcall")
        .register(registry);
  }

  /**
   * The file system a mount process serves: metadata cache, page cache and read-ahead as the
   * configuration describes ({@code strata.fuse.*}), meters registered in {@code registry}. Names
   * the namespace does not know map to the user running this process.
   */
  public static StrataFuseFileSystem create(
      FileSystem fs, String root, StrataConfig conf, MeterRegistry registry)
      throws StrataException {
    return create(fs, root, conf, registry, (String) null);
  }

  /**
   * As {@link #create(FileSystem, String, StrataConfig, MeterRegistry)}, for a mount at {@code
   * mountPoint}: its staged copies live in a folder of the staging folder named after the mount
   * point, where a restarted mount finds (and reports) what an earlier run left. A null mount point
   * gets a folder of its own for this process.
   */
  public static StrataFuseFileSystem create(
      FileSystem fs, String root, StrataConfig conf, MeterRegistry registry, String mountPoint)
      throws StrataException {
    int size = conf.getInt(FuseKeys.METADATA_CACHE_SIZE);
    int listThreads = conf.getInt(FuseKeys.METADATA_LIST_THREADS);
    ExecutorService listings =
        listThreads <= 0
            ? null
            : Executors.newFixedThreadPool(
                listThreads, DaemonThreads.numbered("strata-fuse-listing-"));
    MetadataCache metadata =
        new MetadataCache(
            path -> fs.getStatus(path, SyncOption.DEFAULT, true),
            listings == null ? null : fs::listLoadedStatus,
            listings == null ? Runnable::run : listings,
            conf.getDuration(FuseKeys.METADATA_CACHE_TTL),
            size);
    return create(fs, root, conf, registry, metadata, listings, mountPoint);
  }

  /**
   * As {@link #create(FileSystem, String, StrataConfig, MeterRegistry)}, with this metadata cache.
   */
  public static StrataFuseFileSystem create(
      FileSystem fs, String root, StrataConfig conf, MeterRegistry registry, MetadataCache metadata)
      throws StrataException {
    return create(fs, root, conf, registry, metadata, null, null);
  }

  /** The staged copies' folder of a mount: one per mount point, or per process without one. */
  static Path stagingDir(StrataConfig conf, String mountPoint) {
    Path base = Path.of(conf.getString(FuseKeys.WRITE_STAGING_DIR));
    String name =
        mountPoint != null
            ? mountPoint.replaceAll("[^A-Za-z0-9._-]", "_")
            : "process-" + ProcessHandle.current().pid() + "-" + STAGING_FOLDERS.incrementAndGet();
    return base.resolve(name);
  }

  private static final java.util.concurrent.atomic.AtomicInteger STAGING_FOLDERS =
      new java.util.concurrent.atomic.AtomicInteger();

  private static StrataFuseFileSystem create(
      FileSystem fs,
      String root,
      StrataConfig conf,
      MeterRegistry registry,
      MetadataCache metadata,
      ExecutorService listings,
      String mountPoint)
      throws StrataException {
    StagingArea staging;
    Path stagingDir = stagingDir(conf, mountPoint);
    try {
      staging = new StagingArea(stagingDir, conf.getBytes(FuseKeys.WRITE_STAGING_MAX_SIZE));
    } catch (IOException e) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          "Cannot use "
              + stagingDir
              + " for the mount's staged writes ("
              + e.getMessage()
              + "): set"
              + " strata.fuse.write.staging.dir to a writable local folder",
          e);
    }
    staging.reportLeftovers();
    com.sun.security.auth.module.UnixSystem user = new com.sun.security.auth.module.UnixSystem();
    int size = conf.getInt(FuseKeys.METADATA_CACHE_SIZE);
    KernelEntries kernel = new KernelEntries(2L * Math.max(1, size), KERNEL_QUEUE);
    // Until the change stream is in step (and for good without it), the kernel's answers are
    // dropped as often as the mount's own expire.
    kernel.holdTo(conf.getDuration(FuseKeys.METADATA_CACHE_TTL));
    NamespaceWatch watch =
        conf.getBoolean(FuseKeys.METADATA_WATCH) && metadata.enabled()
            ? fs.watchChanges(
                new ChangeRelay(
                    root,
                    metadata,
                    kernel,
                    conf.getDuration(FuseKeys.METADATA_CACHE_TTL),
                    fs.clientId()))
            : null;
    return new StrataFuseFileSystem(
        fs,
        root,
        metadata,
        kernel,
        new MountResources(watch, listings),
        size,
        UserNames.ofThisMachine(user.getUid(), user.getGid()),
        ReadSettings.from(conf, registry),
        staging,
        registry);
  }

  /** What a mount process's file system owns besides its caches, closed with it. */
  private record MountResources(NamespaceWatch watch, ExecutorService listings) {
    static final MountResources NONE = new MountResources(null, null);

    void close() {
      if (watch != null) {
        watch.close();
      }
      if (listings != null) {
        listings.shutdownNow();
      }
    }
  }

  /**
   * Makes the calls every first access needs before the mount serves any: the root's status (into
   * the metadata cache) and the live workers (the list reads choose from). A fresh process pays for
   * its first master calls (the connection, and loading and compiling the classes on that path)
   * once, about 100 ms on a 2-core machine; paid here, before the kernel lists the mount, it is not
   * added to the first file a job opens. A failure is only logged: the first access asks again and
   * reports it.
   */
  void warmUp() {
    try {
      metadata.get(root);
      fs.getWorkers();
    } catch (Exception e) {
      LOG.debug(
          "Warming up the mount of {} failed; its first access asks again: {}", root, e.toString());
    }
  }

  /** The kernel's caches this file system can invalidate (its mount attaches to them). */
  KernelEntries kernelEntries() {
    return kernel;
  }

  /** The metadata cache (for tests). */
  MetadataCache metadata() {
    return metadata;
  }

  /** A file system on the default configuration, with its meters in a registry of its own. */
  public static StrataFuseFileSystem create(FileSystem fs, String root) throws StrataException {
    return create(fs, root, StrataConfig.load(Map.of()), new SimpleMeterRegistry());
  }

  /** The namespace path behind a path of the mount ({@code "/"} is the root). */
  String namespacePath(String mountPath) {
    return paths.toNamespace(mountPath);
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

  /** Stops read-ahead, the change stream and listings; called after unmounting. */
  void shutdown() {
    resources.close();
    kernel.close();
    reads.close();
  }

  @Override
  protected String getFSName() {
    return name();
  }

  /** The file system's name: the mount's type in /proc/mounts is {@code fuse.NAME}. */
  String name() {
    return "strata";
  }

  /** The table of callbacks libfuse calls, for a mount served by {@link UpcallThreads}. */
  FuseOperations operations() {
    return fuseOperations;
  }

  private Caller caller() {
    FuseContext c = getContext();
    return new Caller(c.uid.get(), c.gid.get(), c.pid.longValue());
  }

  @Override
  public int getattr(String path, FileStat stat) {
    getattrCalls.increment();
    long start = System.nanoTime();
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      if (tooLong(path)) {
        return -ErrorCodes.ENAMETOOLONG();
      }
      FileInfo info = metadata.get(p);
      fillStat(info, stat, writes.staged(info));
      if (info.getLinkCount() > 1 && !info.getDirectory()) {
        aliases.seen(MountWrites.inodeOf(info), p);
      }
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("getattr", p, e);
    } finally {
      getattrTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  /** fstat(2) of an open file: what its handle sees (its staged copy, when it has one). */
  @Override
  public int fgetattr(String path, FileStat stat, FuseFileInfo fi) {
    Object handle = handles.get(fi.fh.get());
    if (handle instanceof WriteHandle w && path == null) {
      try {
        fillStat(metadata.get(w.path()), stat, w.file());
        return 0;
      } catch (Exception e) {
        return FuseErrors.toErrno("fgetattr", w.path(), e);
      }
    }
    return getattr(path, stat);
  }

  /** Whether a name of the path is longer than NAME_MAX, which the kernel does not check. */
  private static boolean tooLong(String mountPath) {
    if (mountPath == null) {
      return false;
    }
    int at = mountPath.lastIndexOf('/');
    String name = mountPath.substring(at + 1);
    return name.length() > NAME_MAX / 4
        && name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > NAME_MAX;
  }

  /** Remembers which kernel node the request being handled names, for later invalidation. */
  private void noteKernelNode(String mountPath) {
    UpcallThreads.Request r = UpcallThreads.current();
    if (r != null) {
      String path = mountPath == null || mountPath.isEmpty() ? PathNames.ROOT : mountPath;
      kernel.seen(path, r.opcode, r.node);
      // The answer's entry names this path: its node id is learnt when the answer is sent.
      r.entryPath = path;
    }
  }

  /**
   * The attributes of a file as stat(2) shows them: the namespace's status, with what this mount's
   * staged copy of it holds (its length, times and attributes set while it is not written through
   * yet). The names libfuse gave a file unlinked while open do not count in its link count, as on a
   * local disk.
   */
  private void fillStat(FileInfo info, FileStat stat, StagedFile staged) {
    FileCompletion pending = staged == null ? FileCompletion.NONE : staged.pendingAttributes();
    int perms = (pending.mode() != null ? pending.mode() : info.getMode()) & 07777;
    long nlink = info.getLinkCount();
    if (info.getDirectory()) {
      stat.st_mode.set(FileStat.S_IFDIR | perms);
      stat.st_nlink.set(nlink > 0 ? nlink : 2);
      stat.st_size.set(4096);
      stat.st_blocks.set(8);
    } else {
      long length = staged != null ? staged.length() : info.getLength();
      stat.st_mode.set(typeBits(info.getFileType()) | perms);
      long names = (nlink > 0 ? nlink : 1) - writes.hiddenNames(MountWrites.inodeOf(info));
      stat.st_nlink.set(staged != null && staged.isUnlinked() ? names - 1 : Math.max(0, names));
      stat.st_size.set(length);
      stat.st_blocks.set((length + 511) / 512);
      stat.st_rdev.set(info.getRdev());
    }
    stat.st_ino.set(writes.shownInode(info));
    stat.st_blksize.set(STATFS_BLOCK);
    stat.st_uid.set(names.uid(pending.owner() != null ? pending.owner() : info.getOwner()));
    stat.st_gid.set(names.gid(pending.group() != null ? pending.group() : info.getGroup()));
    // A copy with nothing of its own (open for writing, not written yet, or written through) has
    // the namespace's times: a time set meanwhile (touch -d: open, futimens, close) went to the
    // master, and is what stat shows at once.
    boolean ownTimes = staged != null && staged.dirty();
    long mtime = ownTimes ? staged.modificationNs() : StagedFile.modificationNs(info);
    long ctime =
        ownTimes
            ? Math.max(staged.changeNs(), StagedFile.changeNs(info))
            : StagedFile.changeNs(info);
    long atime =
        pending.accessTimeNs() != null
            ? pending.accessTimeNs()
            : info.hasAccessTimeNs() ? info.getAccessTimeNs() : mtime;
    setTime(stat.st_mtim, mtime);
    setTime(stat.st_ctim, ctime);
    setTime(stat.st_atim, atime);
  }

  private static int typeBits(FileType type) {
    return switch (type) {
      case FILE_TYPE_SYMLINK -> 0120000;
      case FILE_TYPE_FIFO -> MountWrites.S_IFIFO;
      case FILE_TYPE_SOCKET -> MountWrites.S_IFSOCK;
      case FILE_TYPE_CHAR_DEVICE -> MountWrites.S_IFCHR;
      case FILE_TYPE_BLOCK_DEVICE -> MountWrites.S_IFBLK;
      default -> S_IFREG;
    };
  }

  private static void setTime(Timespec t, long ns) {
    t.tv_sec.set(Math.floorDiv(ns, 1_000_000_000L));
    t.tv_nsec.set(Math.floorMod(ns, 1_000_000_000L));
  }

  @Override
  public int readlink(String path, Pointer buf, @size_t long size) {
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      FileInfo info = metadata.get(p);
      if (info.getFileType() != FileType.FILE_TYPE_SYMLINK) {
        return -ErrorCodes.EINVAL();
      }
      // libfuse wants a NUL-terminated string, cut to fit the buffer.
      byte[] target = info.getSymlinkTarget().getBytes(java.nio.charset.StandardCharsets.UTF_8);
      int n = (int) Math.min(target.length, Math.max(0, size - 1));
      buf.put(0, target, 0, n);
      buf.putByte(n, (byte) 0);
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("readlink", p, e);
    }
  }

  @Override
  public int access(String path, int mask) {
    // With default_permissions the kernel checks the mode bits itself; this only confirms the
    // path exists when the kernel asks.
    String p = namespacePath(path);
    try {
      metadata.get(p);
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("access", p, e);
    }
  }

  @Override
  public int readdir(
      String path, Pointer buf, FuseFillDir filler, @off_t long offset, FuseFileInfo fi) {
    String p = namespacePath(path);
    // Offset 0 for every entry: libfuse keeps the entries in its own buffer and serves the
    // kernel's successive calls from it, so the listing is walked once, as it streams in.
    noteKernelNode(path);
    filler.apply(buf, ".", null, 0);
    filler.apply(buf, "..", null, 0);
    MetadataCache.Listing listing = metadata.startListing(p);
    boolean whole = false;
    FileStat entry = new FileStat(jnr.ffi.Runtime.getSystemRuntime());
    // Files created here and not committed yet: listed after the master's names.
    List<FileInfo> pending = metadata.pendingCreates().in(p);
    Set<String> pendingNames = new HashSet<>();
    for (FileInfo f : pending) {
      pendingNames.add(f.getName());
    }
    try (CloseableIterator<FileInfo> children = fs.listStatus(p, SyncOption.DEFAULT, true)) {
      while (children.hasNext()) {
        FileInfo child = children.next();
        listing.add(child);
        if (!pendingNames.isEmpty() && pendingNames.remove(child.getName())) {
          // Taken at the master by another client meanwhile: this mount's file shows below.
          continue;
        }
        if (child.getName().startsWith(HIDDEN_PREFIX)) {
          // Unlinked while open: gone from the folder, as on any other file system.
          continue;
        }
        // The inode number and type, so that find and tar need no stat to tell the kind.
        entry.st_ino.set(writes.shownInode(child));
        entry.st_mode.set(child.getDirectory() ? FileStat.S_IFDIR : typeBits(child.getFileType()));
        if (filler.apply(buf, child.getName(), entry, 0) != 0) {
          return -ErrorCodes.ENOMEM();
        }
      }
      for (FileInfo f : pending) {
        entry.st_ino.set(MountWrites.inodeOf(f));
        entry.st_mode.set(S_IFREG);
        if (filler.apply(buf, f.getName(), entry, 0) != 0) {
          return -ErrorCodes.ENOMEM();
        }
      }
      whole = true;
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("readdir", p, e);
    } finally {
      listing.finish(whole);
    }
  }

  @Override
  public int open(String path, FuseFileInfo fi) {
    long start = System.nanoTime();
    try {
      return openTimed(path, fi);
    } finally {
      openTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  private int openTimed(String path, FuseFileInfo fi) {
    String p = namespacePath(path);
    int flags = fi.flags.get();
    noteKernelNode(path);
    try {
      FileInfo info = metadata.get(p);
      if (info.getDirectory()) {
        return -ErrorCodes.EISDIR();
      }
      if (MountWrites.writes(flags) || (flags & O_TRUNC) != 0) {
        // O_RDONLY|O_TRUNC truncates too, as Linux does (the kernel checked write permission).
        WriteHandle w = writes.openForWrite(p, info, flags);
        if ((flags & O_TRUNC) != 0) {
          writes.written(w, caller());
        }
        fi.fh.set(handles.add(w));
        return 0;
      }
      if (writes.staged(info) != null) {
        // A file this mount is writing: read what its copy holds, through a handle of its own.
        fi.fh.set(handles.add(writes.openForWrite(p, info, flags)));
        return 0;
      }
      if (!info.getComplete()) {
        return -ErrorCodes.EBUSY();
      }
      long fileId = info.getFileId();
      // The stream is made at the first read that reaches the mount, from the status the
      // cache holds (with the file's blocks when a listing or lookup brought them): no master
      // call. A status that turns out stale shows as ESTALE at a read (see readTimed).
      CachedFileReader reader =
          openFiles.acquire(
              fileId,
              () ->
                  reads.open(
                      fileId,
                      new LazyFileSource(
                          p,
                          fileId,
                          info.getLength(),
                          () -> LazyFileSource.Opened.of(fs.openFile(info)))));
      fi.fh.set(
          handles.add(
              new ReadHandle(fileId, MountWrites.inodeOf(info), reader, reads.newPattern())));
      if (versions.openedUnchanged(p, info)) {
        setKeepCache(fi);
      }
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("open", p, e);
    }
  }

  private static void setKeepCache(FuseFileInfo fi) {
    Pointer mem = jnr.ffi.Struct.getMemory(fi);
    mem.putInt(FLAG_WORD_OFFSET, mem.getInt(FLAG_WORD_OFFSET) | KEEP_CACHE_BIT);
  }

  @Override
  public int read(
      String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
    readCalls.increment();
    long start = System.nanoTime();
    try {
      return readTimed(path, buf, size, offset, fi);
    } finally {
      readTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  private int readTimed(String path, Pointer buf, long size, long offset, FuseFileInfo fi) {
    Object handle = handles.get(fi.fh.get());
    if (handle instanceof WriteHandle w) {
      return readStaged(w.file(), buf, size, offset);
    }
    if (!(handle instanceof ReadHandle h)) {
      return -ErrorCodes.EBADF();
    }
    StagedFile staged = writes.staging().get(h.inode);
    if (staged != null) {
      // Opened before this mount began writing the file: it reads what was written since.
      return readStaged(staged, buf, size, offset);
    }
    long length = h.reader.length();
    if (size <= 0 || offset >= length) {
      return 0;
    }
    int want = (int) Math.min(size, length - offset);
    try {
      // A range in a local worker's block file goes straight into libfuse's reply buffer.
      int local = h.reader.readLocally(offset, MEMORY.newDirectByteBuffer(buf.address(), want));
      if (local >= 0) {
        return local;
      }
    } catch (Exception e) {
      // Read it the other way, which reports what fails.
    }
    byte[] bytes = readBuffer(want);
    try {
      int n = h.reader.read(offset, bytes, 0, want, h.pattern);
      if (n <= 0) {
        return 0;
      }
      buf.put(0, bytes, 0, n);
      return n;
    } catch (Exception e) {
      String p = namespacePath(path);
      if (e instanceof StrataException se && se.code() == ErrorCode.STALE) {
        // The version this handle reads was replaced: the next open asks the master again.
        metadata.invalidate(p);
      }
      return FuseErrors.toErrno("read", p, e);
    }
  }

  private int readStaged(StagedFile file, Pointer buf, long size, long offset) {
    if (size <= 0) {
      return 0;
    }
    byte[] bytes = readBuffer((int) Math.min(size, Integer.MAX_VALUE));
    try {
      int n = file.read(offset, bytes, 0, (int) Math.min(size, bytes.length));
      if (n <= 0) {
        return 0;
      }
      buf.put(0, bytes, 0, n);
      return n;
    } catch (Exception e) {
      return FuseErrors.toErrno("read", file.path(), e);
    }
  }

  /**
   * A buffer of at least {@code size} bytes for one read upcall, kept by the calling thread. The
   * upcall threads live as long as the mount (see {@link UpcallThreads}), so after the first read
   * each answers every read from its own buffer instead of allocating one per read, which at a GB/s
   * of reads was a GB/s of garbage. Reads larger than {@link #KEPT_READ_BUFFER} get a buffer of
   * their own.
   */
  private byte[] readBuffer(int size) {
    if (size > KEPT_READ_BUFFER) {
      return new byte[size];
    }
    byte[] kept = readBuffers.get();
    if (kept.length < size) {
      kept = new byte[size];
      readBuffers.set(kept);
    }
    return kept;
  }

  @Override
  public int create(String path, @mode_t long mode, FuseFileInfo fi) {
    String p = namespacePath(path);
    if ((mode & S_IFMT) != 0 && (mode & S_IFMT) != S_IFREG) {
      return mknod(path, mode, 0);
    }
    if (tooLong(path)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    noteKernelNode(path);
    long start = System.nanoTime();
    try {
      fi.fh.set(handles.add(writes.create(p, mode, fi.flags.get(), caller())));
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("create", p, e);
    } finally {
      timed("create", start);
    }
  }

  @Override
  public int mknod(String path, @mode_t long mode, long rdev) {
    if (tooLong(path)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    noteKernelNode(path);
    Caller c = caller();
    return change("mknod", path, p -> writes.mknod(p, mode, rdev, c));
  }

  @Override
  public int write(
      String path, Pointer buf, @size_t long size, @off_t long offset, FuseFileInfo fi) {
    if (!(handles.get(fi.fh.get()) instanceof WriteHandle w)) {
      return -ErrorCodes.EBADF();
    }
    long start = System.nanoTime();
    try {
      int n = w.write(offset, MEMORY.newDirectByteBuffer(buf.address(), (int) size));
      writes.written(w, caller());
      return n;
    } catch (Exception e) {
      return FuseErrors.toErrno("write", w.path(), e);
    } finally {
      writeTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public int flush(String path, FuseFileInfo fi) {
    // flush comes with every close(2), which waits for it; release comes later,
    // asynchronously. So a file this handle changed is written through here, and a program
    // that closed it (cp, dd, tar) finds it in the cluster and the under store at once.
    if (handles.get(fi.fh.get()) instanceof WriteHandle w) {
      long start = System.nanoTime();
      try {
        writes.flush(w);
      } catch (Exception e) {
        LOG.warn(
            "Writing {} through at close failed; its staged copy is kept for another"
                + " try (fsync, close, or the last handle's release): {}",
            w.path(),
            e.toString());
        return FuseErrors.toErrno("close", w.path(), e);
      } finally {
        timed("flush", start);
      }
    }
    return 0;
  }

  @Override
  public int fsync(String path, int isdatasync, FuseFileInfo fi) {
    if (handles.get(fi.fh.get()) instanceof WriteHandle w) {
      long start = System.nanoTime();
      try {
        writes.fsync(w);
      } catch (Exception e) {
        return FuseErrors.toErrno("fsync", w.path(), e);
      } finally {
        timed("fsync", start);
      }
    }
    return 0;
  }

  @Override
  public int release(String path, FuseFileInfo fi) {
    Object handle = handles.remove(fi.fh.get());
    long start = System.nanoTime();
    try {
      if (handle instanceof ReadHandle h) {
        openFiles.release(h.fileId);
      } else if (handle instanceof WriteHandle w) {
        writes.release(w);
        timed("release", start);
      }
    } catch (IOException e) {
      // release's answer reaches no application; the failure is in the log.
      LOG.warn("Closing {} failed: {}", namespacePath(path), e.toString());
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
    stat.f_namemax.set(NAME_MAX);
    return 0;
  }

  /** Runs a namespace change and turns its failure into an errno. */
  @FunctionalInterface
  private interface Change {
    int run(String namespacePath) throws Exception;
  }

  private int change(String operation, String path, Change change) {
    String p = namespacePath(path);
    long start = System.nanoTime();
    try {
      return change.run(p);
    } catch (Exception e) {
      return FuseErrors.toErrno(operation, p, e);
    } finally {
      timed(operation, start);
    }
  }

  /** Records the time of one upcall of {@code operation} that began at {@code start}. */
  private void timed(String operation, long start) {
    otherTimes
        .computeIfAbsent(operation, op -> upcallTimer(registry, op))
        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
  }

  @Override
  public int mkdir(String path, @mode_t long mode) {
    if (tooLong(path)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    noteKernelNode(path);
    Caller c = caller();
    return change("mkdir", path, p -> writes.mkdir(p, mode, c));
  }

  @Override
  public int unlink(String path) {
    return change("unlink", path, writes::unlink);
  }

  @Override
  public int rmdir(String path) {
    return change("rmdir", path, writes::rmdir);
  }

  @Override
  public int rename(String oldpath, String newpath) {
    if (tooLong(newpath)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    String to = namespacePath(newpath);
    return change(
        "rename",
        oldpath,
        p -> {
          writes.rename(p, to);
          readersMoved(p, to);
          return 0;
        });
  }

  /**
   * Files this mount has open for reading at or below {@code from} now have names below {@code to}:
   * their readers fetch what is not cached by the new names (libfuse renames a file unlinked while
   * open to a hidden name, and its readers must go on reading it).
   */
  private void readersMoved(String from, String to) {
    String prefix = from + "/";
    openFiles.forEachReader(
        reader -> {
          if (reader.source() instanceof LazyFileSource lazy) {
            String p = lazy.path();
            if (p.equals(from) || p.startsWith(prefix)) {
              String now = to + p.substring(from.length());
              lazy.moved(
                  now,
                  () -> {
                    FileInfo status = fs.getStatus(now, SyncOption.DEFAULT, true);
                    return LazyFileSource.Opened.of(fs.openFile(status));
                  });
            }
          }
        });
  }

  @Override
  public int symlink(String oldpath, String newpath) {
    if (tooLong(newpath)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    noteKernelNode(newpath);
    Caller c = caller();
    return change("symlink", newpath, p -> writes.symlink(oldpath, p, c));
  }

  @Override
  public int link(String oldpath, String newpath) {
    if (tooLong(newpath)) {
      return -ErrorCodes.ENAMETOOLONG();
    }
    noteKernelNode(newpath);
    UpcallThreads.Request r = UpcallThreads.current();
    if (r != null && r.linkedNode != 0) {
      // The file linked is named by node: its attributes change with its link count.
      kernel.seenNode(oldpath, r.linkedNode);
    }
    String to = namespacePath(newpath);
    return change("link", oldpath, p -> writes.link(p, to));
  }

  @Override
  public int truncate(String path, @off_t long size) {
    Caller c = caller();
    return change("truncate", path, p -> writes.truncate(p, size, c));
  }

  @Override
  public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
    if (handles.get(fi.fh.get()) instanceof WriteHandle w) {
      try {
        w.truncate(size);
        writes.written(w, caller());
        return 0;
      } catch (Exception e) {
        return FuseErrors.toErrno("ftruncate", w.path(), e);
      }
    }
    return truncate(path, size);
  }

  @Override
  public int fallocate(
      String path, int mode, @off_t long off, @off_t long length, FuseFileInfo fi) {
    // Mode 0 (allocate, extending the file) and FALLOC_FL_KEEP_SIZE (1) are what posix_fallocate
    // and most writers ask; the copy is sparse, so allocating is extending at most.
    if (mode != 0 && mode != FALLOC_FL_KEEP_SIZE) {
      return unsupported(
          "fallocate with mode " + mode, namespacePath(path), -ErrorCodes.EOPNOTSUPP());
    }
    if (!(handles.get(fi.fh.get()) instanceof WriteHandle w)) {
      return -ErrorCodes.EBADF();
    }
    if (mode == FALLOC_FL_KEEP_SIZE) {
      return 0;
    }
    try {
      w.extendTo(off + length);
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("fallocate", w.path(), e);
    }
  }

  @Override
  public int chmod(String path, @mode_t long mode) {
    Caller c = caller();
    return change("chmod", path, p -> writes.chmod(p, mode, c));
  }

  @Override
  public int chown(String path, long uid, long gid) {
    return change("chown", path, p -> writes.chown(p, uid, gid));
  }

  @Override
  public int utimens(String path, Timespec[] timespec) {
    // [0] the access time, [1] the modification time; UTIME_OMIT leaves one as it is.
    Long access;
    Long modification;
    if (timespec == null || timespec.length < 2) {
      access = nowNs();
      modification = access;
    } else {
      access = timeOf(timespec[0]);
      modification = timeOf(timespec[1]);
    }
    return change("utimens", path, p -> writes.setTimes(p, access, modification));
  }

  private static Long timeOf(Timespec t) {
    long nsec = t.tv_nsec.longValue();
    if (nsec == UTIME_OMIT) {
      return null;
    }
    if (nsec == UTIME_NOW) {
      return nowNs();
    }
    return t.tv_sec.get() * 1_000_000_000L + nsec;
  }

  private static long nowNs() {
    java.time.Instant now = java.time.Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /**
   * The {@code user.} extended attributes the namespace keeps with the inode (the S3 proxy's {@code
   * x-amz-meta-*} metadata among them): from the metadata cache, which the change stream keeps
   * current. Other namespaces have none here ({@code security.capability}, which the kernel asks
   * before writes, among them).
   */
  @Override
  public int getxattr(String path, String name, Pointer value, @size_t long size) {
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      if (!knownNamespace(name)) {
        return -ErrorCodes.EOPNOTSUPP();
      }
      ByteString v = name.startsWith(USER_XATTRS) ? metadata.get(p).getXattrsMap().get(name) : null;
      if (v == null) {
        return -ErrorCodes.ENODATA();
      }
      if (size == 0) {
        return v.size();
      }
      if (size < v.size()) {
        return -ErrorCodes.ERANGE();
      }
      value.put(0, v.toByteArray(), 0, v.size());
      return v.size();
    } catch (Exception e) {
      return FuseErrors.toErrno("getxattr", p, e);
    }
  }

  /** Whether a name is in one of the namespaces Linux knows (others are EOPNOTSUPP there). */
  private static boolean knownNamespace(String name) {
    for (String ns : XATTR_NAMESPACES) {
      if (name.startsWith(ns) && name.length() > ns.length()) {
        return true;
      }
    }
    return false;
  }

  @Override
  public int listxattr(String path, Pointer list, @size_t long size) {
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      java.io.ByteArrayOutputStream names = new java.io.ByteArrayOutputStream();
      for (String name : new java.util.TreeSet<>(metadata.get(p).getXattrsMap().keySet())) {
        if (name.startsWith(USER_XATTRS)) {
          names.write(name.getBytes(java.nio.charset.StandardCharsets.UTF_8));
          names.write(0);
        }
      }
      byte[] bytes = names.toByteArray();
      if (size == 0) {
        return bytes.length;
      }
      if (size < bytes.length) {
        return -ErrorCodes.ERANGE();
      }
      list.put(0, bytes, 0, bytes.length);
      return bytes.length;
    } catch (Exception e) {
      return FuseErrors.toErrno("listxattr", p, e);
    }
  }

  /**
   * Sets a {@code user.} extended attribute in the namespace (the store the S3 proxy's object
   * metadata lives in); {@code XATTR_CREATE} fails on an existing one (EEXIST) and {@code
   * XATTR_REPLACE} on a missing one (ENODATA). Other namespaces are EOPNOTSUPP: the mount keeps no
   * security labels, trusted attributes or ACLs.
   */
  @Override
  public int setxattr(String path, String name, Pointer value, @size_t long size, int flags) {
    String p = namespacePath(path);
    if (name.equals(USER_XATTRS)) {
      return -ErrorCodes.EINVAL();
    }
    if (!name.startsWith(USER_XATTRS)) {
      return unsupported(
          "setxattr of " + name + " (only user. attributes are kept)", p, -ErrorCodes.EOPNOTSUPP());
    }
    try {
      if (name.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > NAME_MAX) {
        return -ErrorCodes.ERANGE();
      }
      if (size > XATTR_SIZE_MAX) {
        return -ErrorCodes.E2BIG();
      }
      FileInfo info = metadata.get(p);
      if (info.getFileType() != FileType.FILE_TYPE_PLAIN) {
        // As Linux: user. attributes belong to regular files and folders only.
        return -ErrorCodes.EPERM();
      }
      boolean exists = info.getXattrsMap().containsKey(name);
      if ((flags & XATTR_CREATE) != 0 && exists) {
        return -ErrorCodes.EEXIST();
      }
      if ((flags & XATTR_REPLACE) != 0 && !exists) {
        return -ErrorCodes.ENODATA();
      }
      byte[] bytes = new byte[(int) size];
      value.get(0, bytes, 0, bytes.length);
      return writes.setXattr(p, name, ByteString.copyFrom(bytes));
    } catch (Exception e) {
      return FuseErrors.toErrno("setxattr", p, e);
    }
  }

  @Override
  public int removexattr(String path, String name) {
    String p = namespacePath(path);
    if (!name.startsWith(USER_XATTRS)) {
      return unsupported(
          "removexattr of " + name + " (only user. attributes are kept)",
          p,
          -ErrorCodes.EOPNOTSUPP());
    }
    try {
      if (!metadata.get(p).getXattrsMap().containsKey(name)) {
        return -ErrorCodes.ENODATA();
      }
      return writes.setXattr(p, name, null);
    } catch (Exception e) {
      return FuseErrors.toErrno("removexattr", p, e);
    }
  }

  private static int unsupported(String operation, String path, int errno) {
    FuseErrors.logUnsupported(operation, path);
    return errno;
  }
}
