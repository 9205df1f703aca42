package io.strata.master.file;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.PathNames;
import io.strata.common.Version;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.journal.JournalSystem;
import io.strata.master.metastore.InodeStore;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.FileInfo;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.PersistenceState;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.underfs.UfsStatus;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The file-system operations of the master on normalized namespace paths. Changes are written
 * through: a change locks the paths it touches ({@link PathLocks}), changes the under store's
 * metadata first (mkdir, delete, rename) with no other lock held, then stages its journal entries,
 * checked against the namespace as the changes ahead of it leave it ({@link ChangeStaging}), and
 * answers once they are applied. File bytes are never touched here; workers write them. Reads
 * answer from the applied namespace without waiting for any change; a path not loaded yet, or due
 * for a check against its store, is loaded or checked first ({@link SyncPolicy}); listings are
 * loaded and synced by {@link ListingSync}.
 *
 * <p>Every operation returns a future; failures are {@link StrataException}s whose message names
 * the path and, where there is one, what the caller can do.
 */
public final class Namespace {
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
  private final FileChanges files;
  private final TreeChanges trees;
  private final RenameChanges renames;
  private final MountLanes lanes;
  private final PersistChanges persists;

  /**
   * The namespace of a master over its tree and journal: changes publish to {@code changes}; each
   * mount's lane has up to {@code laneThreads} threads; a change waits at most {@code lockTimeout}
   * for another change of its paths.
   */
  public static Namespace open(
      InodeTree tree,
      JournalSystem journal,
      ChangeFeed changes,
      MeterRegistry registry,
      int laneThreads,
      Duration lockTimeout,
      int loadBatch) {
    ChangeStaging staging =
        new ChangeStaging(journal, new PendingChanges(tree.store()), changes, tree.mounts());
    MountLanes lanes = new MountLanes(laneThreads);
    ChangeRunner runner =
        new ChangeRunner(
            new Change.Env(
                tree, staging, new PathLocks(registry), lockTimeout.toNanos(), new CallInodes()),
            tree.mounts(),
            lanes);
    return new Namespace(tree, journal, staging, runner, lanes, loadBatch);
  }

  private Namespace(
      InodeTree tree,
      JournalSystem journal,
      ChangeStaging staging,
      ChangeRunner runner,
      MountLanes lanes,
      int loadBatch) {
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
    this.posix = new PosixFiles(tree, runner, names);
    this.files = new FileChanges(tree, runner, names, posix);
    this.trees = new TreeChanges(tree, runner, names);
    this.renames = new RenameChanges(tree, runner, names, trees);
    this.mountOps = new NamespaceMounts(tree, runner, this);
    this.persists = new PersistChanges(tree, runner, posix);
  }

  /** Symbolic links, special files, hard links and new versions of a file's content. */
  public PosixFiles posix() {
    return posix;
  }

