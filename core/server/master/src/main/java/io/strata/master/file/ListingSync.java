package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps a directory's children in step with its under-store directory: loads them when they were
 * never loaded, and re-lists and reconciles them when the directory's sync interval says the
 * listing is due.
 *
 * <p>A sync streams the store's listing with no lock held and stages it in batches, each with the
 * directory locked for reading and each name it changes locked for writing -- taken only if free: a
 * name another change holds is that change's to decide. New names become new inodes, changed files
 * and names whose type changed are replaced by new inodes (their old blocks queued for removal at
 * once), and once the listing is done, children the listing did not return are deleted with their
 * subtrees. Each inode created or kept carries the full status the store listed, so a later
 * GetStatus of any child needs no store call within its interval. Names changed through Strata
 * while the sync runs are left as Strata made them (the directory's {@link
 * ChangeStaging.ListingSession}), and files still being written are left alone. A sync that finds
 * nothing to change writes nothing to the journal.
 *
 * <p>At most one load or sync of a directory runs at a time; a caller that finds one running waits
 * for it and uses its result when that listing began after the caller asked. Blocks: it runs on a
 * lane or a background thread, never inline.
 */
final class ListingSync {
  private record Running(long startMs, CompletableFuture<Void> done) {}

  /** What one load or sync of a directory has seen and done so far. */
  private static final class Pass {
    final long dirId;
    final boolean wasLoaded;
    final long startMs;
    final ChangeStaging.ListingSession session;
    final ChildIds seen = new ChildIds();
    boolean changed;
    String sweepAfter = "";

    Pass(long dirId, boolean wasLoaded, long startMs, ChangeStaging.ListingSession session) {
      this.dirId = dirId;
      this.wasLoaded = wasLoaded;
      this.startMs = startMs;
      this.session = session;
    }
  }

  /** Ids of the children a listing returned: 8 bytes each, so a huge directory stays cheap. */
  private static final class ChildIds {
    private long[] ids = new long[64];
    private int size;
    private boolean sorted = true;

    void add(long id) {
      if (size == ids.length) {
        ids = Arrays.copyOf(ids, size * 2);
      }
      ids[size++] = id;
      sorted = false;
    }

    boolean contains(long id) {
      if (!sorted) {
        Arrays.sort(ids, 0, size);
        sorted = true;
      }
      return Arrays.binarySearch(ids, 0, size, id) >= 0;
    }
  }

  /** A failure of the store's listing, told apart from failures to apply it. */
  private static final class ListingFailure extends Exception {
    ListingFailure(Throwable cause) {
      super(cause);
    }
  }

  private final InodeTree tree;
  private final InodeStore store;
  private final ChangeStaging staging;
  private final ChangeRunner runner;
  private final UfsReconciler reconciler;
  private final SyncPolicy policy;
  private final UfsMetadataLoader loader;
  private final int batchSize;
  private final ConcurrentHashMap<Long, Running> running = new ConcurrentHashMap<>();

  ListingSync(
      InodeTree tree,
      ChangeStaging staging,
      ChangeRunner runner,
      UfsReconciler reconciler,
      int batchSize) {
    this.tree = tree;
    this.store = tree.store();
    this.staging = staging;
    this.runner = runner;
    this.reconciler = reconciler;
    this.policy = tree.policy();
    this.loader = tree.loader();
    this.batchSize = Math.max(1, batchSize);
  }

  /** Whether a loaded directory's listing is due for a sync. */
  boolean due(InodeEntry dir, String path, SyncInterval call) {
    return policy.listingDue(dir, path, call);
  }

  /**
   * The inode of a path, loading what the namespace has not seen (or, under a directory whose
   * listing is due, what it may have missed), without checking the inode itself; waits until what
   * it loaded is applied.
   */
  InodeEntry resolve(String path, SyncInterval call) throws IOException {
    Change c = runner.blocking();
    try {
      c.lock(PathLocks.Request.reading(path));
      Walk w = c.walkLoading(path, call);
      if (!w.complete()) {
        throw StrataException.notFound(path);
      }
      Namespace.join(c.stagedAhead());
      return w.last();
    } finally {
      c.releaseLocks();
    }
  }

