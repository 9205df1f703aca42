package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
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
 * Keeps a directory's children in step with its under-store directory: loads them when they
 * were never loaded, and re-lists and reconciles them when the directory's sync interval says
 * the listing is due.
 *
 * <p>A sync streams the store's listing with no lock held and applies it in batches, each
 * under the tree's write lock: new names become new inodes, changed files and names whose type
 * changed are replaced by new inodes (their old blocks queued for removal at once), and once the
 * listing is done, children the listing did not return are deleted with their subtrees. Each
 * inode created or kept carries the full status the store listed, so a later GetStatus of any
 * child needs no store call within its interval. Names changed through Strata while the sync
 * runs are left as Strata made them, and files still being written are left alone. A sync that
 * finds nothing to change writes nothing to the journal.
 *
 * <p>At most one load or sync of a directory runs at a time; a caller that finds one running
 * waits for it and uses its result when that listing began after the caller asked.
 */
final class ListingSync {
  private record Running(long startMs, CompletableFuture<Void> done) {}

  /** What one load or sync of a directory has seen and done so far. */
  private static final class Pass {
    final long dirId;
    final boolean wasLoaded;
    final long startMs;
    final InodeTree.ListingSession session;
    final ChildIds seen = new ChildIds();
    boolean changed;
    String sweepAfter = "";

    Pass(long dirId, boolean wasLoaded, long startMs, InodeTree.ListingSession session) {
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
  private final SyncPolicy policy;
  private final UfsMetadataLoader loader;
  private final int batchSize;
  private final ConcurrentHashMap<Long, Running> running = new ConcurrentHashMap<>();

  ListingSync(InodeTree tree) {
    this.tree = tree;
    this.store = tree.store();
    this.policy = tree.policy();
    this.loader = tree.loader();
    this.batchSize = tree.loadBatch();
  }

  /**
   * Makes the children of the directory at a path current under the call's sync interval
   * (null: the mount's or the default). Does nothing for a file. The caller holds no lock.
   */
  void refresh(String path, SyncInterval call) throws IOException {
    long asked = System.currentTimeMillis();
    while (true) {
      InodeEntry dir = tree.resolve(path, call);
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

  private void sync(String path, long dirId, boolean wasLoaded, long startMs)
      throws IOException {
    MountTable.Resolution where = tree.mounts().resolve(path);
    UnderFileSystem ufs = loader.store(where.mount());
    Pass pass = new Pass(dirId, wasLoaded, startMs, tree.write(() -> tree.openSession(dirId)));
    try {
      if (wasLoaded) {
        policy.countListingCheck();
      }
      UnderFileSystem.CloseableIterator<UfsStatus> it;
      try {
        it = ufs.list(where.ufsUri());
      } catch (IOException e) {
        listingFailed(path, dirId, where, e);
        return;
      }
      // The listing is read without the lock: a store may take long to list a large directory.
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
        // one page of the namespace's children per write lock
      }
      finish(pass);
    } finally {
      tree.write(() -> {
        tree.closeSession(dirId);
        return null;
      });
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

  /** Applies one batch of the listing; false when the directory is gone and the sync stops. */
  private boolean apply(Pass pass, List<UfsStatus> batch) throws IOException {
    return tree.write(() -> {
      InodeEntry dir = store.get(pass.dirId);
      String dirPath = tree.pathOf(pass.dirId);
      if (dir == null || !dir.getDirectory() || dirPath == null) {
        return false;
      }
      List<JournalEntry.Builder> entries = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      int added = 0;
      for (UfsStatus s : batch) {
        String name = s.name();
        if (!UfsMetadataLoader.validName(name)) {
          continue;
        }
        long id = store.childId(pass.dirId, name);
        if (pass.session.touched(name)) {
          if (id >= 0) {
            pass.seen.add(id);
          }
          continue;
        }
        if (id < 0) {
          InodeEntry.Builder child = loader.toInode(s, tree.newInodeId(), pass.dirId, name,
              pass.startMs);
          entries.add(InodeTree.inode(child));
          pass.seen.add(child.getId());
          added++;
          continue;
        }
        pass.seen.add(id);
        long now = tree.reconciler().reconcile(store.get(id), PathNames.join(dirPath, name),
            Optional.of(s), pass.startMs, entries, files);
        if (now != id) {
          pass.changed = true;
          if (now >= 0) {
            pass.seen.add(now);
          }
        }
      }
      tree.journalDiscovered(entries);
      tree.workers().removeFiles(files);
      loader.countLoaded(added);
      if (added > 0) {
        pass.changed = true;
        if (pass.wasLoaded) {
          policy.countAdded(added);
        }
      }
      return true;
    });
  }

  /**
   * Deletes one page of the children that the listing did not return; false when there are no
   * more pages (or the directory is gone).
   */
  private boolean sweep(Pass pass) throws IOException {
    return tree.write(() -> {
      InodeEntry dir = store.get(pass.dirId);
      String dirPath = tree.pathOf(pass.dirId);
      if (dir == null || !dir.getDirectory() || dirPath == null) {
        return false;
      }
      List<InodeStore.Child> page = store.children(pass.dirId, pass.sweepAfter, batchSize);
      List<JournalEntry.Builder> entries = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      for (InodeStore.Child c : page) {
        if (pass.seen.contains(c.id()) || pass.session.touched(c.name())) {
          continue;
        }
        InodeEntry n = store.get(c.id());
        if (n != null && tree.reconciler().reconcile(n, PathNames.join(dirPath, c.name()),
            Optional.empty(), pass.startMs, entries, files) != c.id()) {
          pass.changed = true;
        }
      }
      tree.journalDiscovered(entries);
      tree.workers().removeFiles(files);
      if (page.size() < batchSize) {
        return false;
      }
      pass.sweepAfter = page.get(page.size() - 1).name();
      return true;
    });
  }

  /**
   * Records the listing: journaled with the directory when it was loaded for the first time or
   * something changed, otherwise only remembered, so an unchanged directory costs no journal.
   */
  private void finish(Pass pass) throws IOException {
    tree.write(() -> {
      InodeEntry dir = store.get(pass.dirId);
      if (dir == null || !dir.getDirectory()) {
        return null;
      }
      if (!dir.getChildrenLoaded() || pass.changed) {
        tree.journal(List.of(InodeTree.inode(dir.toBuilder().setChildrenLoaded(true)
            .setUfsSyncTimeMs(Math.max(dir.getUfsSyncTimeMs(), pass.startMs)))));
      } else {
        policy.listingChecked(pass.dirId, pass.startMs);
      }
      return null;
    });
  }

  /**
   * A listing failed: the directory may be gone from the store or no longer a directory, which
   * a check of its own status finds and applies. Otherwise the failure is the caller's.
   */
  private void listingFailed(String path, long dirId, MountTable.Resolution where,
      Throwable cause) throws IOException {
    InodeEntry dir = tree.get(dirId);
    if (dir != null && tree.mounts().at(path) == null) {
      tree.reconciler().checkStatus(path, dir);
      InodeEntry now = tree.get(dirId);
      if (now == null || !now.getDirectory()) {
        return;
      }
    }
    if (cause instanceof NoSuchFileException) {
      throw new StrataException(ErrorCode.NOT_FOUND, "Cannot list " + path
          + ": its under-store directory " + where.ufsUri() + " does not exist", cause);
    }
    throw new StrataException(ErrorCode.UNAVAILABLE, "Cannot list " + path + " in its under"
        + " store (" + where.ufsUri() + "): " + cause.getMessage() + "; retry later", cause);
  }
}
