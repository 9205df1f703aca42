package io.strata.master.file;

import io.strata.common.error.StrataException;
import io.strata.master.journal.CallIdentity;
import io.strata.master.journal.JournalSystem;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Hands changes to the journal in one order, each checked against and built from the namespace as
 * every change before it leaves it ({@link PendingChanges}). This is the one place where changes
 * are serialised, and only for the time it takes to work out their entries in memory: no
 * under-store call and no wait for a commit happens under its lock.
 *
 * <p>Staging a change: its {@link Edit}s are turned into journal entries against the pending view
 * (an update that fails fails the change, and nothing of it is staged), the names it changes in
 * folders whose listing is being synced are noted for that sync, the paths it changes are named for
 * watchers, its entries become the view's latest state, and it goes to the journal. Once applied,
 * its changes are published to the {@link ChangeFeed} (in journal order, on the apply thread) and
 * its marks in the view are dropped.
 */
final class ChangeStaging {
  /** A staged change: its entries as staged, and the future of their apply. */
  record Staged(List<JournalEntry> entries, CompletableFuture<List<JournalEntry>> applied) {
    /** The last inode entry with that id, or null. */
    InodeEntry inode(long id) {
      InodeEntry found = null;
      for (JournalEntry e : entries) {
        if (e.hasInode() && e.getInode().getId() == id) {
          found = e.getInode();
        }
      }
      return found;
    }
  }

  /** Names changed through Strata in a directory while its listing is loaded or synced. */
  static final class ListingSession {
    private int users;
    private final Set<String> touched = new HashSet<>();

    /** Whether the name changed through Strata since the session opened. */
    synchronized boolean touched(String name) {
      return touched.contains(name);
    }

    private synchronized void touch(String name) {
      touched.add(name);
    }
  }

  private final JournalSystem journal;
  private final InodeStore store;
  private final PendingChanges pending;
  private final ChangeFeed changes;
  private final MountTable mounts;
  private final ReentrantLock lock = new ReentrantLock();

  /** Guarded by lock. */
  private long stamps;

  /** The staging clock: never goes back. Guarded by lock. */
  private long lastNowNs;

  /** Guarded by lock. */
  private final Map<Long, ListingSession> sessions = new HashMap<>();

  /** The apply of the change staged last. Guarded by lock. */
  private CompletableFuture<?> lastStaged = CompletableFuture.completedFuture(null);

  ChangeStaging(
      JournalSystem journal, PendingChanges pending, ChangeFeed changes, MountTable mounts) {
    this.journal = journal;
    this.store = journal.store();
    this.pending = pending;
    this.changes = changes;
    this.mounts = mounts;
  }

  /** The namespace as changes see it. */
  PendingChanges view() {
    return pending;
  }

