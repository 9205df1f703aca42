package io.strata.master.file;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockIds;
import io.strata.common.LayoutFeature;
import io.strata.common.PathNames;
import io.strata.common.Version;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.journal.JournalSystem;
import io.strata.master.metastore.InodeStore;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.FileInfo;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file-system operations of the master on normalized namespace paths. Changes are written
 * through: a change locks the paths it touches ({@link PathLocks}), changes the under store's
 * metadata first (mkdir, delete, rename) with no other lock held, then stages its journal
 * entries, checked against the namespace as the changes ahead of it leave it
 * ({@link ChangeStaging}), and answers once they are applied. File bytes are never touched
 * here; workers write them. Reads answer from the applied namespace without waiting for any
 * change; a path not loaded yet, or due for a check against its store, is loaded or checked
 * first ({@link SyncPolicy}); listings are loaded and synced by {@link ListingSync}.
 *
 * <p>Every operation returns a future; failures are {@link StrataException}s whose message
 * names the path and, where there is one, what the caller can do.
 */
public final class Namespace {
  private static final Logger LOG = LoggerFactory.getLogger(Namespace.class);
  /** Largest page a listing hands out, whatever the client asks for. */
  public static final int MAX_PAGE_SIZE = 10_000;

  private final InodeTree tree;
  private final JournalSystem journal;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final ChangeStaging staging;
  private final ChangeRunner runner;
  private final ListingSync listings;
  private final UfsReconciler reconciler;
  private final NameChanges names;
  private final PosixFiles posix;
  private final NamespaceMounts mountOps;
  private final MountLanes lanes;

  /**
   * The namespace of a master over its tree and journal: changes publish to {@code changes};
   * each mount's lane has up to {@code laneThreads} threads; a change waits at most
   * {@code lockTimeout} for another change of its paths.
   */
  public static Namespace open(InodeTree tree, JournalSystem journal, ChangeFeed changes,
      MeterRegistry registry, int laneThreads, Duration lockTimeout, int loadBatch) {
    ChangeStaging staging = new ChangeStaging(journal, new PendingChanges(tree.store()),
        changes, tree.mounts());
    MountLanes lanes = new MountLanes(laneThreads);
    ChangeRunner runner = new ChangeRunner(new Change.Env(tree, staging,
        new PathLocks(registry), lockTimeout.toNanos()), tree.mounts(), lanes);
    return new Namespace(tree, journal, staging, runner, lanes, loadBatch);
  }

  private Namespace(InodeTree tree, JournalSystem journal, ChangeStaging staging,
      ChangeRunner runner, MountLanes lanes, int loadBatch) {
    this.lanes = lanes;
    this.tree = tree;
    this.journal = journal;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.workers = tree.workers();
    this.staging = staging;
    this.runner = runner;
    this.reconciler = new UfsReconciler(tree);
    this.listings = new ListingSync(tree, staging, runner, reconciler, loadBatch);
    this.names = new NameChanges(tree.store(), staging.view());
    this.posix = new PosixFiles(tree, runner, names, this);
    this.mountOps = new NamespaceMounts(tree, runner, this);
  }

  /** Symbolic links, special files, hard links and new versions of a file's content. */
  public PosixFiles posix() {
    return posix;
  }

  /** Mounting and unmounting under stores. */
  public NamespaceMounts mounts() {
    return mountOps;
  }

  /** Stops the mounts' lanes (the master is stopping). */
  public void close() {
    lanes.close();
  }

  /**
   * Forgets every change in flight: this master starts or stops leading, so none of them will
   * apply under its lead.
   */
  public void resetChanges() {
    staging.clear();
  }

  /**
   * Creates the root inode from the root mount's store, if the namespace has none yet. A new
   * namespace starts at this release's metadata layout: there is no older master to go back to.
   * Runs as this master starts leading, before it serves.
   */
  public void ensureRoot() throws IOException {
    if (tree.store().get(InodeStore.ROOT_ID) != null) {
      return;
    }
    MountTable.Resolution root = mounts.resolve(PathNames.ROOT);
    UfsStatus s;
    try {
      // The root folder may be a symbolic link to the real one.
      s = loader.store(root.mount()).getTargetStatus(root.ufsUri());
    } catch (NoSuchFileException e) {
      throw new StrataException(ErrorCode.NOT_FOUND, "The root under store "
          + root.ufsUri() + " does not exist: create it or set strata.master.root.ufs");
    }
    journal.write(List.of(
        JournalEntry.newBuilder().setInode(loader.toInode(s, InodeStore.ROOT_ID, 0, "")),
        ClusterLayout.finalizeEntry(Version.LAYOUT_VERSION)));
  }

  // ---- reads ----

  /**
   * The FileInfo of a path, loading its metadata from the under store on first access and
   * checking it there again when its sync interval says it is due; with {@code withBlocks}, a
   * complete file's blocks and the live workers that hold each.
   *
   * @param call the call's sync interval; null for the mount's or the configured one
   */
  public CompletableFuture<FileInfo> getStatus(String path, SyncInterval call,
      boolean withBlocks) {
    return read(path, call, n -> tree.info(n, path, withBlocks));
  }

