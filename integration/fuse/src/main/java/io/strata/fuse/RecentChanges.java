package io.strata.fuse;

import io.strata.common.PathNames;

/**
 * The last change notices the mount received, numbered in arrival order, so that a status loaded
 * from the master while a notice of its path arrived is not kept: the load may have read the state
 * before the change. A loader takes a {@link #mark()} before it asks, and after it has put the
 * answer asks {@link #changedSince}; a notice that arrives after the put finds the entry and drops
 * it, one that arrived before is found by the question. Either way no stale answer stays.
 *
 * <p>Only the last {@code capacity} notices are kept: a mark older than that, or older than the
 * last reset (every status dropped), counts as changed, which only costs a load again. Thread-safe:
 * notices (from the stream and from the mount's own changes) and questions come from any thread.
 */
final class RecentChanges {
  private final String[] paths;
  private final boolean[] subtrees;

  /** Notices received so far; notice n sits at n % capacity. Guarded by this. */
  private long count;

  /** The count at the last reset. Guarded by this. */
  private long resetAt;

  RecentChanges(int capacity) {
    this.paths = new String[Math.max(1, capacity)];
    this.subtrees = new boolean[paths.length];
  }

  /** A position to ask {@link #changedSince} about later. */
  synchronized long mark() {
    return count;
  }

  /** Records a notice: {@code path} changed, and with {@code subtree} everything below it. */
  synchronized void add(String path, boolean subtree) {
    int slot = (int) (count % paths.length);
    paths[slot] = path;
    subtrees[slot] = subtree;
    count++;
  }

  /** Records that every status was dropped (the stream was reset). */
  synchronized void reset() {
    resetAt = ++count;
  }

  /**
   * Whether a notice since {@code mark} may concern {@code path}: its own, one of an ancestor's
   * subtree, or -- with {@code children} -- one of a direct child (a listing of the folder {@code
   * path} is then out of date).
   */
  synchronized boolean changedSince(String path, long mark, boolean children) {
    if (mark == count) {
      return false;
    }
    if (mark < resetAt || count - mark > paths.length) {
      return true;
    }
    for (long n = mark; n < count; n++) {
      int slot = (int) (n % paths.length);
      String changed = paths[slot];
      if (changed.equals(path)
          || (subtrees[slot] && PathNames.isUnder(path, changed))
          || (children
              && changed.length() > path.length()
              && PathNames.parent(changed).equals(path))) {
        return true;
      }
    }
    return false;
  }
}
