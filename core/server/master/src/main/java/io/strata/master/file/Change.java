package io.strata.master.file;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.journal.CallIdentity;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * One change of the namespace being made: the path locks it holds, the namespace it sees (the
 * applied store plus the changes staged ahead of it), the under stores it may call, and how it
 * stages its entries. Made by a {@link ChangeRunner}, used by one thread at a time.
 *
 * <p>A change first runs <em>inline</em>, on the thread that received the call: it may take locks
 * only if they are free and may not call a store; the first time it would wait for a lock or call a
 * store it gives up ({@link NeedsLane}), having changed nothing, and runs again from the start on
 * its mount's lane, where it may wait. So calls that need neither (creating a file in a folder
 * already known, completing it, changing attributes) cost no thread hand-off, and a store that does
 * not answer holds only its own mount's lane.
 */
final class Change {
  /** Thrown inline where the change would have to wait or call a store; no stack trace. */
  static final class NeedsLane extends RuntimeException {
    static final NeedsLane INSTANCE = new NeedsLane();

    private NeedsLane() {
      super("needs its mount's lane", null, false, false);
    }
  }

  /** What every change of one master shares. */
  record Env(
      InodeTree tree,
      ChangeStaging staging,
      PathLocks locks,
      long lockTimeoutNanos,
      CallInodes callInodes) {}

  private final Env env;
  private final CallIdentity caller;
  private final boolean retried;
  private final boolean inline;
  private final long deadlineNanos;
  private PathLocks.Held held;
  private final List<PathLocks.Held> more = new ArrayList<>();

  /** The inodes this change found in an under store and staged (not ones others found). */
  private final Set<Long> discovered = new HashSet<>();

  /** The apply of the latest change staged when this one staged or found a loaded inode. */
  private CompletableFuture<?> stagedAhead = CompletableFuture.completedFuture(null);

  /**
   * @param retried the client's call is a second or later attempt
   * @param deadlineNanos the caller's deadline ({@link System#nanoTime}), or {@link Long#MAX_VALUE}
   */
  Change(Env env, CallIdentity caller, boolean retried, boolean inline, long deadlineNanos) {
    this.env = env;
    this.caller = caller;
    this.retried = retried;
    this.inline = inline;
    this.deadlineNanos = deadlineNanos;
  }

  boolean inline() {
    return inline;
  }

  // ---- locks ----