  /** {@link #getStatus(String, SyncInterval, boolean)} without blocks. */
  public CompletableFuture<FileInfo> getStatus(String path, SyncInterval call) {
    return getStatus(path, call, false);
  }

  /** {@link #getStatus(String, SyncInterval)} with the mount's or the configured interval. */
  public CompletableFuture<FileInfo> getStatus(String path) {
    return getStatus(path, null);
  }

  /**
   * Runs {@code body} on the applied inode of {@code path}: at once when the path is loaded and
   * not due for a check; else after loading or checking it (on the path's lane).
   */
  <T> CompletableFuture<T> read(String path, SyncInterval call, InodeTree.ReadBody<T> body) {
    try {
      Optional<T> now = tree.readIfCurrent(path, call, body);
      if (now.isPresent()) {
        return CompletableFuture.completedFuture(now.get());
      }
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(path, c -> {
      CompletableFuture<?> ahead = prepareRead(c, path, call);
      return ahead.thenApply(x -> {
        try {
          return tree.readApplied(path, body);
        } catch (IOException e) {
          throw new CompletionException(e);
        }
      });
    });
  }

  /**
   * Loads what the namespace lacks of a path and checks the path against its store when due;
   * the future completes once what that staged is applied. NOT_FOUND when it exists nowhere.
   */
  CompletableFuture<?> prepareRead(Change c, String path, SyncInterval call)
      throws IOException {
    SyncInterval sync = call;
    Walk seen = tree.walk(path);
    boolean due = seen.complete() && tree.statusDue(seen, sync);
    c.lock(due ? PathLocks.Request.writing(path) : PathLocks.Request.reading(path));
    if (due) {
      reconciler.checkStatus(c, path, seen.last());
      // Just checked: a name the store no longer has is not looked up there again.
      sync = SyncInterval.NEVER;
    }
    Walk w = c.walkLoading(path, sync);
    if (!w.complete()) {
      throw StrataException.notFound(path);
    }
    return c.stagedAhead();
  }

  /** Where a listing starts: a directory to page through, or a single file. */
  public record Listing(long dirId, FileInfo file) {}

  /**
   * Loads a directory's children when never loaded, syncs them when due under the call's sync
   * interval (null: the mount's or the configured one), and returns where its listing starts.
   * A file is checked as {@link #getStatus} checks it. With {@code loadedOnly}, a directory
   * whose children were never loaded is not loaded: the call fails with FAILED_PRECONDITION,
   * so that listing to answer lookups never changes what later accesses of single paths find
   * in the under store.
   */
  public CompletableFuture<Listing> openListing(String path, SyncInterval call,
      boolean withBlocks, boolean loadedOnly) {
    CompletableFuture<Listing> quick = quickListing(path, call, withBlocks, loadedOnly);
    if (quick != null) {
      return quick;
    }
    return runner.run(path, c -> {
      if (c.inline()) {
        // Loading or syncing a listing calls the store and waits for commits: on the lane.
        throw Change.NeedsLane.INSTANCE;
      }
      join(prepareRead(c, path, call));
      c.releaseLocks();
      InodeEntry n = tree.readApplied(path, x -> x);
      if (loadedOnly && n.getDirectory() && !n.getChildrenLoaded()) {
        throw notLoaded(path);
      }
      listings.refresh(path, call);
      return done(listingOf(path, withBlocks));
    });
  }

  /** {@link #openListing(String, SyncInterval, boolean, boolean)}, a file without blocks. */
  public CompletableFuture<Listing> openListing(String path, SyncInterval call) {
    return openListing(path, call, false, false);
  }

  /** A listing that needs nothing loaded or synced, at once; null when it needs that. */
  private CompletableFuture<Listing> quickListing(String path, SyncInterval call,
      boolean withBlocks, boolean loadedOnly) {
    try {
      Optional<Listing> now = tree.readIfCurrent(path, call, n -> {
        if (!n.getDirectory()) {
          return new Listing(0, tree.info(n, path, withBlocks));
        }
        if (!n.getChildrenLoaded()) {
          if (loadedOnly) {
            throw notLoaded(path);
          }
          return null;
        }
        return listings.due(n, path, call) ? null : new Listing(n.getId(), null);
      });
      return now.isPresent() ? CompletableFuture.completedFuture(now.get()) : null;
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  private Listing listingOf(String path, boolean withBlocks) throws IOException {
    return tree.readApplied(path, n -> n.getDirectory() ? new Listing(n.getId(), null)
        : new Listing(0, tree.info(n, path, withBlocks)));
  }

  private static StrataException notLoaded(String path) {
    return StrataException.failedPrecondition("The children of " + path + " were never"
        + " loaded from the under store; list it without loaded_only to load them");
  }

  /**
   * Loads or syncs every directory below a path, depth first, as a listing of each would;
   * progress goes to {@code sink} about once a second and once at the end. Blocks: runs on a
   * thread of its own.
   *
   * @param call the sync interval of every path (null: each path's mount's or configured one)
   * @param cancelled polled during the walk; it stops quietly once this turns true
   * @throws IOException when the path itself cannot be loaded
   */
  public LoadMetadataProgress loadMetadata(String path, SyncInterval call,
      BooleanSupplier cancelled, Consumer<LoadMetadataProgress> sink) throws IOException {
    return new MetadataLoad(tree, listings, this, path, call, cancelled, sink).run();
  }

  /** Loads (or checks) a path and returns its applied inode, waiting. Background threads. */
  InodeEntry resolveBlocking(String path, SyncInterval call) throws IOException {
    return join(read(path, call, n -> n));
  }

  /**
   * One page of a directory opened with {@link #openListing}, with each complete file's blocks
   * and their holders when {@code withBlocks}.
   */
  public InodeTree.Page listPage(long dirId, String startAfter, int limit, boolean withBlocks,
      boolean includeHidden) {
    return tree.page(dirId, startAfter, Math.min(limit, MAX_PAGE_SIZE), withBlocks,
        includeHidden);
  }

  /** A file's info and every block with the live workers that hold it. */
  public CompletableFuture<GetFileBlocksResponse> fileBlocks(String path) {
    return read(path, null, n -> {
      if (n.getDirectory()) {
        throw StrataException.invalidArgument("Path is a directory: " + path);
      }
      return GetFileBlocksResponse.newBuilder().setFile(tree.info(n, path))
          .addAllBlocks(tree.blocks(n)).build();
    });
  }

  /** Queues removal of every cached block of the file(s) at a path. */
  public CompletableFuture<FreeResponse> free(String path, boolean recursive) {
    return read(path, null, n -> {
      if (n.getDirectory() && !recursive) {
        throw StrataException.failedPrecondition("Path is a directory: " + path
            + " (free every file below it: `strata fs free -R`)");
      }
      return free(n);
    });
  }

  /** Queues removal of every cached block of the files at or below an inode. */
  public FreeResponse free(InodeEntry top) {
    List<long[]> files = new ArrayList<>();
    tree.forEachFileBelow(top, f -> files.add(
        new long[] {InodeTree.dataId(f), f.getLength(), f.getBlockSize()}));
    WorkerRegistry.Freed freed = workers.free(files);
    return FreeResponse.newBuilder().setBlocksFreed(freed.blocks())
        .setBytesFreed(freed.bytes()).build();
  }

  /** Whether an id names an existing file (workers' block reports are checked with it). */
  public boolean isFile(long fileId) {
    return tree.isFile(fileId);
  }

  // ---- changes ----

  /**
   * Locks {@code path} for writing, and when parents must be made too (recursive), the first
   * of them, and walks it loading what is missing.
   */
  static Walk lockForCreate(Change c, String path, boolean recursive) throws IOException {
    PathLocks.Request locks = PathLocks.Request.writing(path);
    while (true) {
      c.lock(locks);
      Walk w = c.walkLoading(path);
      if (w.complete() || !recursive || !w.last().getDirectory()) {
        return w;
      }
      String firstMissing = w.pathAt(w.found() + 1);
      if (locks.writes(firstMissing)) {
        return w;
      }
      // Another change could make the same missing folder: hold it for writing.
      locks = locks.plusWrite(firstMissing);
    }
  }

  /**
   * Makes a directory in the store, then in the namespace (with missing parents if asked). The
   * directory and every parent it makes get {@code owner} and {@code group} ("" for the
   * master's default).
   */
  public CompletableFuture<FileInfo> createDirectory(String path, boolean recursive,
      boolean allowExists, int mode, String owner, String group) {
    return runner.run(path, c -> {
      Walk w = lockForCreate(c, path, recursive);
      if (w.complete()) {
        InodeEntry existing = w.last();
        if (!existing.getDirectory()) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "A file already exists at " + path);
        }
        if (allowExists) {
          return done(tree.info(existing, path));
        }
        throw StrataException.alreadyExists(path);
      }
      checkParents(w, path, recursive);
      checkWritable(path);
      checkStorePath(path);
      MountTable.Resolution r = mounts.resolve(path);
      try {
        c.store(r.mount()).mkdirs(r.ufsUri(), recursive);
      } catch (FileAlreadyExistsException e) {
        // Created in the store behind Strata's back: adopt it.
      }
      List<Edit> edits = new ArrayList<>();
      InodeEntry.Builder made = addDirectories(c, w, w.names().size(), mode, owner, group,
          edits);
      Edit.foldersChanged(edits, w.last().getId());
      ChangeStaging.Staged s = c.commit(edits);
      FileInfo info = tree.info(made.build(), path);
      return s.applied().thenApply(x -> info);
    });
  }

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /**
   * Checks the deepest existing ancestor of a missing path is a directory, and that only the
   * last name is missing unless {@code recursive}.
   */
  static void checkParents(Walk w, String path, boolean recursive) throws StrataException {
    if (!w.last().getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
          "Not a directory: " + w.pathAt(w.found()) + " is a file, so " + path
          + " cannot be created");
    }
    if (w.names().size() - w.found() > 1 && !recursive) {
      throw new StrataException(ErrorCode.NOT_FOUND, "Parent directory does not exist: "
          + PathNames.parent(path)
          + " (create it first, or create parents too: `strata fs mkdir -p`)");
    }
  }

