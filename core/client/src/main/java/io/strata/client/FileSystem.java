package io.strata.client;

import com.google.protobuf.ByteString;
import io.strata.client.master.Backoff;
import io.strata.common.BlockIds;
import io.strata.common.PathNames;
import io.strata.common.WorkerHashing;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.BlockInfo;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateHardLinkRequest;
import io.strata.proto.CreateSpecialFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.FreeRequest;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.GetLoadStatusRequest;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.GetPersistStatusRequest;
import io.strata.proto.GetPersistStatusResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.LoadMetadataRequest;
import io.strata.proto.MountInfo;
import io.strata.proto.MountRequest;
import io.strata.proto.PersistFileRequest;
import io.strata.proto.RenameRequest;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.StopLoadRequest;
import io.strata.proto.SubmitLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import io.strata.proto.UnmountRequest;
import io.strata.proto.WorkerInfo;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Java API of a Strata cluster: namespace operations on the master, reads from workers
 * (short-circuit, network, or the under store as a last resort) and writes through workers.
 *
 * <p>Thread-safe; one instance per process is typical, since it holds the master connection, the
 * pools of data connections and the cached list of live workers. Every path is normalized with
 * {@link PathNames#normalize} first. Every method reports failure as a {@link StrataException}
 * whose message names the path; while the master is unreachable, calls are retried with back-off
 * for {@code strata.client.master.retry.max.duration} and then fail with {@link
 * ErrorCode#UNAVAILABLE}.
 */
public final class FileSystem implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(FileSystem.class);
  private final ClientContext ctx;

  private FileSystem(ClientContext ctx) {
    this.ctx = ctx;
  }

  /** Opens a client of the master named by the configuration; no call is made yet. */
  public static FileSystem connect(StrataConfig conf) {
    return new FileSystem(new ClientContext(conf));
  }

  /** The status of a file or directory; NOT_FOUND when it does not exist. */
  public FileInfo getStatus(String path) throws StrataException {
    return getStatus(path, SyncOption.DEFAULT);
  }

  /**
   * The status of a file or directory, as fresh as {@code sync} asks: with {@link
   * SyncOption#ALWAYS} the master checks the under store first, so a file changed, added or deleted
   * there is seen as it is now. NOT_FOUND when it does not exist.
   */
  public FileInfo getStatus(String path, SyncOption sync) throws StrataException {
    return getStatus(path, sync, false);
  }

  /**
   * {@link #getStatus(String, SyncOption)}; with {@code withBlocks}, a complete file comes with its
   * blocks and the live workers holding each ({@link FileInfo#getBlocksList()}), so that {@link
   * #openFile(FileInfo)} can read it without another call.
   */
  public FileInfo getStatus(String path, SyncOption sync, boolean withBlocks)
      throws StrataException {
    String p = PathNames.normalize(path);
    GetStatusRequest.Builder request =
        GetStatusRequest.newBuilder().setPath(p).setIncludeBlocks(withBlocks);
    if (sync.given()) {
      request.setSyncIntervalMs(sync.intervalMs());
    }
    return ctx.master.call(s -> s.getStatus(request.build())).getFile();
  }

  /** Whether a path exists. */
  public boolean exists(String path) throws StrataException {
    try {
      getStatus(path);
      return true;
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  /**
   * The children of a directory, streamed lazily page by page (never the whole directory in
   * memory); for a file, the file itself. Close the iterator when done with it early.
   */
  public CloseableIterator<FileInfo> listStatus(String path) throws StrataException {
    return listStatus(path, SyncOption.DEFAULT);
  }

  /**
   * {@link #listStatus(String)} as fresh as {@code sync} asks: with {@link SyncOption#ALWAYS} the
   * master lists the under-store directory first and takes in what was added, changed or deleted
   * there.
   */
  public CloseableIterator<FileInfo> listStatus(String path, SyncOption sync)
      throws StrataException {
    return listStatus(path, sync, false);
  }

  /**
   * {@link #listStatus(String, SyncOption)}; with {@code withBlocks}, each complete file comes with
   * its blocks and the live workers holding each, so that every listed file can be opened with
   * {@link #openFile(FileInfo)} and read without another master call.
   */
  public CloseableIterator<FileInfo> listStatus(String path, SyncOption sync, boolean withBlocks)
      throws StrataException {
    return new StatusListing(ctx.master, PathNames.normalize(path), sync, withBlocks, false);
  }

  /**
   * The children of a directory whose names follow {@code startAfter} in name order (UTF-8 bytes),
   * streamed as {@link #listStatus(String)} streams them; with {@code includeHidden}, hidden
   * entries too ({@link PathNames#isHidden}). For callers that resume a listing where an earlier
   * one stopped, such as the S3 proxy's paged listings.
   */
  public CloseableIterator<FileInfo> listStatusAfter(
      String path, String startAfter, boolean includeHidden) throws StrataException {
    return new StatusListing(
        ctx.master,
        PathNames.normalize(path),
        SyncOption.DEFAULT,
        false,
        false,
        includeHidden,
        startAfter);
  }

  /**
   * {@link #listStatus(String, SyncOption, boolean)} (with blocks, the default sync) of a directory
   * the master has listed before; one whose children were never loaded from its under store fails
   * with FAILED_PRECONDITION rather than being loaded. A cache that lists a folder to answer
   * lookups of single names uses this, so that it never makes the master load (and from then on
   * trust) a whole folder that only single paths were asked of.
   */
  public CloseableIterator<FileInfo> listLoadedStatus(String path) throws StrataException {
    return new StatusListing(ctx.master, PathNames.normalize(path), SyncOption.DEFAULT, true, true);
  }

  /**
   * Streams the namespace's changes to {@code listener} (see {@link NamespaceWatch}), reopening the
   * stream whenever it breaks, until the returned watch is closed. For caches of statuses that keep
   * them until they change.
   */
  public NamespaceWatch watchChanges(NamespaceWatch.Listener listener) {
    NamespaceWatch watch = new NamespaceWatch(ctx.master, listener);
    watch.start();
    return watch;
  }

  /**
   * Loads the metadata of every file and directory below a path into the master (and syncs what it
   * knows, as {@code sync} asks), walking the tree on the master. Returns the progress: a message
   * about once a second with the totals so far, and a last one with {@code done} set, which names
   * the paths that could not be loaded. Closing the iterator early cancels the walk.
   *
   * @throws StrataException NOT_FOUND when the path does not exist, or when the master cannot be
   *     reached
   */
  public CloseableIterator<LoadMetadataProgress> loadMetadata(String path, SyncOption sync)
      throws StrataException {
    LoadMetadataRequest.Builder request =
        LoadMetadataRequest.newBuilder().setPath(PathNames.normalize(path));
    if (sync.given()) {
      request.setSyncIntervalMs(sync.intervalMs());
    }
    return new MetadataLoadStream(ctx.master, request.build());
  }

  /**
   * Writes a file that is in a worker's cache only (ASYNC_THROUGH not yet persisted, or MUST_CACHE)
   * to its under store now, and returns its status once it is there; a file in its store already is
   * returned as it is.
   *
   * @throws StrataException UNAVAILABLE when no live worker holds the file's blocks;
   *     DEADLINE_EXCEEDED when it takes longer than the client's RPC timeout (the persist goes on:
   *     ask again)
   */
  public FileInfo persist(String path) throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .callPersist(s -> s.persistFile(PersistFileRequest.newBuilder().setPath(p).build()))
        .getFile();
  }

  /**
   * The leading master's persist backlog and what its scheduler did since it took the lead.
   *
   * @throws StrataException UNIMPLEMENTED from a master of a release without ASYNC_THROUGH
   */
  public PersistStatus persistStatus() throws StrataException {
    GetPersistStatusResponse r =
        ctx.master.callPersist(
            s -> s.getPersistStatus(GetPersistStatusRequest.getDefaultInstance()));
    return new PersistStatus(
        r.getBacklogFiles(),
        r.getBacklogBytes(),
        r.getOldestAgeMs(),
        r.getRunning(),
        r.getPersistedFiles(),
        r.getFailedAttempts(),
        r.getLastFailure());
  }

  /**
   * What {@link #submitLoad} answered.
   *
   * @param job the status of the job just submitted, or of the job of the path that was running
   *     already
   * @param alreadyRunning whether a job of the path was running already, so that nothing new was
   *     submitted and {@code job} is that job's status
   */
  public record SubmittedLoad(LoadJobStatus job, boolean alreadyRunning) {
    public SubmittedLoad {
      Objects.requireNonNull(job, "job");
    }
  }

  /**
   * Submits a job that loads the blocks of every file below a path into the workers. Returns at
   * once with the job's first status; the master runs the job on its own (it survives this client
   * and a master restart). There is one active job per path: when one is running already, nothing
   * new is submitted, the answer says it is {@link SubmittedLoad#alreadyRunning} and carries that
   * job's status (its options stay as they were).
   *
   * @throws StrataException NOT_FOUND when the path does not exist
   */
  public SubmittedLoad submitLoad(String path, LoadJobOptions options) throws StrataException {
    String p = PathNames.normalize(path);
    SubmitLoadResponse r =
        ctx.master.callLoad(
            s ->
                s.submitLoad(
                    SubmitLoadRequest.newBuilder().setPath(p).setOptions(options).build()));
    return new SubmittedLoad(r.getJob(), r.getAlreadyRunning());
  }

  /**
   * Where the load job of a path stands: the running one, else the last one that ended. The status
   * carries the first {@code maxFailures} failures (path and reason); 0 asks for none.
   *
   * @throws StrataException NOT_FOUND when no load of the path was ever submitted
   */
  public LoadJobStatus loadStatus(String path, int maxFailures) throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .callLoad(
            s ->
                s.getLoadStatus(
                    GetLoadStatusRequest.newBuilder()
                        .setPath(p)
                        .setMaxFailures(Math.max(0, maxFailures))
                        .build()))
        .getJob();
  }

  /**
   * Stops the running load job of a path and returns its status as the master has it after the
   * stop; blocks it cached stay cached.
   *
   * @throws StrataException NOT_FOUND when no load of the path was ever submitted
   */
  public LoadJobStatus stopLoad(String path) throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .callLoad(s -> s.stopLoad(StopLoadRequest.newBuilder().setPath(p).build()))
        .getJob();
  }

  /**
   * Creates a directory with the master's default mode, owner and group; {@code recursive} creates
   * missing parents too.
   */
  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists)
      throws StrataException {
    return createDirectory(path, recursive, allowExists, 0, "", "");
  }

  /**
   * Creates a directory; {@code recursive} creates missing parents too, with the same owner and
   * group (and the default mode). An existing directory is returned as it is when {@code
   * allowExists}.
   *
   * @param mode permission bits; 0 for the default (0755)
   * @param owner owner of the new directories; "" for the master's default (its user)
   * @param group their group; "" for the master's default
   */
  public FileInfo createDirectory(
      String path, boolean recursive, boolean allowExists, int mode, String owner, String group)
      throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .call(
            s ->
                s.createDirectory(
                    CreateDirectoryRequest.newBuilder()
                        .setPath(p)
                        .setRecursive(recursive)
                        .setAllowExists(allowExists)
                        .setMode(mode)
                        .setOwner(owner)
                        .setGroup(group)
                        .build()))
        .getDirectory();
  }

  /**
   * Changes the mode, owner, group, modification time, extended attributes and/or time to live of a
   * file or directory, as {@code options} gives them, and returns its status after the change.
   * These attributes live in Strata's namespace only: they are journaled by the master and never
   * written to the under store, and a file replaced because its content changed in the under store
   * takes the store's attributes again. The file's id, blocks, length and content stay as they
   * were.
   *
   * @throws StrataException NOT_FOUND when the path does not exist; INVALID_ARGUMENT when {@code
   *     options} gives nothing; PERMISSION_DENIED on a read-only mount (except for a time to live
   *     that frees); FAILED_PRECONDITION for a time to live before the cluster is finalized at
   *     metadata layout 2, or one that would delete a mount point; UNIMPLEMENTED when the master is
   *     of a release older than this client
   */
  public FileInfo setAttribute(String path, SetAttributeOptions options) throws StrataException {
    String p = PathNames.normalize(path);
    SetAttributeRequest.Builder request = SetAttributeRequest.newBuilder().setPath(p);
    options.mode().ifPresent(request::setMode);
    options.owner().ifPresent(request::setOwner);
    options.group().ifPresent(request::setGroup);
    options.modificationTimeMs().ifPresent(request::setModificationTimeMs);
    options.modificationTimeNs().ifPresent(request::setModificationTimeNs);
    options.accessTimeNs().ifPresent(request::setAccessTimeNs);
    options.ttlMs().ifPresent(ms -> request.setTtlMs(ms).setTtlAction(options.ttlAction()));
    request.putAllSetXattrs(options.setXattrs()).addAllRemoveXattrs(options.removeXattrs());
    try {
      return ctx.master.call(s -> s.setAttribute(request.build())).getFile();
    } catch (StrataException e) {
      if (e.code() == ErrorCode.UNIMPLEMENTED) {
        throw new StrataException(
            ErrorCode.UNIMPLEMENTED,
            "The Strata master at "
                + ctx.master.target()
                + " is older than this client and cannot set attributes of "
                + p
                + ": upgrade the master for chmod, chown and utimens",
            e);
      }
      throw e;
    }
  }

  /**
   * Creates a file and returns the stream that writes it. The file becomes readable when the stream
   * is closed; until then it is listed as incomplete.
   *
   * @throws StrataException UNAVAILABLE when no worker is live (nothing is created then)
   */
  public FileOutStream createFile(String path, CreateOptions options) throws StrataException {
    String p = PathNames.normalize(path);
    List<WorkerInfo> live = liveWorkersForWrite(ctx);
    FileInfo file =
        ctx.master
            .call(
                s ->
                    s.createFile(
                        options
                            .request(p)
                            .setNewVersion(options.newVersion())
                            .setLease(!options.newVersion())
                            .build()))
            .getFile();
    if (!options.newVersion()) {
      ctx.leases.hold(file.getFileId());
    }
    WorkerInfo worker = WorkerHashing.pick(file.getFileId(), live, WorkerInfo::getWorkerId);
    if (options.newVersion()) {
      return new FileOutStream(ctx, file, true, worker.getAddress(), true, false);
    }
    try {
      return new FileOutStream(ctx, file, options.overwrite(), worker.getAddress());
    } catch (RuntimeException e) {
      ctx.leases.release(file.getFileId());
      try {
        ctx.master.call(s -> s.delete(DeleteRequest.newBuilder().setPath(p).build()));
      } catch (StrataException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw new StrataException(ErrorCode.INTERNAL, "Cannot start writing " + p + ": " + e, e);
    }
  }

  /**
   * Creates a file's entry in the namespace, incomplete and empty, without writing it: it is listed
   * at once and completes when a stream of {@link #writeEntry} closes. For writers that make the
   * file at one time and write it later (the FUSE mount writes a file through when it is closed).
   *
   * @throws StrataException UNAVAILABLE when no worker is live (nothing is created then)
   */
  public FileInfo createEntry(String path, CreateOptions options) throws StrataException {
    String p = PathNames.normalize(path);
    liveWorkersForWrite(ctx);
    FileInfo entry =
        ctx.master.call(s -> s.createFile(options.request(p).setLease(true).build())).getFile();
    ctx.leases.hold(entry.getFileId());
    return entry;
  }

  /**
   * A stream that writes the content of a file whose entry {@link #createEntry} made, and completes
   * it on close. A failed stream leaves the entry as it was (incomplete), so another stream may try
   * again; delete the entry to give up.
   *
   * @throws StrataException UNAVAILABLE when no worker is live
   */
  public FileOutStream writeEntry(FileInfo entry) throws StrataException {
    List<WorkerInfo> live = liveWorkersForWrite(ctx);
    WorkerInfo worker = WorkerHashing.pick(entry.getFileId(), live, WorkerInfo::getWorkerId);
    // Held again: an earlier stream of this entry that failed released it.
    ctx.leases.hold(entry.getFileId());
    return new FileOutStream(ctx, entry, false, worker.getAddress(), false, false);
  }

  /**
   * A stream that writes a new file which appears in the namespace, complete, only when the stream
   * closes, in one master call: for writers that create, write and close a file at one time and
   * make no other use of its name meanwhile (the FUSE mount, the S3 proxy). The parent folder must
   * exist. Another file at the path when the stream closes (made by another writer meanwhile) fails
   * the close with ALREADY_EXISTS, and nothing of this write is kept; a failed or cancelled stream
   * leaves nothing either. A master of an earlier release gets the create and the completion at
   * close instead.
   *
   * @param options mode, owner, group and block size; overwrite and recursive are not taken
   * @throws StrataException UNAVAILABLE when no worker is live; FAILED_PRECONDITION in a read-only
   *     mount
   */
  public FileOutStream writeNewFile(String path, CreateOptions options) throws StrataException {
    String p = PathNames.normalize(path);
    if (p.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot create a file at /: give a file path");
    }
    WriteType type = ctx.folderWriteTypes.forNewFile(p);
    if (type.cacheOnly() && ctx.cacheOnlyAccepted()) {
      FileOutStream cached = createCacheOnly(p, options, type);
      if (cached != null) {
        return cached;
      }
    }
    if (!ctx.commitNewFileSupported()) {
      return createFile(p, options.overwrite(false).recursive(false).newVersion(false));
    }
    List<WorkerInfo> live = liveWorkersForWrite(ctx);
    MountResolver.Placement placement = ctx.mountResolver.place(p);
    WorkerInfo worker = WorkerHashing.pick(p.hashCode(), live, WorkerInfo::getWorkerId);
    return new FileOutStream(ctx, p, placement, options, worker.getAddress());
  }

  /**
   * Creates a new file whose content goes to one worker's cache only (write types ASYNC_THROUGH and
   * MUST_CACHE): the worker that reads of its first block go to, so that reads find it there. Null
   * when the master is of a release that does not keep such files (it answered a file in its
   * store): the entry is deleted then, and the caller writes the file through instead.
   */
  private FileOutStream createCacheOnly(String p, CreateOptions options, WriteType type)
      throws StrataException {
    List<WorkerInfo> live = liveWorkersForWrite(ctx);
    FileInfo file;
    try {
      file =
          ctx.master
              .call(
                  s ->
                      s.createFile(
                          // A new file in an existing folder, as every cache-only file is.
                          options
                              .overwrite(false)
                              .recursive(false)
                              .request(p)
                              .setPersistenceState(type.persistence())
                              .setLease(true)
                              .build()))
              .getFile();
      ctx.leases.hold(file.getFileId());
    } catch (StrataException e) {
      if (e.code() != ErrorCode.FAILED_PRECONDITION || e.posix() != null) {
        throw e;
      }
      // A cluster not finalized at the layout that keeps such files (or a read-only mount,
      // which the write through reports again): written through instead, for a minute.
      LOG.warn(
          "Writing {} and the next minute's new files through instead of with write type"
              + " {}: {}",
          p,
          type,
          e.getMessage());
      ctx.cacheOnlyRefused();
      return null;
    }
    if (file.getPersistenceState() != type.persistence()) {
      ctx.master.call(
          s -> s.delete(DeleteRequest.newBuilder().setPath(p).setFileId(file.getFileId()).build()));
      ctx.leases.release(file.getFileId());
      LOG.warn(
          "The master at {} does not keep files out of their under store (write type {})"
              + ": {} and the next minute's new files are written through; upgrade the masters",
          ctx.master.target(),
          type,
          p);
      ctx.cacheOnlyRefused();
      return null;
    }
    WorkerInfo worker =
        WorkerHashing.pick(BlockIds.blockId(file.getFileId(), 0), live, WorkerInfo::getWorkerId);
    return FileOutStream.cacheOnly(ctx, file, worker.getAddress());
  }

  /** Creates a file with default options. */
  public FileOutStream createFile(String path) throws StrataException {
    return createFile(path, CreateOptions.defaults());
  }

  /** The live workers a new file can be written through; UNAVAILABLE when there is none. */
  static List<WorkerInfo> liveWorkersForWrite(ClientContext ctx) throws StrataException {
    List<WorkerInfo> live = ctx.workers.live();
    if (live.isEmpty()) {
      // The cached list may predate a worker that just started: ask once more.
      ctx.workers.all();
      live = ctx.workers.live();
    }
    if (live.isEmpty()) {
      throw noLiveWorkers();
    }
    return ctx.writeTargets.usable(live);
  }

  /** One attempt of a write that {@link #writeRetrying} may repeat. */
  @FunctionalInterface
  public interface WriteAttempt<T> {
    T run() throws IOException;
  }

  /**
   * Runs a write whose caller still holds all its bytes (a staged copy, a local file) and can make
   * it again from the start, again while it fails because its worker is away -- restarting, or dead
   * and not yet dropped by the master -- until {@code strata.client.write.retry.duration} has
   * passed since the first failure. Each attempt leaves nothing behind when it fails (a new file is
   * removed, a version keeps the previous content), and the next one goes to another live worker
   * when there is one. Other failures, and the last one, are thrown as they came.
   */
  public <T> T writeRetrying(WriteAttempt<T> attempt) throws IOException {
    Duration bound = ctx.conf.getDuration(ClientKeys.WRITE_RETRY_DURATION);
    Backoff backoff = new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2), bound);
    int attempts = 0;
    while (true) {
      attempts++;
      try {
        return attempt.run();
      } catch (StrataException e) {
        if (!WriteTargets.workerAway(e)) {
          throw e;
        }
        LOG.info(
            "A write failed because its worker is away ({}); writing it again", e.getMessage());
        try {
          if (!backoff.sleep()) {
            throw new StrataException(
                e.code(),
                e.posix(),
                e.getMessage()
                    + " (gave up after "
                    + attempts
                    + " attempts in "
                    + bound.toSeconds()
                    + " s: no worker took the write; check that workers run, or wait longer with"
                    + " strata.client.write.retry.duration)",
                e);
          }
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("Interrupted while waiting to write again");
        }
        // The live workers again: the master may have dropped the lost one, or seen it back.
        ctx.workers.invalidate();
      }
    }
  }

  /**
   * Creates a file as the concatenation of {@code sources}, in order: complete files of the mount
   * that {@code path} is in, joined by a worker in their under store, so that no byte passes
   * through this client (HDFS moves the blocks, S3 copies parts on its side, a local folder is
   * copied by the kernel). The file becomes readable complete, with {@code xattrs} as its extended
   * attributes, in one master call; a failure leaves no file at the path (an overwritten file is
   * gone, as with {@link #createFile}).
   *
   * <p><b>The sources may be consumed</b> (HDFS concat moves their blocks out of them): once this
   * is called, whatever its outcome, read them no more and delete them.
   *
   * @param sources statuses of the files to join, as {@link #getStatus} or a listing gave them; a
   *     source whose length in the under store differs fails the call (STALE)
   * @throws StrataException INVALID_ARGUMENT when a source is in another mount than {@code path}
   *     (nothing is created then, so the caller can copy the bytes instead), a directory or a file
   *     being written; UNAVAILABLE when no worker is live
   */
  public FileInfo concat(
      String path, List<FileInfo> sources, CreateOptions options, Map<String, ByteString> xattrs)
      throws StrataException {
    return FileConcat.concat(this, ctx, PathNames.normalize(path), sources, options, xattrs);
  }

  /**
   * The mount that holds {@code path}, or would hold it once created: the mount with the longest
   * mount point at or above it. Its id is the {@code mount_id} of the files there.
   */
  public MountInfo mountOf(String path) throws StrataException {
    String p = PathNames.normalize(path);
    MountInfo best = null;
    for (MountInfo m : listMounts()) {
      if (PathNames.isUnder(p, m.getPath())
          && (best == null || m.getPath().length() > best.getPath().length())) {
        best = m;
      }
    }
    if (best == null) {
      throw new StrataException(
          ErrorCode.INTERNAL, "No mount holds " + p + ": the master listed no mount at /");
    }
    return best;
  }

  /**
   * Opens a complete file for reading.
   *
   * @throws StrataException INVALID_ARGUMENT for a directory, FAILED_PRECONDITION for a file that
   *     is still being written, NOT_FOUND when it does not exist
   */
  public FileInStream openFile(String path) throws StrataException {
    String p = PathNames.normalize(path);
    FileBlocks blocks;
    try {
      blocks = getFileBlocks(p);
    } catch (StrataException e) {
      if ((e.code() == ErrorCode.INVALID_ARGUMENT || e.code() == ErrorCode.FAILED_PRECONDITION)
          && getStatus(p).getDirectory()) {
        throw isDirectory(p);
      }
      throw e;
    }
    FileInfo file = blocks.file();
    if (file.getDirectory()) {
      throw isDirectory(p);
    }
    if (!file.getComplete()) {
      throw StrataException.failedPrecondition("File is still being written: " + p);
    }
    return new FileInStream(ctx, new BlockReader(ctx, file, blocks.blocks()), file);
  }

  /**
   * Opens a file whose status the caller already has, without asking the master: the status's
   * blocks ({@link #getStatus(String, SyncOption, boolean)} or a listing with blocks) say where
   * they are cached, and blocks it does not list are read from the workers that hashing picks. The
   * stream reads the version {@code file} describes: a file replaced since is read as that version
   * from the workers' cache, or fails with STALE where an under store must be read (its fingerprint
   * no longer matches), never as a mix of the two.
   *
   * @throws StrataException INVALID_ARGUMENT for a directory, FAILED_PRECONDITION for a file that
   *     was still being written when {@code file} was taken
   */
  public FileInStream openFile(FileInfo file) throws StrataException {
    if (file.getDirectory()) {
      throw isDirectory(file.getPath());
    }
    if (!file.getComplete()) {
      throw StrataException.failedPrecondition("File is still being written: " + file.getPath());
    }
    return new FileInStream(ctx, new BlockReader(ctx, file, file.getBlocksList()), file);
  }

  /** Deletes a file, or a directory (with everything below it when {@code recursive}). */
  public void delete(String path, boolean recursive) throws StrataException {
    String p = PathNames.normalize(path);
    ctx.master.call(
        s -> s.delete(DeleteRequest.newBuilder().setPath(p).setRecursive(recursive).build()));
  }

  /**
   * Deletes a directory, with its hidden entries, only when it has no other child: checked and done
   * by the master in one step, so an entry added meanwhile is never deleted with it.
   *
   * @throws StrataException FAILED_PRECONDITION when the directory has a visible child
   */
  public void deleteUnlessVisibleChildren(String path) throws StrataException {
    String p = PathNames.normalize(path);
    ctx.master.call(
        s ->
            s.delete(
                DeleteRequest.newBuilder()
                    .setPath(p)
                    .setRecursive(true)
                    .setUnlessVisibleChildren(true)
                    .build()));
  }

  /** Renames a file or directory; {@code dst} must not exist. */
  public void rename(String src, String dst) throws StrataException {
    rename(src, dst, false);
  }

  /**
   * Renames a file or directory. With {@code replace}, an existing {@code dst} is replaced in the
   * same step, as rename(2) does: a non-directory by a non-directory, an empty directory by a
   * directory; otherwise it fails with FAILED_PRECONDITION and the POSIX error ({@link
   * StrataException#posix()}: ENOTDIR, EISDIR, ENOTEMPTY). Without it an existing {@code dst} fails
   * the call with ALREADY_EXISTS.
   */
  public void rename(String src, String dst, boolean replace) throws StrataException {
    String s1 = PathNames.normalize(src);
    String d1 = PathNames.normalize(dst);
    ctx.master.call(
        s ->
            s.rename(
                RenameRequest.newBuilder()
                    .setSrcPath(s1)
                    .setDstPath(d1)
                    .setReplace(replace)
                    .build()));
  }

  /**
   * Creates a symbolic link, FIFO, socket or device node at a new path (metadata layout 2), in the
   * under store too where the store can hold it ({@link FileInfo#getNamespaceOnly} says when it
   * cannot).
   *
   * @param type SYMLINK, FIFO, SOCKET, CHAR_DEVICE or BLOCK_DEVICE
   * @param mode permission bits (a symbolic link's are always 0777); 0 for 0644
   * @param target a symbolic link's target, stored as given ("" for other types)
   * @param rdev a device's number as stat(2) reports st_rdev (0 for other types)
   * @param owner "" for the master's default
   * @param group "" for the master's default
   * @throws StrataException ALREADY_EXISTS when the path exists; NOT_FOUND when its parent does not
   */
  public FileInfo createSpecialFile(
      String path, FileType type, int mode, String target, long rdev, String owner, String group)
      throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .call(
            s ->
                s.createSpecialFile(
                    CreateSpecialFileRequest.newBuilder()
                        .setPath(p)
                        .setFileType(type)
                        .setMode(mode)
                        .setSymlinkTarget(target)
                        .setRdev(rdev)
                        .setOwner(owner)
                        .setGroup(group)
                        .build()))
        .getFile();
  }

  /**
   * Gives the file at {@code existing} one more name, {@code path} (a hard link, metadata layout
   * 2), in the namespace and in the under store, and returns its status at the new name.
   *
   * @throws StrataException PERMISSION_DENIED (EPERM) for a directory or where the under store
   *     cannot hold hard links; INVALID_ARGUMENT (EXDEV) across mounts; ALREADY_EXISTS when {@code
   *     path} exists
   */
  public FileInfo createHardLink(String existing, String path) throws StrataException {
    String e1 = PathNames.normalize(existing);
    String p = PathNames.normalize(path);
    return ctx.master
        .call(
            s ->
                s.createHardLink(
                    CreateHardLinkRequest.newBuilder().setExistingPath(e1).setPath(p).build()))
        .getFile();
  }

  /**
   * The id this client names its calls to the master with; the change stream names the client of
   * each change by it ({@code NamespaceChange.client_id}), so a client can tell its own changes.
   */
  public String clientId() {
    return ctx.master.clientId();
  }

  /** Mounts an under-store directory at a new namespace path. */
  public MountInfo mount(String path, String ufsUri, Map<String, String> options, boolean readOnly)
      throws StrataException {
    String p = PathNames.normalize(path);
    return ctx.master
        .call(
            s ->
                s.mount(
                    MountRequest.newBuilder()
                        .setPath(p)
                        .setUfsUri(ufsUri)
                        .putAllOptions(options)
                        .setReadOnly(readOnly)
                        .build()))
        .getMount();
  }

  /** Removes a mount from the namespace (the under store is left as it is). */
  public void unmount(String path) throws StrataException {
    String p = PathNames.normalize(path);
    ctx.master.call(s -> s.unmount(UnmountRequest.newBuilder().setPath(p).build()));
  }

  /** Every mount of the namespace; values of secret options read {@code ******}. */
  public List<MountInfo> listMounts() throws StrataException {
    return ctx.master
        .call(s -> s.listMounts(ListMountsRequest.getDefaultInstance()))
        .getMountsList();
  }

  /**
   * How each mount's under store answers the master (whether its calls fail at once after
   * timeouts), the root first; empty from a master of release 0.1.0.
   */
  public List<io.strata.proto.MountHealth> mountHealth() throws StrataException {
    return ctx.master
        .call(s -> s.listMounts(ListMountsRequest.getDefaultInstance()))
        .getHealthList();
  }

  /**
   * A file's status with its blocks, as {@link #getFileBlocks} returns them.
   *
   * @param file the file's status
   * @param blocks every block of the file in offset order, each with the live workers that hold it
   */
  public record FileBlocks(FileInfo file, List<BlockInfo> blocks) {
    public FileBlocks {
      Objects.requireNonNull(file, "file");
      blocks = List.copyOf(blocks);
    }
  }

  /**
   * A file's status and its blocks, each with the live workers that hold it.
   *
   * @throws StrataException INVALID_ARGUMENT for a directory, NOT_FOUND when it does not exist
   */
  public FileBlocks getFileBlocks(String path) throws StrataException {
    String p = PathNames.normalize(path);
    GetFileBlocksResponse r =
        ctx.master.call(s -> s.getFileBlocks(GetFileBlocksRequest.newBuilder().setPath(p).build()));
    return new FileBlocks(r.getFile(), r.getBlocksList());
  }

  /** What {@link #free} dropped from the workers' caches. */
  public record Freed(long blocks, long bytes) {}

  /** Drops the cached blocks of a file (or of every file below a directory, recursively). */
  public Freed free(String path, boolean recursive) throws StrataException {
    String p = PathNames.normalize(path);
    FreeResponse r =
        ctx.master.call(
            s -> s.free(FreeRequest.newBuilder().setPath(p).setRecursive(recursive).build()));
    return new Freed(r.getBlocksFreed(), r.getBytesFreed());
  }

  /** Every worker the master knows, live or lost. */
  public List<WorkerInfo> getWorkers() throws StrataException {
    return ctx.workers.all();
  }

  /** Makes the master take a checkpoint now; returns its journal sequence. */
  public long checkpoint() throws StrataException {
    return ctx.master.call(s -> s.checkpoint(CheckpointRequest.getDefaultInstance())).getSequence();
  }

  /** The leading master's release, start time, journal state and inode count. */
  public MasterInfo masterInfo() throws StrataException {
    GetMasterInfoResponse r =
        ctx.master.call(s -> s.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()));
    return new MasterInfo(
        r.getRelease(),
        r.getStartTimeMs(),
        r.getJournalSequence(),
        r.getLastCheckpointSequence(),
        r.getInodeCount());
  }

  /** The counters of this client's reads and writes. */
  public ClientMetrics metrics() {
    return ctx.metrics;
  }

  /** The master this client talks to, as host:port. */
  public String masterAddress() {
    return ctx.master.target();
  }

  /** Closes connections; open streams of this file system stop working. */
  @Override
  public void close() {
    ctx.close();
  }

  static StrataException noLiveWorkers() {
    return new StrataException(
        ErrorCode.UNAVAILABLE, "No live workers: start one with `strata worker start`");
  }

  private static StrataException isDirectory(String path) {
    return StrataException.invalidArgument("Path is a directory: " + path);
  }
}