  /**
   * Takes the locks of {@code request}, giving up those held so far (a change that finds it needs
   * more locks asks again for all of them; it has changed nothing yet).
   */
  void lock(PathLocks.Request request) throws IOException {
    releaseLocks();
    if (inline) {
      held = env.locks().tryAcquire(request);
      if (held == null) {
        throw NeedsLane.INSTANCE;
      }
      return;
    }
    long wait = env.lockTimeoutNanos();
    if (deadlineNanos != Long.MAX_VALUE) {
      wait = Math.min(wait, Math.max(0, deadlineNanos - System.nanoTime()));
    }
    try {
      held = env.locks().acquire(request, wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StrataException.unavailable("Interrupted while waiting for a path lock", e);
    }
  }

  /**
   * Takes more locks, beside those held, only if they are free now; false (nothing more held)
   * otherwise. Never waits, so it cannot deadlock whatever the order.
   */
  boolean tryLockMore(PathLocks.Request request) {
    PathLocks.Held h = env.locks().tryAcquire(request);
    if (h == null) {
      return false;
    }
    more.add(h);
    return true;
  }

  /** Releases every lock held. */
  void releaseLocks() {
    if (held != null) {
      held.release();
      held = null;
    }
    for (PathLocks.Held h : more) {
      h.release();
    }
    more.clear();
  }

  /**
   * Releases the locks once {@code result} completes (the change's entries applied, or it failed)
   * and returns a future that completes after that.
   */
  <T> CompletableFuture<T> finish(CompletableFuture<T> result) {
    return result.whenComplete((v, e) -> releaseLocks());
  }

  // ---- the namespace as this change sees it ----

  PendingChanges view() {
    return env.staging().view();
  }

  Walk walk(String path) {
    return view().walk(path);
  }

  InodeTree tree() {
    return env.tree();
  }

  /**
   * Walks a path, first loading from the under store the components the namespace may be missing
   * (below folders whose children were never loaded, or whose listing is due for a sync). Loaded
   * inodes are staged at once ({@link ChangeStaging#discover}); what this change stages later is
   * built on them.
   */
  Walk walkLoading(String path, SyncInterval call) throws IOException {
    InodeTree tree = env.tree();
    Walk w = walk(path);
    while (!w.complete() && tree.loadable(w, call)) {
      int depth = w.found() + 1;
      String childPath = w.pathAt(depth);
      long now = System.currentTimeMillis();
      InodeEntry parent = w.last();
      if (parent.getChildrenLoaded()) {
        tree.policy().countStatusCheck();
      }
      Optional<UfsStatus> s = stat(tree.mounts().resolve(childPath));
      if (s.isEmpty()) {
        break;
      }
      String name = w.names().get(depth - 1);
      InodeEntry.Builder child =
          tree.loader().toInode(s.get(), newInodeId(), parent.getId(), name, now);
      InodeEntry made = env.staging().discover(child);
      if (made == null) {
        break;
      }
      stagedAhead = env.staging().lastStaged();
      if (made.getId() == child.getId()) {
        discovered.add(made.getId());
        env.callInodes().record(caller, made.getId());
        tree.loader().countLoaded(1);
        if (made.getDirectory()) {
          tree.policy().statusChecked(made.getId(), now);
        }
      }
      w.inodes().add(made);
    }
    // What the walk found may be staged by another change and not applied yet: a read that
    // answers from the applied store must wait for it too.
    for (InodeEntry n : w.inodes()) {
      if (tree.store().get(n.getId()) == null) {
        stagedAhead = env.staging().lastStaged();
        break;
      }
    }
    return w;
  }

  /**
   * Whether {@code n}, which a create finds at its path, is most likely what an earlier attempt of
   * this very call made: this is a retry, and either the namespace lacked {@code n} until this
   * change found it in the under store, or an earlier attempt of the call made or found it on this
   * master ({@link CallInodes}). An attempt that made its entry in the store and then lost its
   * journal entry with a failed leader leaves the first; an attempt still running here when the
   * client gave up on it and retried leaves the second. The retry takes it as its own result rather
   * than failing with "already exists" for its own work.
   */
  boolean leftByAnEarlierAttempt(InodeEntry n) {
    return retried
        && (discovered.contains(n.getId()) || env.callInodes().madeBy(caller, n.getId()));
  }

  /** Records that this change made inode {@code id}, for the later attempts of its call. */
  void made(long id) {
    env.callInodes().record(caller, id);
  }

  /** {@link #walkLoading(String, SyncInterval)} with the mount's or the default interval. */
  Walk walkLoading(String path) throws IOException {
    return walkLoading(path, null);
  }

  /** The inode at a path, loading what is missing; NOT_FOUND when it exists nowhere. */
  InodeEntry resolve(String path) throws IOException {
    Walk w = walkLoading(path);
    if (!w.complete()) {
      throw StrataException.notFound(path);
    }
    return w.last();
  }

  // ---- under stores ----

  /** A mount's store, every call bounded in time; inline, the change moves to its lane. */
  UnderFileSystem store(MountInfo mount) throws IOException {
    if (inline) {
      throw NeedsLane.INSTANCE;
    }
    return env.tree().loader().store(mount);
  }

  /** The status of a path in its mount's store, or empty when the store does not have it. */
  Optional<UfsStatus> stat(MountTable.Resolution r) throws IOException {
    try {
      return Optional.of(store(r.mount()).getStatus(r.ufsUri()));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  // ---- staging ----

  long newInodeId() {
    return env.tree().newInodeId();
  }

  /** Stages this change's edits as the caller's change; see {@link ChangeStaging#stage}. */
  ChangeStaging.Staged commit(List<Edit> edits) throws StrataException {
    ChangeStaging.Staged s = env.staging().stage(edits, caller, false);
    stagedAhead = s.applied();
    return s;
  }

  /** Stages what a load or sync found in a store (announced as nobody's change). */
  ChangeStaging.Staged commitDiscovered(List<Edit> edits) throws StrataException {
    ChangeStaging.Staged s = env.staging().stage(edits, null, true);
    stagedAhead = s.applied();
    return s;
  }

  /**
   * Completes once everything this change staged, or found staged by another change and used, is
   * applied: a read that loaded metadata answers from the applied store after it.
   */
  CompletableFuture<?> stagedAhead() {
    return stagedAhead;
  }

  /** Fails with STALE when {@code fileId} is given (not 0) and {@code n} is another inode. */
  static void checkSameFile(InodeEntry n, long fileId, String path, String outcome)
      throws StrataException {
    if (fileId != 0 && n.getId() != fileId) {
      throw new StrataException(
          ErrorCode.STALE,
          path
              + " is another file now (id "
              + n.getId()
              + ", not "
              + fileId
              + "): another writer replaced it; "
              + outcome);
    }
  }
}