  /**
   * Adds edits for directories for the walk's missing names up to {@code depth}, all owned by
   * {@code owner} and {@code group}; the last one gets {@code mode}. Returns the deepest (the
   * walk's last inode when nothing is missing).
   */
  private InodeEntry.Builder addDirectories(Change c, Walk w, int depth, int mode, String owner,
      String group, List<Edit> edits) {
    InodeEntry.Builder made = w.last().toBuilder();
    for (int d = w.found() + 1; d <= depth; d++) {
      InodeEntry parent = made.build();
      int m = d == depth ? mode : 0;
      made = loader.newInode(c.newInodeId(), made.getId(), w.names().get(d - 1), true,
          SetGid.directoryMode(parent, m == 0 ? UfsMetadataLoader.DEFAULT_DIR_MODE : m), owner,
          SetGid.group(parent, group));
      edits.add(Edit.inode(made));
    }
    return made;
  }

  /** What a CreateFile call asks for. */
  public record CreateFile(String path, boolean recursive, boolean overwrite, long blockSize,
      int mode, String owner, String group, boolean newVersion) {
    /** A new file at {@code path}, in an existing folder, with the defaults. */
    public static CreateFile of(String path) {
      return new CreateFile(path, false, false, 0, 0, "", "", false);
    }
  }