  /**
   * Stages a change made by {@code caller} (null: the master itself) and hands it to the journal.
   * With {@code discovered}, the change is what a load or sync found in an under store: its new
   * inodes in folders never listed are not announced, and its notices name no client (the client
   * whose call found it holds none of it yet).
   *
   * @throws StrataException when an update refuses the change, or this master does not lead
   */
  Staged stage(List<Edit> edits, CallIdentity caller, boolean discovered) throws StrataException {
    lock.lock();
    try {
      journal.checkWritable();
      List<JournalEntry> entries = evaluate(edits);
      return submit(entries, caller, discovered);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Stages an inode a load found in its store, unless the view has a child of that name in that
   * folder by now, or the folder is gone (another load found it first, or a change made it);
   * returns the inode at that name afterwards (null when the folder is gone). The caller waits for
   * nothing: later changes are built on the view, which has it.
   */
  InodeEntry discover(InodeEntry.Builder found) throws StrataException {
    lock.lock();
    try {
      journal.checkWritable();
      InodeEntry parent = pending.get(found.getParentId());
      if (parent == null || !parent.getDirectory()) {
        return null;
      }
      InodeEntry existing = pending.child(found.getParentId(), found.getName());
      if (existing != null) {
        return existing;
      }
      InodeEntry n = found.build();
      submit(List.of(JournalEntry.newBuilder().setInode(n).build()), null, true);
      return n;
    } finally {
      lock.unlock();
    }
  }

  /** Lock held. */
  private Staged submit(List<JournalEntry> entries, CallIdentity caller, boolean discovered)
      throws StrataException {
    if (entries.isEmpty()) {
      return new Staged(entries, CompletableFuture.completedFuture(List.of()));
    }
    if (!sessions.isEmpty()) {
      noteTouched(entries);
    }
    List<ChangeDescriptions.PathChange> described =
        new ChangeDescriptions(pending, store, mounts).describe(entries, discovered);
    long stamp = ++stamps;
    PendingChanges.Marks marks = pending.stage(stamp, entries);
    String clientId = discovered || caller == null ? "" : caller.clientId();
    CompletableFuture<List<JournalEntry>> applied;
    try {
      applied =
          journal.submit(
              entries,
              discovered ? null : caller,
              done -> {
                if (!described.isEmpty()) {
                  changes.publish(ChangeDescriptions.notices(described, done, clientId));
                }
                pending.applied(marks);
              });
    } catch (StrataException | RuntimeException e) {
      pending.applied(marks);
      throw e;
    }
    lastStaged = applied;
    return new Staged(entries, applied);
  }

  /** Turns edits into entries against the view plus the change's own earlier entries. */
  private List<JournalEntry> evaluate(List<Edit> edits) throws StrataException {
    List<JournalEntry> out = new ArrayList<>(edits.size());
    // This change's own inodes so far: an update after a put of the same inode sees the put.
    Map<Long, InodeEntry> own = new HashMap<>();
    Set<Long> gone = new HashSet<>();
    long nowNs = Math.max(lastNowNs + 1, InodeTimes.nowNs());
    lastNowNs = nowNs;
    for (Edit edit : edits) {
      JournalEntry entry;
      if (edit instanceof Edit.Put p) {
        entry = p.entry();
      } else if (edit instanceof Edit.Discovered d) {
        InodeEntry n = d.inode();
        InodeEntry parent = current(n.getParentId(), own, gone);
        boolean taken =
            parent == null
                || !parent.getDirectory()
                || pending.child(n.getParentId(), n.getName()) != null;
        entry = taken ? null : JournalEntry.newBuilder().setInode(n).build();
      } else if (edit instanceof Edit.Update u) {
        InodeEntry.Builder b = u.update().apply(current(u.id(), own, gone));
        entry = b == null ? null : JournalEntry.newBuilder().setInode(b).build();
      } else {
        InodeEntry dir = current(((Edit.FolderChanged) edit).dirId(), own, gone);
        entry =
            dir == null || !dir.getDirectory()
                ? null
                : JournalEntry.newBuilder()
                    .setInode(InodeTimes.modified(dir.toBuilder(), nowNs))
                    .build();
      }
      if (entry == null) {
        continue;
      }
      out.add(entry);
      switch (entry.getEntryCase()) {
        case INODE -> {
          own.put(entry.getInode().getId(), entry.getInode());
          gone.remove(entry.getInode().getId());
        }
        case DELETE_INODE -> {
          own.remove(entry.getDeleteInode().getId());
          gone.add(entry.getDeleteInode().getId());
        }
        case RENAME -> {
          RenameEntry r = entry.getRename();
          InodeEntry old = current(r.getId(), own, gone);
          if (old != null) {
            InodeEntry.Builder moved =
                old.toBuilder()
                    .setParentId(r.getNewParentId())
                    .setName(r.getNewName())
                    .setModificationTimeMs(r.getModificationTimeMs());
            if (r.hasChangeTimeNs()) {
              moved.setChangeTimeNs(r.getChangeTimeNs());
            }
            own.put(r.getId(), moved.build());
          }
        }
        default -> {}
      }
    }
    return out;
  }

  private InodeEntry current(long id, Map<Long, InodeEntry> own, Set<Long> gone) {
    if (gone.contains(id)) {
      return null;
    }
    InodeEntry mine = own.get(id);
    return mine != null ? mine : pending.get(id);
  }

  /**
   * Completes once the change staged last (and so every change staged before it) is applied, or
   * fails when that one will not be.
   */
  CompletableFuture<?> lastStaged() {
    lock.lock();
    try {
      return lastStaged;
    } finally {
      lock.unlock();
    }
  }

  /** Drops everything in flight: this master stopped leading. */
  void clear() {
    lock.lock();
    try {
      pending.clear();
    } finally {
      lock.unlock();
    }
  }

  // ---- listing sessions ----

  /** Starts remembering the names changed in a directory. */
  ListingSession openSession(long dirId) {
    lock.lock();
    try {
      ListingSession s = sessions.computeIfAbsent(dirId, k -> new ListingSession());
      s.users++;
      return s;
    } finally {
      lock.unlock();
    }
  }

  /** Ends what {@link #openSession} started. */
  void closeSession(long dirId) {
    lock.lock();
    try {
      ListingSession s = sessions.get(dirId);
      if (s != null && --s.users == 0) {
        sessions.remove(dirId);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Lock held. */
  private void noteTouched(List<JournalEntry> entries) {
    for (JournalEntry e : entries) {
      switch (e.getEntryCase()) {
        case INODE -> touch(e.getInode().getParentId(), e.getInode().getName());
        case DELETE_INODE -> {
          InodeEntry n = pending.get(e.getDeleteInode().getId());
          if (n != null) {
            touch(n.getParentId(), n.getName());
          }
        }
        case RENAME -> {
          InodeEntry n = pending.get(e.getRename().getId());
          if (n != null) {
            touch(n.getParentId(), n.getName());
          }
          touch(e.getRename().getNewParentId(), e.getRename().getNewName());
        }
        default -> {}
      }
    }
  }

  private void touch(long parentId, String name) {
    ListingSession s = sessions.get(parentId);
    if (s != null) {
      s.touch(name);
    }
  }
}