  /**
   * Makes the children of the directory at a path current under the call's sync interval (null: the
   * mount's or the default). Does nothing for a file.
   */
  void refresh(String path, SyncInterval call) throws IOException {
    long asked = System.currentTimeMillis();
    while (true) {
      InodeEntry dir = resolve(path, call);
      if (!dir.getDirectory()) {
        return;
      }
      boolean wasLoaded = dir.getChildrenLoaded();
      if (wasLoaded && !policy.listingDue(dir, path, call)) {
        return;
      }
      Running mine = new Running(System.currentTimeMillis(), new CompletableFuture<>());
      Running other = running.putIfAbsent(dir.getId(), mine);
      if (other != null) {
        other.done().join();
        if (other.startMs() > asked) {
          return;
        }
        continue;
      }
      try {
        sync(path, dir.getId(), wasLoaded, mine.startMs());
      } finally {
        running.remove(dir.getId(), mine);
        mine.done().complete(null);
      }
      return;
    }
  }

  private void sync(String path, long dirId, boolean wasLoaded, long startMs) throws IOException {
    MountTable.Resolution where = tree.mounts().resolve(path);
    Pass pass = new Pass(dirId, wasLoaded, startMs, staging.openSession(dirId));
    try {
      if (wasLoaded) {
        policy.countListingCheck();
      }
      UnderFileSystem.CloseableIterator<UfsStatus> it;
      try {
        it = loader.store(where.mount()).list(where.ufsUri());
      } catch (IOException e) {
        listingFailed(path, dirId, where, e);
        return;
      }
      // The listing is read without any lock: a store may take long to list a large directory.
      try (it) {
        while (true) {
          List<UfsStatus> batch = nextBatch(it);
          if (!apply(pass, batch)) {
            return;
          }
          if (batch.size() < batchSize) {
            break;
          }
        }
      } catch (ListingFailure e) {
        listingFailed(path, dirId, where, e.getCause());
        return;
      }
      while (sweep(pass)) {
        // one page of the namespace's children per staged batch
      }
      finish(pass);
    } finally {
      staging.closeSession(dirId);
    }
  }

  private List<UfsStatus> nextBatch(UnderFileSystem.CloseableIterator<UfsStatus> it)
      throws ListingFailure {
    List<UfsStatus> batch = new ArrayList<>(batchSize);
    try {
      while (batch.size() < batchSize && it.hasNext()) {
        batch.add(it.next());
      }
    } catch (UncheckedIOException e) {
      throw new ListingFailure(e.getCause());
    }
    return batch;
  }

  /**
   * Locks the directory for reading as it is now; its path, or null (nothing locked) when it is
   * gone or no longer a directory.
   */
  private String lockDirectory(Change c, long dirId) throws IOException {
    for (int tries = 0; tries < 3; tries++) {
      String dirPath = c.view().pathOf(dirId);
      if (dirPath == null) {
        return null;
      }
      c.lock(PathLocks.Request.reading(dirPath));
      InodeEntry dir = c.view().get(dirId);
      if (dir != null && dir.getDirectory() && dirPath.equals(c.view().pathOf(dirId))) {
        return dirPath;
      }
      // Renamed or replaced between the look and the lock: look again.
      c.releaseLocks();
    }
    return null;
  }

  /** Stages one batch of the listing; false when the directory is gone and the sync stops. */
  private boolean apply(Pass pass, List<UfsStatus> batch) throws IOException {
    Change c = runner.blocking();
    try {
      String dirPath = lockDirectory(c, pass.dirId);
      if (dirPath == null) {
        return false;
      }
      List<Edit> edits = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      int added = 0;
      for (UfsStatus s : batch) {
        String name = s.name();
        if (!UfsMetadataLoader.validName(name)) {
          continue;
        }
        InodeEntry existing = c.view().child(pass.dirId, name);
        if (existing != null) {
          pass.seen.add(existing.getId());
        }
        String childPath = PathNames.join(dirPath, name);
        if (pass.session.touched(name)) {
          // Changed through Strata since the listing began: that wins.
          continue;
        }
        if (existing == null) {
          // A name new to the namespace: put unless a change holds it for writing (that
          // change decides) or another load puts it first. Loads of single paths hold it
          // for reading and put it only if absent too.
          if (!c.tryLockMore(PathLocks.Request.readingOnly(childPath))) {
            continue;
          }
          InodeEntry.Builder child =
              loader.toInode(s, c.newInodeId(), pass.dirId, name, pass.startMs);
          edits.add(new Edit.Discovered(child.build()));
          pass.seen.add(child.getId());
          added++;
          continue;
        }
        if (!c.tryLockMore(PathLocks.Request.writingOnly(childPath))) {
          // Being changed now: that change decides.
          continue;
        }
        long now =
            reconciler.reconcile(
                c, existing, childPath, Optional.of(s), pass.startMs, edits, files);
        if (now != existing.getId()) {
          pass.changed = true;
          if (now >= 0) {
            pass.seen.add(now);
          }
        }
      }
      stage(c, edits, files);
      loader.countLoaded(added);
      if (added > 0) {
        pass.changed = true;
        if (pass.wasLoaded) {
          policy.countAdded(added);
        }
      }
      return true;
    } finally {
      c.releaseLocks();
    }
  }