  /**
   * Creates an incomplete, empty file inode (a replaced file gets a new id); the store file
   * appears when a worker writes it to the returned {@code ufs_path}. The file and every parent
   * it makes get the request's owner and group ("" for the master's default). With
   * {@code newVersion}, begins a new version of the complete file at the path instead
   * ({@link PosixFiles#beginVersion}).
   */
  public CompletableFuture<FileInfo> createFile(CreateFile r) {
    if (r.newVersion()) {
      return posix.beginVersion(r.path());
    }
    String path = r.path();
    if (path.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot create a file at /: give a file path"));
    }
    if (r.blockSize() < 0) {
      return CompletableFuture.failedFuture(StrataException.invalidArgument(
          "Negative block size " + r.blockSize() + " for " + path));
    }
    return runner.run(path, c -> {
      Walk w = lockForCreate(c, path, r.recursive());
      List<Edit> edits = new ArrayList<>();
      long nowNs = InodeTimes.nowNs();
      long parentId;
      InodeEntry replaced = null;
      boolean replacedGone = false;
      if (w.complete()) {
        replaced = w.last();
        if (replaced.getDirectory()) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "A directory already exists at " + path);
        }
        if (!r.overwrite()) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "Path already exists: " + path
                  + " (remove it first, or overwrite it: `strata fs cp -f`)");
        }
        checkWritable(path);
        parentId = w.parentOfLast().getId();
        // A new inode, so that blocks cached for the old content are never read as the new.
        // A file with other names (hard links) keeps them, with its old content.
        replacedGone = names.removeName(replaced, parentId, PathNames.name(path), nowNs,
            edits);
      } else {
        checkParents(w, path, r.recursive());
        checkWritable(path);
        checkStorePath(path);
        int parentDepth = w.names().size() - 1;
        if (w.found() < parentDepth) {
          MountTable.Resolution pr = mounts.resolve(PathNames.parent(path));
          c.store(pr.mount()).mkdirs(pr.ufsUri(), true);
        }
        parentId = addDirectories(c, w, parentDepth, 0, r.owner(), r.group(), edits).getId();
      }
      InodeEntry parent = parentId == w.last().getId() ? w.last() : null;
      InodeEntry.Builder file = loader.newInode(c.newInodeId(), parentId,
          PathNames.name(path), false, r.mode(), r.owner(),
          parent == null ? r.group() : SetGid.group(parent, r.group()));
      if (r.blockSize() > 0) {
        file.setBlockSize(r.blockSize());
      }
      edits.add(Edit.inode(file));
      // The folder that gets a new name: the parent, or the deepest one that existed.
      Edit.foldersChanged(edits, replaced != null ? parentId : w.last().getId());
      ChangeStaging.Staged s = c.commit(edits);
      FileInfo info = tree.info(file.build(), path);
      long gone = replacedGone ? InodeTree.dataId(replaced) : -1;
      return s.applied().thenApply(x -> {
        if (gone >= 0) {
          workers.removeFiles(List.of(gone));
        }
        return info;
      });
    });
  }

  /**
   * Marks a file complete with its length, or makes the new version {@code fileId} of it
   * (begun by {@link PosixFiles#beginVersion}) its content; with the attributes the writer
   * set meanwhile, all in one journal entry. Repeating it with the same length is harmless.
   *
   * @param fileId the id the writer's create gave, or 0 for whatever file is at {@code path}
   * @throws StrataException STALE when {@code path} is another file now, or the version is no
   *     longer the one being written (another writer began a newer one)
   */
  public CompletableFuture<FileInfo> completeFile(String path, long fileId, long length,
      String fingerprint, CompletedAttributes attributes) {
    try {
      Xattrs.checkNames(path, attributes.xattrs().keySet());
      Xattrs.checkSize(path, attributes.xattrs());
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(path, c -> {
      c.lock(PathLocks.Request.writing(path));
      InodeEntry n = c.resolve(path);
      if (n.getDirectory()) {
        throw StrataException.invalidArgument("Path is a directory: " + path);
      }
      if (fileId != 0 && fileId != n.getId()) {
        if (n.getWritingDataId() == fileId || InodeTree.dataId(n) == fileId) {
          return posix.completeVersion(c, path, n, fileId, length, fingerprint, attributes);
        }
        Change.checkSameFile(n, fileId, path, "this write was not kept: write it again");
      }
      if (n.getComplete()) {
        if (n.getLength() == length) {
          return done(tree.info(n, path));
        }
        throw StrataException.failedPrecondition("File is already complete: " + path
            + " (length " + n.getLength() + "); create it again with overwrite to replace it");
      }
      checkLength(path, length, n.getBlockSize());
      boolean relink = n.getLinksCount() > 0 && !n.getNamespaceOnly();
      if (relink) {
        // Its other names are brought to the new content in the store: on the lane.
        c.store(mounts.resolve(path).mount());
      }
      long nowNs = InodeTimes.nowNs();
      ChangeStaging.Staged s = c.commit(List.of(Edit.update(n.getId(), cur -> {
        if (cur == null) {
          throw StrataException.notFound(path);
        }
        InodeEntry.Builder done = cur.toBuilder().setLength(length)
            .setUfsFingerprint(fingerprint).setComplete(true)
            .setUfsSyncTimeMs(nowNs / 1_000_000L);
        attributes.applyTo(done, nowNs);
        return done;
      })));
      InodeEntry completed = s.inode(n.getId());
      if (relink) {
        posix.relinkOtherNames(c, path, completed);
      }
      FileInfo info = tree.info(completed, path);
      return s.applied().thenApply(x -> info);
    });
  }

  /** {@link #completeFile(String, long, long, String, CompletedAttributes)}, no attributes. */
  public CompletableFuture<FileInfo> completeFile(String path, long fileId, long length,
      String fingerprint, Map<String, com.google.protobuf.ByteString> xattrs) {
    return completeFile(path, fileId, length, fingerprint, CompletedAttributes.of(xattrs));
  }

  /** Fails with INVALID_ARGUMENT when a file cannot have {@code length} bytes. */
  static void checkLength(String path, long length, long blockSize) throws StrataException {
    if (length < 0 || BlockIds.blockCount(length, blockSize) > BlockIds.MAX_BLOCKS_PER_FILE) {
      throw StrataException.invalidArgument("Bad length " + length + " for " + path
          + " with block size " + blockSize);
    }
  }

  /**
   * Sets mode, owner, group, modification time, extended attributes and/or time to live in the
   * namespace only: the under store is not written, and the path is not checked against it (a
   * sync could replace the inode), so the id, blocks, length and fingerprint stay. A change
   * that changes nothing is not journaled. The attributes survive restarts with the journaled
   * inode; a file later replaced because its content changed in the store takes the store's
   * attributes again.
   *
   * <p>A time to live needs the cluster at metadata layout 2 (FAILED_PRECONDITION before
   * {@code strata fsadmin upgrade finalize}). One that frees is taken in a read-only mount;
   * one that deletes is refused where a delete would be (the root, a mount point).
   */
  public CompletableFuture<FileInfo> setAttribute(String path, AttributeChange change) {
    try {
      if (change.ttl() != null) {
        ClusterLayout.require(tree.store(), LayoutFeature.TTL);
      }
      change.check(path);
      if (change.deletesOnExpiry() && (path.equals(PathNames.ROOT) || mounts.at(path) != null)) {
        throw StrataException.failedPrecondition("Cannot give " + path + " a time to live"
            + " that deletes it: it is a mount point (let it free its cached blocks instead, or"
            + " unmount it)");
      }
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(path, c -> {
      c.lock(PathLocks.Request.writing(path));
      InodeEntry n = c.resolve(path);
      if (!change.onlyFreesOnExpiry()) {
        checkWritable(path);
      }
      long nowNs = InodeTimes.nowNs();
      ChangeStaging.Staged s = c.commit(List.of(Edit.update(n.getId(), cur -> {
        if (cur == null) {
          throw StrataException.notFound(path);
        }
        InodeEntry.Builder changed = change.applyTo(cur);
        Xattrs.checkSize(path, changed.getXattrsMap());
        if (change.changesInode()) {
          // As POSIX file systems do, even when the values stay as they were.
          InodeTimes.changed(changed, nowNs);
        }
        return changed.build().equals(cur) ? null : changed;
      })));
      InodeEntry after = s.inode(n.getId());
      FileInfo info = tree.info(after != null ? after : c.view().get(n.getId()), path);
      return s.applied().thenApply(x -> info);
    });
  }

  /**
   * What a delete asks for.
   *
   * @param recursive delete a directory with everything below it
   * @param fileId only when the path is this file (0: whatever is there); STALE otherwise
   * @param unlessVisibleChildren a directory only when it has no child but hidden ones,
   *     checked with the delete, so a child added meanwhile is never deleted with it
   *     (FAILED_PRECONDITION otherwise)
   * @param expected only when the path's inode is exactly this (null: any); when it is not,
   *     nothing is deleted and the future completes with false
   */
  public record Delete(boolean recursive, long fileId, boolean unlessVisibleChildren,
      InodeEntry expected) {
    public static Delete of(boolean recursive) {
      return new Delete(recursive, 0, false, null);
    }
  }

  /**
   * Deletes in the store and the namespace, and queues removal of the files' cached blocks.
   * Completes with whether it deleted (false only when {@code expected} did not match).
   */
  public CompletableFuture<Boolean> delete(String path, Delete d) {
    if (path.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot delete the root directory /"));
    }
    return runner.run(path, c -> {
      c.lock(PathLocks.Request.writing(path));
      Walk w = c.walkLoading(path);
      if (!w.complete()) {
        if (d.expected() != null) {
          return done(false);
        }
        throw StrataException.notFound(path);
      }
      InodeEntry n = w.last();
      InodeEntry parent = w.parentOfLast();
      if (d.expected() != null && !d.expected().equals(n)) {
        return done(false);
      }
      Change.checkSameFile(n, d.fileId(), path, "nothing was deleted");
      if (mounts.at(path) != null) {
        throw StrataException.failedPrecondition("Cannot delete mount point " + path
            + ": unmount it instead");
      }
      List<String> below = mounts.mountPointsBelow(path);
      if (!below.isEmpty()) {
        throw StrataException.failedPrecondition("Cannot delete " + path + ": " + below.get(0)
            + " is mounted below it (unmount it first)");
      }
      checkWritable(path);
      if (d.unlessVisibleChildren() && n.getDirectory()
          && hasChild(c, n, path, name -> !name.equals(PathNames.UPLOADS_FOLDER))) {
        throw StrataException.failedPrecondition("Directory is not empty: " + path);
      }
      if (n.getDirectory() && !d.recursive() && hasChild(c, n, path, name -> true)) {
        throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTEMPTY,
            "Directory is not empty: " + path
            + " (delete it with everything below it: `strata fs rm -R`)");
      }
      MountTable.Resolution r = mounts.resolve(path);
      try {
        c.store(r.mount()).delete(r.ufsUri(), d.recursive() && n.getDirectory());
      } catch (NoSuchFileException e) {
        // Gone from the store already, a file still being written, or one the store does not
        // hold (namespace only): the namespace decides.
      }
      long nowNs = InodeTimes.nowNs();
      List<Edit> edits = new ArrayList<>();
      // Files with names outside the subtree live on by them, with their blocks.
      Set<Long> survivors = names.detachSurvivors(n, nowNs, edits);
      List<Long> files = new ArrayList<>();
      if (names.removeName(n, parent.getId(), PathNames.name(path), nowNs, edits)) {
        tree.forEachFileBelow(n, f -> {
          if (!survivors.contains(f.getId())) {
            files.add(InodeTree.dataId(f));
          }
        });
      }
      Edit.foldersChanged(edits, parent.getId());
      ChangeStaging.Staged s = c.commit(edits);
      return s.applied().thenApply(x -> {
        workers.removeFiles(files);
        return true;
      });
    });
  }

  /**
   * Whether a directory has a child whose name {@code counts}, in the namespace and -- when its
   * children were never loaded -- in its under store. The caller holds the directory's write
   * lock, so nothing below it is in flight.
   */
  boolean hasChild(Change c, InodeEntry dir, String path,
      java.util.function.Predicate<String> counts) throws IOException {
    for (InodeStore.Child child : tree.store().children(dir.getId(), "", 2)) {
      if (counts.test(child.name())) {
        return true;
      }
    }
    if (dir.getChildrenLoaded()) {
      return false;
    }
    MountTable.Resolution r = mounts.resolve(path);
    try (UnderFileSystem.CloseableIterator<UfsStatus> it =
        c.store(r.mount()).list(r.ufsUri())) {
      while (it.hasNext()) {
        String name = it.next().name();
        if (UfsMetadataLoader.validName(name) && counts.test(name)) {
          return true;
        }
      }
      return false;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  /**
   * Renames in the store and the namespace within one mount; ids (so block ids) are kept, and
   * so is the modification time (the change time moves), as rename(2) does. With
   * {@code replace}, an existing destination is replaced in the same step: a non-directory by
   * a non-directory, an empty directory by a directory (FAILED_PRECONDITION with ENOTDIR,
   * EISDIR or ENOTEMPTY otherwise); two names of one file leave both as they are.
   */
  public CompletableFuture<Void> rename(String src, String dst, boolean replace) {
    if (src.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot rename the root directory /"));
    }
    if (src.equals(dst)) {
      if (replace) {
        return getStatus(src, SyncInterval.NEVER).thenApply(x -> null);
      }
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot rename " + src + " to itself"));
    }
    if (PathNames.isUnder(dst, src)) {
      return CompletableFuture.failedFuture(new StrataException(ErrorCode.INVALID_ARGUMENT,
          PosixError.EINVAL, "Cannot move " + src + " under itself: " + dst));
    }
    return runner.run(src, c -> {
      c.lock(PathLocks.Request.writing(src, dst));
      Walk sw = c.walkLoading(src);
      if (!sw.complete()) {
        throw StrataException.notFound(src);
      }
      InodeEntry n = sw.last();
      long srcParent = sw.parentOfLast().getId();
      if (mounts.at(src) != null) {
        throw StrataException.invalidArgument("Cannot rename mount point " + src
            + ": unmount it and mount it at the new path");
      }
      List<String> below = mounts.mountPointsBelow(src);
      if (!below.isEmpty()) {
        throw StrataException.invalidArgument("Cannot rename " + src + ": mount point "
            + below.get(0) + " is below it (unmount it first)");
      }
      MountTable.Resolution from = mounts.resolve(src);
      MountTable.Resolution to = mounts.resolve(dst);
      if (from.mount().getMountId() != to.mount().getMountId()) {
        throw new StrataException(ErrorCode.INVALID_ARGUMENT, PosixError.EXDEV,
            "Cannot rename across mounts: " + src + " is in mount " + from.mount().getPath()
            + ", " + dst + " is in mount " + to.mount().getPath() + " (copy and delete instead)");
      }
      checkWritable(src);
      String dstParent = PathNames.parent(dst);
      Walk pw = c.walkLoading(dstParent);
      if (!pw.complete()) {
        throw new StrataException(ErrorCode.NOT_FOUND, "Parent directory does not exist: "
            + dstParent + " (create it before renaming " + src + " into it)");
      }
      if (!pw.last().getDirectory()) {
        throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
            "Not a directory: " + dstParent);
      }
      long dstParentId = pw.last().getId();
      checkStorePath(dst);
      Walk dw = c.walkLoading(dst);
      InodeEntry replaced = dw.complete() ? dw.last() : null;
      if (replaced != null) {
        if (!replace) {
          throw StrataException.alreadyExists(dst);
        }
        if (replaced.getId() == n.getId()) {
          // Two names of one file: rename(2) does nothing.
          return done(null);
        }
        checkReplaceable(c, n, replaced, dst);
      }
      if (!n.getDirectory() && !n.getComplete()) {
        throw StrataException.failedPrecondition("File is still being written: " + src
            + " (complete it before renaming)");
      }
      UnderFileSystem store = c.store(from.mount());
      String before = n.getDirectory() || n.getNamespaceOnly() ? null
          : fingerprintOrNull(store, from.ufsUri());
      if (!n.getNamespaceOnly()) {
        try {
          // A target only the namespace holds is not in the store's way.
          if (replaced != null && !replaced.getNamespaceOnly()) {
            store.rename(from.ufsUri(), to.ufsUri(), true);
          } else {
            store.rename(from.ufsUri(), to.ufsUri());
          }
        } catch (NoSuchFileException e) {
          // The store moved it already: an earlier attempt of this rename whose answer was
          // lost with the leader that made it (the client's retry reaches a new leader).
          if (store.exists(from.ufsUri()) || !store.exists(to.ufsUri())) {
            throw e;
          }
          LOG.info("{} was moved to {} in the under store already; the namespace follows", src,
              dst);
        }
      } else if (replaced != null && !replaced.getNamespaceOnly()) {
        deleteInStore(store, to.ufsUri());
      }

      long nowNs = InodeTimes.nowNs();
      String dstName = PathNames.name(dst);
      String srcName = PathNames.name(src);
      List<Edit> edits = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      if (replaced != null
          && names.removeName(replaced, dstParentId, dstName, nowNs, edits)) {
        tree.forEachFileBelow(replaced, f -> files.add(InodeTree.dataId(f)));
      }
      String after = null;
      if (before != null && before.equals(n.getUfsFingerprint())) {
        String now = fingerprintOrNull(store, to.ufsUri());
        // An object store renames by copying, and the copy of the same bytes can get another
        // ETag (a multipart object's is recomputed); readers compare the store's fingerprint
        // with this one. Followed only when the namespace had the store's fingerprint before
        // the rename, so that a change made behind Strata's back is never taken for it.
        if (now != null && !now.equals(before)) {
          after = now;
        }
      }
      String fingerprint = after;
      if (n.getLinksCount() > 0 || fingerprint != null) {
        // A file with several names: which of its names moved is in the inode itself.
        edits.add(Edit.update(n.getId(), cur -> {
          if (cur == null) {
            throw StrataException.notFound(src);
          }
          InodeEntry.Builder moved = NameChanges.moved(cur, srcParent, srcName, dstParentId,
              dstName);
          InodeTimes.changed(moved, nowNs);
          return fingerprint == null ? moved : moved.setUfsFingerprint(fingerprint);
        }));
      } else {
        edits.add(Edit.put(JournalEntry.newBuilder().setRename(RenameEntry.newBuilder()
            .setId(n.getId()).setNewParentId(dstParentId).setNewName(dstName)
            .setModificationTimeMs(n.getModificationTimeMs()).setChangeTimeNs(nowNs))));
      }
      Edit.foldersChanged(edits, srcParent, dstParentId);
      ChangeStaging.Staged s = c.commit(edits);
      return s.applied().thenApply(x -> {
        workers.removeFiles(files);
        return null;
      });
    });
  }

  /** Fails, with the POSIX error rename(2) gives, when {@code n} may not replace {@code old}. */
  private void checkReplaceable(Change c, InodeEntry n, InodeEntry old, String dst)
      throws IOException {
    if (mounts.at(dst) != null || !mounts.mountPointsBelow(dst).isEmpty()) {
      throw StrataException.failedPrecondition("Cannot replace " + dst + ": a mount point is"
          + " at or below it (unmount it first)");
    }
    if (n.getDirectory() && !old.getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
          "Cannot replace " + dst + " by a directory: it is not a directory");
    }
    if (!n.getDirectory() && old.getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR,
          "Cannot replace directory " + dst + " by a file");
    }
    if (old.getDirectory() && hasChild(c, old, dst, name -> true)) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTEMPTY,
          "Cannot replace " + dst + ": the directory is not empty");
    }
  }

  /** Deletes a file or empty directory from a store; one already gone is fine. */
  private static void deleteInStore(UnderFileSystem store, String uri) throws IOException {
    try {
      store.delete(uri, false);
    } catch (NoSuchFileException e) {
      // Never written there (namespace only, or still being written): nothing to remove.
    }
  }

  /** A path's fingerprint in its store; null when the store cannot tell it now. */
  private static String fingerprintOrNull(UnderFileSystem store, String uri) {
    try {
      return store.fingerprint(uri);
    } catch (IOException e) {
      LOG.debug("Cannot read the fingerprint of {}: {}", uri, e.toString());
      return null;
    }
  }

  void checkWritable(String path) throws StrataException {
    mounts.requireWritable(path);
  }

  /**
   * Fails with ENAMETOOLONG when the under store of {@code path} cannot hold an entry there
   * because its own path would be too long (a local folder's absolute path past 64 KiB).
   */
  void checkStorePath(String path) throws IOException {
    MountTable.Resolution r = mounts.resolve(path);
    if (loader.store(r.mount()).pathTooLong(r.ufsUri())) {
      throw new StrataException(ErrorCode.INVALID_ARGUMENT, PosixError.ENAMETOOLONG,
          "Path too long for its under store: " + path + " would be " + r.ufsUri()
          + " there, past the store's limit; choose a shorter path");
    }
  }

  // ---- time to live ----

  /**
   * Frees the cached blocks of the files at or below an inode whose time to live passed and
   * removes its time to live, if it is still exactly {@code expired}; completes with its path
   * then, or empty when it changed meanwhile.
   */
  public CompletableFuture<Optional<String>> expireByFreeing(InodeEntry expired) {
    String path = tree.pathOf(expired.getId());
    if (path == null) {
      return done(Optional.empty());
    }
    return runner.run(path, c -> {
      c.lock(PathLocks.Request.writing(path));
      if (!expired.equals(c.view().get(expired.getId()))
          || !path.equals(c.view().pathOf(expired.getId()))) {
        return done(Optional.empty());
      }
      free(expired);
      ChangeStaging.Staged s = c.commit(List.of(Edit.update(expired.getId(),
          cur -> expired.equals(cur) ? cur.toBuilder().clearTtlMs().clearTtlAction() : null)));
      return s.applied().thenApply(x -> Optional.of(path));
    });
  }

  /**
   * Deletes, as a client's recursive delete does (under store included), an inode whose time
   * to live passed, if it is still exactly {@code expired}; completes with its path then, or
   * empty when it changed meanwhile.
   */
  public CompletableFuture<Optional<String>> expireByDeleting(InodeEntry expired) {
    String path = tree.pathOf(expired.getId());
    if (path == null) {
      return done(Optional.empty());
    }
    return delete(path, new Delete(true, expired.getId(), false, expired))
        .thenApply(deleted -> deleted ? Optional.of(path) : Optional.empty());
  }

  /** Waits for a future of this class on a thread that may wait (a background task). */
  public static <T> T join(CompletableFuture<T> f) throws IOException {
    try {
      return f.join();
    } catch (CompletionException e) {
      Throwable t = e.getCause();
      if (t instanceof IOException io) {
        throw io;
      }
      if (t instanceof RuntimeException re) {
        throw re;
      }
      throw new IOException(t);
    }
  }
}
