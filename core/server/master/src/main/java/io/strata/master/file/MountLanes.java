package io.strata.master.file;

import io.strata.common.DaemonThreads;
import io.strata.proto.MountInfo;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One lane per mount: the threads on which the master's calls that must wait -- for their mount's
 * under store, or for a path another change holds -- run, so that a store that stops answering
 * holds its own mount's lane and nothing else. A lane has at most {@code strata.master.ufs.threads}
 * threads, made when needed and ended when idle; more calls queue (in memory, holding no thread)
 * and fail at once when their store is taken as not answering.
 */
final class MountLanes implements AutoCloseable {
  private final int threads;
  private final ConcurrentHashMap<Long, ThreadPoolExecutor> lanes = new ConcurrentHashMap<>();
  private volatile boolean closed;

  MountLanes(int threads) {
    this.threads = Math.max(1, threads);
  }

  /** The lane of a mount. */
  Executor lane(MountInfo mount) {
    if (closed) {
      throw new java.util.concurrent.RejectedExecutionException("closed");
    }
    return lanes.computeIfAbsent(
        mount.getMountId(),
        id -> {
          ThreadPoolExecutor e =
              new ThreadPoolExecutor(
                  threads,
                  threads,
                  30,
                  TimeUnit.SECONDS,
                  new LinkedBlockingQueue<>(),
                  DaemonThreads.numbered("master-lane-" + mount.getPath() + "-"));
          e.allowCoreThreadTimeOut(true);
          return e;
        });
  }

  @Override
  public void close() {
    closed = true;
    for (ThreadPoolExecutor e : lanes.values()) {
      e.shutdownNow();
    }
    for (ThreadPoolExecutor e : lanes.values()) {
      try {
        e.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