  private void stage(Change c, List<Edit> edits, List<Long> files) throws IOException {
    if (edits.isEmpty()) {
      return;
    }
    Namespace.join(c.commitDiscovered(edits).applied());
    tree.workers().removeFiles(files);
  }

  /**
   * Deletes one page of the children that the listing did not return; false when there are no more
   * pages (or the directory is gone).
   */
  private boolean sweep(Pass pass) throws IOException {
    Change c = runner.blocking();
    try {
      String dirPath = lockDirectory(c, pass.dirId);
      if (dirPath == null) {
        return false;
      }
      List<InodeStore.Child> page = store.children(pass.dirId, pass.sweepAfter, batchSize);
      List<Edit> edits = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      for (InodeStore.Child child : page) {
        if (pass.seen.contains(child.id()) || pass.session.touched(child.name())) {
          continue;
        }
        InodeEntry n = c.view().child(pass.dirId, child.name());
        if (n == null || n.getId() != child.id()) {
          continue;
        }
        String childPath = PathNames.join(dirPath, child.name());
        if (!c.tryLockMore(PathLocks.Request.writingOnly(childPath))) {
          continue;
        }
        if (reconciler.reconcile(c, n, childPath, Optional.empty(), pass.startMs, edits, files)
            != child.id()) {
          pass.changed = true;
        }
      }
      stage(c, edits, files);
      if (page.size() < batchSize) {
        return false;
      }
      pass.sweepAfter = page.get(page.size() - 1).name();
      return true;
    } finally {
      c.releaseLocks();
    }
  }

  /**
   * Records the listing: journaled with the directory when it was loaded for the first time or
   * something changed, otherwise only remembered, so an unchanged directory costs no journal.
   */
  private void finish(Pass pass) throws IOException {
    Change c = runner.blocking();
    try {
      if (lockDirectory(c, pass.dirId) == null) {
        return;
      }
      InodeEntry dir = c.view().get(pass.dirId);
      if (!dir.getChildrenLoaded() || pass.changed) {
        stage(
            c,
            List.of(
                Edit.update(
                    pass.dirId,
                    cur ->
                        cur == null || !cur.getDirectory()
                            ? null
                            : cur.toBuilder()
                                .setChildrenLoaded(true)
                                .setUfsSyncTimeMs(Math.max(cur.getUfsSyncTimeMs(), pass.startMs)))),
            List.of());
      } else {
        policy.listingChecked(pass.dirId, pass.startMs);
      }
    } finally {
      c.releaseLocks();
    }
  }

  /**
   * A listing failed: the directory may be gone from the store or no longer a directory, which a
   * check of its own status finds and applies. Otherwise the failure is the caller's.
   */
  private void listingFailed(String path, long dirId, MountTable.Resolution where, Throwable cause)
      throws IOException {
    if (cause instanceof StrataException se && se.code() == ErrorCode.DEADLINE_EXCEEDED) {
      // The store does not answer: asking it about the directory would wait as long again.
      throw se;
    }
    InodeEntry dir = tree.get(dirId);
    if (dir != null && tree.mounts().at(path) == null) {
      Change c = runner.blocking();
      try {
        c.lock(PathLocks.Request.writing(path));
        reconciler.checkStatus(c, path);
        Namespace.join(c.stagedAhead());
      } finally {
        c.releaseLocks();
      }
      InodeEntry now = tree.get(dirId);
      if (now == null || !now.getDirectory()) {
        return;
      }
    }
    if (cause instanceof NoSuchFileException) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "Cannot list "
              + path
              + ": its under-store directory "
              + where.ufsUri()
              + " does not exist",
          cause);
    }
    throw new StrataException(
        ErrorCode.UNAVAILABLE,
        "Cannot list "
            + path
            + " in its under"
            + " store ("
            + where.ufsUri()
            + "): "
            + cause.getMessage()
            + "; retry later",
        cause);
  }
}