  /** Deletes and renames. */
  TreeChanges trees() {
    return trees;
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
   * Forgets every change in flight: this master starts or stops leading, so none of them will apply
   * under its lead.
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
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "The root under store "
              + root.ufsUri()
              + " does not exist: create it or set strata.master.root.ufs");
    }
    journal.write(
        List.of(
            JournalEntry.newBuilder().setInode(loader.toInode(s, InodeStore.ROOT_ID, 0, "")),
            ClusterLayout.finalizeEntry(Version.LAYOUT_VERSION)));
  }

  // ---- reads ----

  /**
   * The FileInfo of a path, loading its metadata from the under store on first access and checking
   * it there again when its sync interval says it is due; with {@code withBlocks}, a complete
   * file's blocks and the live workers that hold each.
   *
   * @param call the call's sync interval; null for the mount's or the configured one
   */
  public CompletableFuture<FileInfo> getStatus(String path, SyncInterval call, boolean withBlocks) {
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
   * The version of the file at {@code path} being written, as {@link PosixFiles#beginVersion}
   * returned it (for a begin retried after its answer was lost); NOT_FOUND when none is.
   */
  public CompletableFuture<FileInfo> versionBeingWritten(String path) {
    return read(
        path,
        SyncInterval.NEVER,
        n -> {
          if (n.getWritingDataId() == 0) {
            throw new StrataException(
                ErrorCode.NOT_FOUND, "No new version of " + path + " is being written");
          }
          return posix.versionInfo(n, path, n.getWritingDataId());
        });
  }

  /**
   * Runs {@code body} on the applied inode of {@code path}: at once when the path is loaded and not
   * due for a check; else after loading or checking it (on the path's lane).
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
    return runner.run(
        path,
        c -> {
          CompletableFuture<?> ahead = prepareRead(c, path, call);
          return ahead.thenApply(
              x -> {
                try {
                  return tree.readApplied(path, body);
                } catch (IOException e) {
                  throw new CompletionException(e);
                }
              });
        });
  }

  /**
   * Loads what the namespace lacks of a path and checks the path against its store when due; the
   * future completes once what that staged is applied. NOT_FOUND when it exists nowhere.
   */
  CompletableFuture<?> prepareRead(Change c, String path, SyncInterval call) throws IOException {
    SyncInterval sync = call;
    Walk seen = tree.walk(path);
    boolean due = seen.complete() && tree.statusDue(seen, sync);
    c.lock(due ? PathLocks.Request.writing(path) : PathLocks.Request.reading(path));
    if (due) {
      reconciler.checkStatus(c, path);
      // Just checked: a name the store no longer has is not looked up there again.
      sync = SyncInterval.NEVER;
    }
    Walk w = c.walkLoading(path, sync);
    if (!w.complete()) {
      // A check that found the name gone staged its delete: the caller hears NOT_FOUND once
      // that is applied, so that its next call, served from the applied namespace, agrees.
      return c.stagedAhead()
          .thenCompose(x -> CompletableFuture.failedFuture(StrataException.notFound(path)));
    }
    return c.stagedAhead();
  }

  /** Where a listing starts: a directory to page through, or a single file. */
  public record Listing(long dirId, FileInfo file) {}

  /**
   * Loads a directory's children when never loaded, syncs them when due under the call's sync
   * interval (null: the mount's or the configured one), and returns where its listing starts. A
   * file is checked as {@link #getStatus} checks it. With {@code loadedOnly}, a directory whose
   * children were never loaded is not loaded: the call fails with FAILED_PRECONDITION, so that
   * listing to answer lookups never changes what later accesses of single paths find in the under
   * store.
   */
  public CompletableFuture<Listing> openListing(
      String path, SyncInterval call, boolean withBlocks, boolean loadedOnly) {
    CompletableFuture<Listing> quick = quickListing(path, call, withBlocks, loadedOnly);
    if (quick != null) {
      return quick;
    }
    return runner.run(
        path,
        c -> {
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
  private CompletableFuture<Listing> quickListing(
      String path, SyncInterval call, boolean withBlocks, boolean loadedOnly) {
    try {
      Optional<Listing> now =
          tree.readIfCurrent(
              path,
              call,
              n -> {
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
    return tree.readApplied(
        path,
        n ->
            n.getDirectory()
                ? new Listing(n.getId(), null)
                : new Listing(0, tree.info(n, path, withBlocks)));
  }

  private static StrataException notLoaded(String path) {
    return StrataException.failedPrecondition(
        "The children of "
            + path
            + " were never"
            + " loaded from the under store; list it without loaded_only to load them");
  }

  /**
   * Loads or syncs every directory below a path, depth first, as a listing of each would; progress
   * goes to {@code sink} about once a second and once at the end. Blocks: runs on a thread of its
   * own.
   *
   * @param call the sync interval of every path (null: each path's mount's or configured one)
   * @param cancelled polled during the walk; it stops quietly once this turns true
   * @throws IOException when the path itself cannot be loaded
   */
  public LoadMetadataProgress loadMetadata(
      String path,
      SyncInterval call,
      BooleanSupplier cancelled,
      Consumer<LoadMetadataProgress> sink)
      throws IOException {
    return new MetadataLoad(tree, listings, this, path, call, cancelled, sink).run();
  }

  /** Loads (or checks) a path and returns its applied inode, waiting. Background threads. */
  InodeEntry resolveBlocking(String path, SyncInterval call) throws IOException {
    return join(read(path, call, n -> n));
  }

  /**
   * One page of a directory opened with {@link #openListing}, with each complete file's blocks and
   * their holders when {@code withBlocks}.
   */
  public InodeTree.Page listPage(
      long dirId, String startAfter, int limit, boolean withBlocks, boolean includeHidden) {
    return tree.page(dirId, startAfter, Math.min(limit, MAX_PAGE_SIZE), withBlocks, includeHidden);
  }

  /** A file's info and every block with the live workers that hold it. */
  public CompletableFuture<GetFileBlocksResponse> fileBlocks(String path) {
    return read(
        path,
        null,
        n -> {
          if (n.getDirectory()) {
            throw StrataException.invalidArgument("Path is a directory: " + path);
          }
          return GetFileBlocksResponse.newBuilder()
              .setFile(tree.info(n, path))
              .addAllBlocks(tree.blocks(n))
              .build();
        });
  }

  /** Queues removal of every cached block of the file(s) at a path. */
  public CompletableFuture<FreeResponse> free(String path, boolean recursive) {
    return read(
        path,
        null,
        n -> {
          if (n.getDirectory() && !recursive) {
            throw StrataException.failedPrecondition(
                "Path is a directory: "
                    + path
                    + " (free every file below it: `strata fs free -R`)");
          }
          return free(n);
        });
  }

  /**
   * Queues removal of every cached block of the files at or below an inode, except the blocks of
   * files not in their under store (ASYNC_THROUGH before it is persisted, MUST_CACHE): the cache
   * holds their only copy.
   */
  public FreeResponse free(InodeEntry top) {
    List<long[]> files = new ArrayList<>();
    tree.forEachFileBelow(
        top,
        f -> {
          if (f.getPersistenceState() == PersistenceState.PERSISTENCE_PERSISTED) {
            files.add(new long[] {InodeTree.dataId(f), f.getLength(), f.getBlockSize()});
          }
        });
    WorkerRegistry.Freed freed = workers.free(files);
    return FreeResponse.newBuilder()
        .setBlocksFreed(freed.blocks())
        .setBytesFreed(freed.bytes())
        .build();
  }

  /** Whether an id names an existing file (workers' block reports are checked with it). */
  public boolean isFile(long fileId) {
    return tree.isFile(fileId);
  }

  // ---- changes (see FileChanges, TreeChanges, RenameChanges) ----

  /** What a CreateFile call asks for. */
  public record CreateFile(
      String path,
      boolean recursive,
      boolean overwrite,
      long blockSize,
      int mode,
      String owner,
      String group,
      boolean newVersion,
      PersistenceState persistence,
      boolean lease) {
    /** A new file at {@code path}, in an existing folder, with the defaults. */
    public static CreateFile of(String path) {
      return new CreateFile(
          path, false, false, 0, 0, "", "", false, PersistenceState.PERSISTENCE_PERSISTED, false);
    }

    /** Whether the content goes to a worker's cache only (ASYNC_THROUGH, MUST_CACHE). */
    public boolean cacheOnly() {
      return persistence != PersistenceState.PERSISTENCE_PERSISTED;
    }
  }

  /**
   * What a CreateDirectory call asks for.
   *
   * @param recursive make missing parents too
   * @param allowExists answer an existing directory as it is rather than ALREADY_EXISTS
   * @param mode permission bits; 0 for the default
   * @param owner owner of the directory and the parents it makes; "" for the master's default
   * @param group their group; "" for the master's default
   */
  public record CreateDirectory(
      String path, boolean recursive, boolean allowExists, int mode, String owner, String group) {
    /** A new directory at {@code path}, in an existing folder, with the defaults. */
    public static CreateDirectory of(String path) {
      return new CreateDirectory(path, false, false, 0, "", "");
    }
  }

  /** See {@link FileChanges#createDirectory}. */
  public CompletableFuture<FileInfo> createDirectory(CreateDirectory d) {
    return files.createDirectory(d);
  }

  /** See {@link FileChanges#createFile}. */
  public CompletableFuture<FileInfo> createFile(CreateFile r) {
    return files.createFile(r);
  }

  /** See {@link FileChanges#commitNewFile}. */
  public CompletableFuture<FileInfo> commitNewFile(
      CreateFile r,
      String ufsPath,
      long mountId,
      long length,
      String fingerprint,
      CompletedAttributes attributes) {
    return files.commitNewFile(r, ufsPath, mountId, length, fingerprint, attributes);
  }

  /** See {@link FileChanges#completeFile}. */
  public CompletableFuture<FileInfo> completeFile(
      String path, long fileId, long length, String fingerprint, CompletedAttributes attributes) {
    return files.completeFile(path, fileId, length, fingerprint, attributes);
  }

  /** {@link #completeFile(String, long, long, String, CompletedAttributes)}, no attributes. */
  public CompletableFuture<FileInfo> completeFile(
      String path,
      long fileId,
      long length,
      String fingerprint,
      Map<String, com.google.protobuf.ByteString> xattrs) {
    return completeFile(path, fileId, length, fingerprint, CompletedAttributes.of(xattrs));
  }

  /** See {@link FileChanges#setAttribute}. */
  public CompletableFuture<FileInfo> setAttribute(String path, AttributeChange change) {
    return files.setAttribute(path, change);
  }

  /**
   * What a delete asks for.
   *
   * @param recursive delete a directory with everything below it
   * @param fileId only when the path is this file (0: whatever is there); STALE otherwise
   * @param unlessVisibleChildren a directory only when it has no child but hidden ones, checked
   *     with the delete, so a child added meanwhile is never deleted with it (FAILED_PRECONDITION
   *     otherwise)
   * @param expected only when the path's inode is exactly this (null: any); when it is not, nothing
   *     is deleted and the future completes with false
   */
  public record Delete(
      boolean recursive, long fileId, boolean unlessVisibleChildren, InodeEntry expected) {
    public static Delete of(boolean recursive) {
      return new Delete(recursive, 0, false, null);
    }
  }

  /** See {@link TreeChanges#delete}. */
  public CompletableFuture<Boolean> delete(String path, Delete d) {
    return trees.delete(path, d);
  }

  /** See {@link RenameChanges#rename}. */
  public CompletableFuture<Void> rename(String src, String dst, boolean replace) {
    if (replace && src.equals(dst) && !src.equals(PathNames.ROOT)) {
      // rename(2) of a name onto itself does nothing, once the name exists.
      return getStatus(src, SyncInterval.NEVER).thenApply(x -> null);
    }
    return renames.rename(src, dst, replace);
  }

  // ---- time to live ----

  /**
   * Frees the cached blocks of the files at or below an inode whose time to live passed and removes
   * its time to live, if it is still exactly {@code expired}; completes with its path then, or
   * empty when it changed meanwhile.
   */
  public CompletableFuture<Optional<String>> expireByFreeing(InodeEntry expired) {
    String path = tree.pathOf(expired.getId());
    if (path == null) {
      return done(Optional.empty());
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          if (!expired.equals(c.view().get(expired.getId()))
              || !path.equals(c.view().pathOf(expired.getId()))) {
            return done(Optional.empty());
          }
          free(expired);
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.update(
                          expired.getId(),
                          cur ->
                              expired.equals(cur)
                                  ? cur.toBuilder().clearTtlMs().clearTtlAction()
                                  : null)));
          return s.applied().thenApply(x -> Optional.of(path));
        });
  }

  /**
   * Deletes, as a client's recursive delete does (under store included), an inode whose time to
   * live passed, if it is still exactly {@code expired}; completes with its path then, or empty
   * when it changed meanwhile.
   */
  public CompletableFuture<Optional<String>> expireByDeleting(InodeEntry expired) {
    String path = tree.pathOf(expired.getId());
    if (path == null) {
      return done(Optional.empty());
    }
    return delete(path, new Delete(true, expired.getId(), false, expired))
        .thenApply(deleted -> deleted ? Optional.of(path) : Optional.empty());
  }

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /** The namespace path of an inode (its first name), or null when it is gone. */
  public String pathOf(long id) {
    return tree.pathOf(id);
  }

  /** The FileInfo of an inode at a path. */
  public FileInfo info(InodeEntry n, String path) {
    return tree.info(n, path);
  }

  /** See {@link PersistChanges#plan}. */
  public Optional<PersistChanges.Plan> persistPlan(long id, boolean evenNotPersisted) {
    return persists.plan(id, evenNotPersisted);
  }

  /** See {@link PersistChanges#publish}. */
  public CompletableFuture<Optional<FileInfo>> publishPersisted(PersistChanges.Plan plan) {
    return persists.publish(plan);
  }

  /** See {@link PersistChanges#discard}. */
  public void discardPersist(PersistChanges.Plan plan) {
    persists.discard(plan);
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
