package io.strata.client;

import io.strata.client.master.MasterClient;
import io.strata.common.error.StrataException;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workers the master reports live, fetched at most once per {@code
 * strata.client.worker.list.ttl} however many reads ask, so that choosing a worker for a block
 * costs no RPC on the read path. Thread-safe; readers never wait unless the list is stale.
 */
final class LiveWorkers {
  private static final Logger LOG = LoggerFactory.getLogger(LiveWorkers.class);
  private final MasterClient master;
  private final long ttlNanos;
  private final ReentrantLock refreshLock = new ReentrantLock();
  private volatile Snapshot snapshot;

  private record Snapshot(List<WorkerInfo> workers, long fetchedNanos) {}

  LiveWorkers(MasterClient master, Duration ttl) {
    this.master = master;
    this.ttlNanos = ttl.toNanos();
  }

  /** Every worker of the cluster, live or lost, straight from the master. */
  List<WorkerInfo> all() throws StrataException {
    List<WorkerInfo> workers =
        master.call(s -> s.getWorkers(GetWorkersRequest.getDefaultInstance())).getWorkersList();
    snapshot = new Snapshot(live(workers), System.nanoTime());
    return workers;
  }

  /**
   * The live workers, from the cache while it is fresh. When the list is stale, one caller asks the
   * master while the others go on with the stale list; when the master cannot be reached, the stale
   * list is kept for another period, so reads of cached data go on without it.
   */
  List<WorkerInfo> live() throws StrataException {
    Snapshot s = snapshot;
    if (s != null && System.nanoTime() - s.fetchedNanos < ttlNanos) {
      return s.workers;
    }
    if (s != null && !refreshLock.tryLock()) {
      return s.workers;
    }
    if (s == null) {
      refreshLock.lock();
    }
    try {
      Snapshot now = snapshot;
      if (now != null && System.nanoTime() - now.fetchedNanos < ttlNanos) {
        return now.workers;
      }
      try {
        all();
      } catch (StrataException e) {
        if (now == null) {
          throw e;
        }
        LOG.warn("Cannot refresh the worker list; using the previous one: {}", e.getMessage());
        snapshot = new Snapshot(now.workers, System.nanoTime());
      }
      return snapshot.workers;
    } finally {
      refreshLock.unlock();
    }
  }

  /** Marks the cached list stale so that the next read asks the master (a worker failed). */
  void invalidate() {
    Snapshot s = snapshot;
    if (s != null) {
      snapshot = new Snapshot(s.workers, System.nanoTime() - ttlNanos);
    }
  }

  private static List<WorkerInfo> live(List<WorkerInfo> workers) {
    return workers.stream().filter(w -> w.getState() == WorkerState.WORKER_LIVE).toList();
  }
}
