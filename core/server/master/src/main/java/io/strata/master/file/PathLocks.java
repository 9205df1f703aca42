package io.strata.master.file;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.PathNames;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.StampedLock;

/**
 * Locks on namespace paths, which a change holds from before it looks at its paths until its
 * journal entries are applied, so that two changes of one path (or of a folder and something in it)
 * happen one after the other, in the under store and in the namespace alike, while changes of
 * different paths run at once. A change locks each path it changes for writing and every ancestor
 * of those paths for reading (as Alluxio's {@code LockedInodePath} and HDFS's per-operation locks
 * do): a write lock on a folder therefore keeps every change below it out. Reads of the namespace
 * take none of these.
 *
 * <p>Locks are taken in one global order (the paths' string order, in which a folder comes before
 * everything in it), all at once, so two changes never wait for each other. A lock is not tied to a
 * thread: a change takes its locks on one thread and they are released on whichever thread applies
 * its entries. Entries for paths nobody holds are dropped, so the table holds only paths in use.
 */
final class PathLocks {
  /** The paths a change locks, each for reading or writing. Immutable. */
  static final class Request {
    /** Path to true (write) or false (read), in lock order. */
    private final TreeMap<String, Boolean> paths;

    private Request(TreeMap<String, Boolean> paths) {
      this.paths = paths;
    }

    /** Write locks on {@code paths} and read locks on all their ancestors. */
    static Request writing(String... paths) {
      return new Request(new TreeMap<>()).plusWrite(paths);
    }

    /** Read locks on {@code path} and all its ancestors. */
    static Request reading(String path) {
      TreeMap<String, Boolean> m = new TreeMap<>();
      addWithAncestors(m, path, false);
      return new Request(m);
    }

    /**
     * A write lock on {@code path} alone, for a change that holds its ancestors' locks already and
     * takes this one with {@link PathLocks#tryAcquire} (which never waits, so the order does not
     * matter).
     */
    static Request writingOnly(String path) {
      TreeMap<String, Boolean> m = new TreeMap<>();
      m.put(path, true);
      return new Request(m);
    }

    /** A read lock on {@code path} alone; see {@link #writingOnly}. */
    static Request readingOnly(String path) {
      TreeMap<String, Boolean> m = new TreeMap<>();
      m.put(path, false);
      return new Request(m);
    }

    /** This request with write locks on {@code more} (and read locks on their ancestors). */
    Request plusWrite(String... more) {
      TreeMap<String, Boolean> m = new TreeMap<>(paths);
      for (String p : more) {
        addWithAncestors(m, p, true);
      }
      return new Request(m);
    }

    /** Whether {@code path} is locked for writing by this request. */
    boolean writes(String path) {
      return Boolean.TRUE.equals(paths.get(path));
    }

    private static void addWithAncestors(TreeMap<String, Boolean> m, String path, boolean write) {
      m.merge(path, write, Boolean::logicalOr);
      for (String p = PathNames.parent(path); p != null; p = PathNames.parent(p)) {
        m.putIfAbsent(p, false);
      }
    }

    @Override
    public String toString() {
      return paths.toString();
    }
  }

  /** One path's lock and how many changes hold or wait for it (guarded by the table). */
  private static final class Entry {
    final StampedLock lock = new StampedLock();
    int users;
  }

  /** Locks taken by one change, released together. */
  final class Held {
    private final List<String> paths = new ArrayList<>();
    private final List<Entry> entries = new ArrayList<>();
    private final List<Long> stamps = new ArrayList<>();
    private boolean released;

    /** Releases every lock (idempotent; any thread). */
    synchronized void release() {
      if (released) {
        return;
      }
      released = true;
      for (int i = entries.size() - 1; i >= 0; i--) {
        entries.get(i).lock.unlock(stamps.get(i));
        unuse(paths.get(i), entries.get(i));
      }
    }
  }

  private final ConcurrentHashMap<String, Entry> table = new ConcurrentHashMap<>();
  private final Counter waits;

  PathLocks(MeterRegistry registry) {
    this.waits =
        Counter.builder(MetricNames.MASTER_PATH_LOCK_WAITS)
            .description("Master calls that waited for a path another change held")
            .register(registry);
  }

  /**
   * Takes every lock of {@code request} without waiting; null when one is held in a way that
   * conflicts (nothing is then held).
   */
  Held tryAcquire(Request request) {
    Held held = new Held();
    for (Map.Entry<String, Boolean> p : request.paths.entrySet()) {
      Entry e = use(p.getKey());
      long stamp = p.getValue() ? e.lock.tryWriteLock() : e.lock.tryReadLock();
      if (stamp == 0) {
        unuse(p.getKey(), e);
        held.release();
        return null;
      }
      held.paths.add(p.getKey());
      held.entries.add(e);
      held.stamps.add(stamp);
    }
    return held;
  }

  /**
   * Takes every lock of {@code request}, waiting for changes that hold them, at most {@code
   * timeoutNanos} in all.
   *
   * @throws StrataException UNAVAILABLE naming the path when the wait ran out
   * @throws InterruptedException when interrupted while waiting (nothing is then held)
   */
  Held acquire(Request request, long timeoutNanos) throws StrataException, InterruptedException {
    Held quick = tryAcquire(request);
    if (quick != null) {
      return quick;
    }
    waits.increment();
    long deadline = System.nanoTime() + timeoutNanos;
    Held held = new Held();
    try {
      for (Map.Entry<String, Boolean> p : request.paths.entrySet()) {
        Entry e = use(p.getKey());
        long left = Math.max(0, deadline - System.nanoTime());
        long stamp;
        try {
          stamp =
              p.getValue()
                  ? e.lock.tryWriteLock(left, TimeUnit.NANOSECONDS)
                  : e.lock.tryReadLock(left, TimeUnit.NANOSECONDS);
        } catch (InterruptedException ie) {
          unuse(p.getKey(), e);
          throw ie;
        }
        if (stamp == 0) {
          unuse(p.getKey(), e);
          throw StrataException.unavailable(
              "Timed out after "
                  + TimeUnit.NANOSECONDS.toSeconds(timeoutNanos)
                  + " s waiting for another change"
                  + " of "
                  + p.getKey()
                  + " to finish (is its under store slow?); retry later",
              null);
        }
        held.paths.add(p.getKey());
        held.entries.add(e);
        held.stamps.add(stamp);
      }
      return held;
    } catch (StrataException | InterruptedException | RuntimeException e) {
      held.release();
      throw e;
    }
  }

  /** Paths with an entry in the table: held or waited for. For tests. */
  int size() {
    return table.size();
  }

  private Entry use(String path) {
    return table.compute(
        path,
        (k, e) -> {
          Entry entry = e == null ? new Entry() : e;
          entry.users++;
          return entry;
        });
  }

  private void unuse(String path, Entry entry) {
    table.computeIfPresent(
        path,
        (k, e) -> {
          if (e != entry) {
            return e;
          }
          return --e.users == 0 ? null : e;
        });
  }
}
