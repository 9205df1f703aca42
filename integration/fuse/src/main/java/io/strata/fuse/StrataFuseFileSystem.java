package io.strata.fuse;

import io.strata.client.CloseableIterator;
import com.google.protobuf.ByteString;
import com.kenai.jffi.MemoryIO;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.FileSystem;
import io.strata.client.NamespaceWatch;
import io.strata.client.SyncOption;
import io.strata.common.PathNames;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.FileInfo;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.io.IOException;
import java.util.Map;
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
 * given at construction; files read through the Strata client and new files are written through
 * it to the under store.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>All open handles of one file share one {@link CachedFileReader} (see
 *       {@link OpenFileTable}) and its pages; a read takes no lock that would make readers of
 *       one file wait for each other. Each handle keeps its own access pattern, so a handle
 *       reading sequentially gets read-ahead while one reading at random offsets fetches
 *       exactly what it asks.
 *   <li>Directory listings stream from the master page by page straight into the kernel's
 *       buffer; the listing is closed however the call ends.
 *   <li>Changes (create and sequential write, mkdir, unlink, rmdir, rename, chmod, chown,
 *       utimens, truncate to 0) go to the master at once, see {@link MountWrites}; what Strata
 *       cannot do answers EOPNOTSUPP or EPERM.
 *   <li>A missing path answers ENOENT; an unreachable cluster answers EIO and logs a line.
 *   <li>getattr, access and open answer from the {@link MetadataCache}: a status stays until
 *       the master's change stream says it changed (a path's absence, and every status while
 *       the stream is down, for the cache's TTL at most); this mount's own changes are seen at
 *       once. Directory listings bring each file's blocks, so opening and reading a listed file
 *       makes no master call, and a lookup in a folder not listed yet lists it once.
 *   <li>A changed path is also dropped from the kernel's caches ({@link KernelEntries}), so a
 *       change made through another client shows through this mount within the stream's delay,
 *       whatever the kernel's attribute and entry timeouts.
 *   <li>A read of a range in a local worker's block file goes straight into libfuse's reply
 *       buffer, with no call to the worker and one copy.
 *   <li>An open sets {@code keep_cache}, so the kernel keeps the pages it cached of the file,
 *       only when the file has the same id, length and modification time as at its previous
 *       open on this mount; otherwise the kernel drops them and reads again.
 *   <li>Owner, group and mode come from the namespace, translated to this machine's ids by
 *       {@link UserNames}; the kernel checks permissions against them
 *       ({@code default_permissions}, see {@link MountOptions}).
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
  /** Kernel invalidations that may wait to be sent before the backlog is replaced by one of everything. */
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

  /** What a handle number stands for: a reader of a shared file reader, or a writer. */
  private record ReadHandle(long fileId, CachedFileReader reader, ReadPattern pattern) {}

  private final FileSystem fs;
  private final String root;
  private final MetadataCache metadata;
  private final KernelEntries kernel;
  private final MountResources resources;
  private final FileVersions versions;
  private final UserNames names;
  private final ReadSettings reads;
  private final MountWrites writes;
  private final OpenFileTable<CachedFileReader> openFiles = new OpenFileTable<>();
  private final HandleTable<Object> handles = new HandleTable<>();
  private final ThreadLocal<byte[]> readBuffers = ThreadLocal.withInitial(() -> new byte[0]);
  private final LongAdder readCalls = new LongAdder();
  private final LongAdder getattrCalls = new LongAdder();
  private final Timer readTime;
  private final Timer writeTime;
  private final Timer getattrTime;
  private final Timer openTime;

  /**
   * @param fs the client every call goes through; the caller closes it after unmounting
   * @param root the namespace directory shown at the mount point
   * @param metadata the statuses getattr, access and open answer from
   * @param maxFiles most files whose last opened version is remembered for keep_cache
   * @param names how owner and group names map to this machine's ids
   * @param reads the page cache and read-ahead every file's reader uses
   * @param registry where the upcall timers go
   */
  StrataFuseFileSystem(FileSystem fs, String root, MetadataCache metadata, long maxFiles,
      UserNames names, ReadSettings reads, MeterRegistry registry) {
    this(fs, root, metadata, new KernelEntries(2 * Math.max(1, maxFiles), KERNEL_QUEUE),
        MountResources.NONE, maxFiles, names, reads, registry);
  }

  private StrataFuseFileSystem(FileSystem fs, String root, MetadataCache metadata,
      KernelEntries kernel, MountResources resources, long maxFiles, UserNames names,
      ReadSettings reads, MeterRegistry registry) {
    this.fs = fs;
    this.root = root;
    this.metadata = metadata;
    this.kernel = kernel;
    this.resources = resources;
    this.versions = new FileVersions(maxFiles);
    this.names = names;
    this.reads = reads;
    this.writes = new MountWrites(fs, metadata, names);
    this.readTime = upcallTimer(registry, "read");
    this.writeTime = upcallTimer(registry, "write");
    this.getattrTime = upcallTimer(registry, "getattr");
    this.openTime = upcallTimer(registry, "open");
    registerMetadataMeters(registry);
  }

  private void registerMetadataMeters(MeterRegistry registry) {
    FunctionCounter.builder(MetricNames.FUSE_METADATA_HITS, metadata, MetadataCache::hits)
        .description("Lookups, getattr and opens answered from the mount's metadata cache")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_LOADS, metadata, MetadataCache::loads)
        .description("Statuses asked of the master one path at a time").register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_LISTINGS, metadata,
        MetadataCache::listings)
        .description("Folder listings put into the metadata cache (readdir and lookups)")
        .register(registry);
    FunctionCounter.builder(MetricNames.FUSE_METADATA_CHANGES, metadata, MetadataCache::notices)
        .description("Change notices received from the master's change stream")
        .register(registry);
    Gauge.builder(MetricNames.FUSE_METADATA_WATCH, metadata, m -> m.watchLive() ? 1 : 0)
        .description("1 while the master's change stream is in step, 0 while entries are held"
            + " to the metadata TTL").register(registry);
    FunctionCounter.builder(MetricNames.FUSE_KERNEL_INVALIDATIONS, kernel, KernelEntries::sent)
        .description("Names and nodes dropped from the kernel's caches on change notices")
        .register(registry);
  }

  private static Timer upcallTimer(MeterRegistry registry, String operation) {
    return Timer.builder(MetricNames.FUSE_UPCALL).tag(MetricNames.TAG_OPERATION, operation)
        .description("Time the mount's code spends answering one FUSE upcall")
        .register(registry);
  }

  /**
   * The file system a mount process serves: metadata cache, page cache and read-ahead as the
   * configuration describes ({@code strata.fuse.*}), meters registered in {@code registry}.
   * Names the namespace does not know map to the user running this process.
   */
  public static StrataFuseFileSystem create(FileSystem fs, String root, StrataConfig conf,
      MeterRegistry registry) throws StrataException {
    int size = conf.getInt(FuseKeys.METADATA_CACHE_SIZE);
    int listThreads = conf.getInt(FuseKeys.METADATA_LIST_THREADS);
    ExecutorService listings = listThreads <= 0 ? null
        : Executors.newFixedThreadPool(listThreads, daemonThreads("strata-fuse-listing"));
    MetadataCache metadata = new MetadataCache(
        path -> fs.getStatus(path, SyncOption.DEFAULT, true),
        listings == null ? null : fs::listLoadedStatus,
        listings == null ? Runnable::run : listings,
        conf.getDuration(FuseKeys.METADATA_CACHE_TTL), size);
    return create(fs, root, conf, registry, metadata, listings);
  }

  /** As {@link #create(FileSystem, String, StrataConfig, MeterRegistry)}, with this metadata cache. */
  public static StrataFuseFileSystem create(FileSystem fs, String root, StrataConfig conf,
      MeterRegistry registry, MetadataCache metadata) throws StrataException {
    return create(fs, root, conf, registry, metadata, null);
  }

  private static StrataFuseFileSystem create(FileSystem fs, String root, StrataConfig conf,
      MeterRegistry registry, MetadataCache metadata, ExecutorService listings)
      throws StrataException {
    com.sun.security.auth.module.UnixSystem user = new com.sun.security.auth.module.UnixSystem();
    int size = conf.getInt(FuseKeys.METADATA_CACHE_SIZE);
    KernelEntries kernel = new KernelEntries(2L * Math.max(1, size), KERNEL_QUEUE);
    // Until the change stream is in step (and for good without it), the kernel's answers are
    // dropped as often as the mount's own expire.
    kernel.holdTo(conf.getDuration(FuseKeys.METADATA_CACHE_TTL));
    NamespaceWatch watch = conf.getBoolean(FuseKeys.METADATA_WATCH) && metadata.enabled()
        ? fs.watchChanges(new ChangeRelay(root, metadata, kernel,
            conf.getDuration(FuseKeys.METADATA_CACHE_TTL))) : null;
    return new StrataFuseFileSystem(fs, root, metadata, kernel,
        new MountResources(watch, listings), size,
        UserNames.ofThisMachine(user.getUid(), user.getGid()),
        ReadSettings.from(conf, registry), registry);
  }

  private static java.util.concurrent.ThreadFactory daemonThreads(String name) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
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
   * Makes the calls every first access needs before the mount serves any: the root's status
   * (into the metadata cache) and the live workers (the list reads choose from). A fresh
   * process pays for its first master calls (the connection, and loading and compiling the
   * classes on that path) once, about 100 ms on a 2-core machine; paid here, before the kernel
   * lists the mount, it is not added to the first file a job opens. A failure is only logged:
   * the first access asks again and reports it.
   */
  void warmUp() {
    try {
      metadata.get(root);
      fs.getWorkers();
    } catch (Exception e) {
      LOG.debug("Warming up the mount of {} failed; its first access asks again: {}", root,
          e.toString());
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
  public static StrataFuseFileSystem create(FileSystem fs, String root)
      throws StrataException {
    return create(fs, root, StrataConfig.load(Map.of()), new SimpleMeterRegistry());
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
    return new Caller(c.uid.get(), c.gid.get());
  }

  @Override
  public int getattr(String path, FileStat stat) {
    getattrCalls.increment();
    long start = System.nanoTime();
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      fillStat(metadata.get(p), stat, writes.writerOf(p));
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("getattr", p, e);
    } finally {
      getattrTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  /** Remembers which kernel node the request being handled names, for later invalidation. */
  private void noteKernelNode(String mountPath) {
    UpcallThreads.Request r = UpcallThreads.current();
    if (r != null) {
      kernel.seen(mountPath == null || mountPath.isEmpty() ? PathNames.ROOT : mountPath,
          r.opcode, r.node);
    }
  }

  private void fillStat(FileInfo info, FileStat stat, WriteHandle writer) {
    int perms = info.getMode() & 07777;
    if (info.getDirectory()) {
      stat.st_mode.set(FileStat.S_IFDIR | (perms == 0 ? 0755 : perms));
      stat.st_nlink.set(2);
    } else {
      // A file this mount is writing is as long as what was written so far.
      long length = writer != null ? writer.length() : info.getLength();
      stat.st_mode.set(FileStat.S_IFREG | (perms == 0 ? 0644 : perms));
      stat.st_nlink.set(1);
      stat.st_size.set(length);
      stat.st_blocks.set((length + 511) / 512);
    }
    stat.st_blksize.set(STATFS_BLOCK);
    stat.st_uid.set(names.uid(info.getOwner()));
    stat.st_gid.set(names.gid(info.getGroup()));
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
  public int readdir(String path, Pointer buf, FuseFillDir filler, @off_t long offset,
      FuseFileInfo fi) {
    String p = namespacePath(path);
    // Offset 0 for every entry: libfuse keeps the entries in its own buffer and serves the
    // kernel's successive calls from it, so the listing is walked once, as it streams in.
    noteKernelNode(path);
    filler.apply(buf, ".", null, 0);
    filler.apply(buf, "..", null, 0);
    MetadataCache.Listing listing = metadata.startListing(p);
    boolean whole = false;
    try (CloseableIterator<FileInfo> children = fs.listStatus(p, SyncOption.DEFAULT, true)) {
      while (children.hasNext()) {
        FileInfo child = children.next();
        listing.add(child);
        if (filler.apply(buf, child.getName(), null, 0) != 0) {
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
      if (MountWrites.writes(flags)) {
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
      CachedFileReader reader = openFiles.acquire(fileId, () -> reads.open(fileId,
          new LazyFileSource(p, fileId, info.getLength(),
              () -> LazyFileSource.Opened.of(fs.openFile(info)))));
      fi.fh.set(handles.add(new ReadHandle(fileId, reader, reads.newPattern())));
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
  public int read(String path, Pointer buf, @size_t long size, @off_t long offset,
      FuseFileInfo fi) {
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
    if (!(handle instanceof ReadHandle h)) {
      return handle == null ? -ErrorCodes.EBADF() : unsupported("read of a file open for writing",
          path, -ErrorCodes.EOPNOTSUPP());
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

  /**
   * A buffer of at least {@code size} bytes for one read upcall, kept by the calling thread.
   * The upcall threads live as long as the mount (see {@link UpcallThreads}), so after the first
   * read each answers every read from its own buffer instead of allocating one per read, which
   * at a GB/s of reads was a GB/s of garbage. Reads larger than {@link #KEPT_READ_BUFFER} get
   * a buffer of their own.
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
      return unsupported("create of a special file", p, -ErrorCodes.EPERM());
    }
    try {
      fi.fh.set(handles.add(writes.create(p, mode, fi.flags.get(), caller())));
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("create", p, e);
    }
  }

  @Override
  public int mknod(String path, @mode_t long mode, long rdev) {
    String p = namespacePath(path);
    if ((mode & S_IFMT) != S_IFREG) {
      return unsupported("mknod of a special file", p, -ErrorCodes.EPERM());
    }
    try {
      writes.close(writes.create(p, mode, 0, caller()));
      return 0;
    } catch (Exception e) {
      return FuseErrors.toErrno("mknod", p, e);
    }
  }

  @Override
  public int write(String path, Pointer buf, @size_t long size, @off_t long offset,
      FuseFileInfo fi) {
    if (!(handles.get(fi.fh.get()) instanceof WriteHandle w)) {
      return -ErrorCodes.EBADF();
    }
    long start = System.nanoTime();
    try {
      return w.write(buf, size, offset);
    } catch (Exception e) {
      return FuseErrors.toErrno("write", w.path(), e);
    } finally {
      writeTime.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }

  @Override
  public int flush(String path, FuseFileInfo fi) {
    // flush comes with every close(2), which waits for it; release comes later, asynchronously.
    // So a written file is completed here, and a program that closed it (cp, dd) finds it whole
    // at once. Until bytes were written the file is left open: a shell redirection closes one
    // duplicate of the descriptor before it writes.
    if (handles.get(fi.fh.get()) instanceof WriteHandle w && w.wrote()) {
      try {
        writes.close(w);
      } catch (Exception e) {
        return FuseErrors.toErrno("close", w.path(), e);
      }
    }
    return 0;
  }

  @Override
  public int fsync(String path, int isdatasync, FuseFileInfo fi) {
    if (handles.get(fi.fh.get()) instanceof WriteHandle w) {
      try {
        w.flush();
      } catch (Exception e) {
        return FuseErrors.toErrno("fsync", w.path(), e);
      }
    }
    return 0;
  }

  @Override
  public int release(String path, FuseFileInfo fi) {
    Object handle = handles.remove(fi.fh.get());
    try {
      if (handle instanceof ReadHandle h) {
        openFiles.release(h.fileId);
      } else if (handle instanceof WriteHandle w) {
        writes.close(w);
      }
    } catch (IOException e) {
      // release's answer reaches no application; the failure is in the log, and a writer's
      // file stays incomplete (never presented as written).
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
    stat.f_namemax.set(255);
    return 0;
  }

  /** Runs a namespace change and turns its failure into an errno. */
  @FunctionalInterface
  private interface Change {
    int run(String namespacePath) throws Exception;
  }

  private int change(String operation, String path, Change change) {
    String p = namespacePath(path);
    try {
      return change.run(p);
    } catch (Exception e) {
      return FuseErrors.toErrno(operation, p, e);
    }
  }

  @Override
  public int mkdir(String path, @mode_t long mode) {
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
    String to = namespacePath(newpath);
    return change("rename", oldpath, p -> writes.rename(p, to));
  }

  @Override
  public int truncate(String path, @off_t long size) {
    return change("truncate", path, p -> writes.truncate(p, size));
  }

  @Override
  public int ftruncate(String path, @off_t long size, FuseFileInfo fi) {
    if (handles.get(fi.fh.get()) instanceof WriteHandle w) {
      return change("ftruncate", path, p -> w.truncate(size));
    }
    return truncate(path, size);
  }

  @Override
  public int chmod(String path, @mode_t long mode) {
    return change("chmod", path, p -> writes.chmod(p, mode));
  }

  @Override
  public int chown(String path, long uid, long gid) {
    return change("chown", path, p -> writes.chown(p, uid, gid));
  }

  @Override
  public int utimens(String path, Timespec[] timespec) {
    // timespec[0] is the access time, which Strata does not keep; [1] the modification time.
    long ms;
    if (timespec == null || timespec.length < 2) {
      ms = System.currentTimeMillis();
    } else {
      long nsec = timespec[1].tv_nsec.longValue();
      ms = nsec == UTIME_OMIT ? -1 : nsec == UTIME_NOW ? System.currentTimeMillis()
          : timespec[1].tv_sec.get() * 1000 + nsec / 1_000_000;
    }
    return change("utimens", path, p -> writes.setModificationTime(p, ms));
  }

  // What Strata does not support: a precise errno, and a log line naming the refused call.

  @Override
  public int symlink(String oldpath, String newpath) {
    return unsupported("symlink", namespacePath(newpath), -ErrorCodes.EPERM());
  }

  @Override
  public int link(String oldpath, String newpath) {
    return unsupported("hard link", namespacePath(newpath), -ErrorCodes.EPERM());
  }

  @Override
  public int setxattr(String path, String name, Pointer value, @size_t long size, int flags) {
    return unsupported("setxattr", namespacePath(path), -ErrorCodes.EOPNOTSUPP());
  }

  /**
   * The {@code user.} extended attributes the namespace keeps with the inode (the S3 proxy's
   * {@code x-amz-meta-*} metadata among them), read-only: from the metadata cache, which the
   * change stream keeps current.
   */
  @Override
  public int getxattr(String path, String name, Pointer value, @size_t long size) {
    String p = namespacePath(path);
    noteKernelNode(path);
    try {
      ByteString v = name.startsWith(USER_XATTRS)
          ? metadata.get(p).getXattrsMap().get(name) : null;
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

  @Override
  public int removexattr(String path, String name) {
    return unsupported("removexattr", namespacePath(path), -ErrorCodes.EOPNOTSUPP());
  }

  @Override
  public int fallocate(String path, int mode, @off_t long off, @off_t long length,
      FuseFileInfo fi) {
    return unsupported("fallocate", namespacePath(path), -ErrorCodes.EOPNOTSUPP());
  }

  private static int unsupported(String operation, String path, int errno) {
    FuseErrors.logUnsupported(operation, path);
    return errno;
  }
}
