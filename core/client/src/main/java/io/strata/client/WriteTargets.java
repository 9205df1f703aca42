package io.strata.client;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Workers a write lost lately (the worker went away mid-stream, or refused the connection), which
 * new writes avoid for a while: the master lists a dead worker as live until it misses its
 * heartbeats, and a write retried on it would fail again. A worker avoided by every write is used
 * all the same, so that a restarted one is tried as soon as it is back. Thread-safe.
 */
final class WriteTargets {
  private static final long AVOID_NANOS = TimeUnit.SECONDS.toNanos(30);

  private final Map<WorkerAddress, Long> avoidUntil = new ConcurrentHashMap<>();

  /**
   * Whether a write failed because its worker could not be reached (gone, restarting or stalled),
   * as opposed to refused: only such a write is worth making again elsewhere.
   */
  static boolean workerAway(Throwable failure) {
    return failure instanceof StrataException s
        && (s.code() == ErrorCode.UNAVAILABLE || s.code() == ErrorCode.DEADLINE_EXCEEDED);
  }

  /** A write to {@code worker} failed because the worker could not be reached. */
  void failed(WorkerAddress worker) {
    if (worker != null) {
      avoidUntil.put(worker, System.nanoTime() + AVOID_NANOS);
    }
  }

  /** {@code live} without the workers writes avoid now; all of {@code live} when none is left. */
  List<WorkerInfo> usable(List<WorkerInfo> live) {
    if (avoidUntil.isEmpty()) {
      return live;
    }
    long now = System.nanoTime();
    avoidUntil.values().removeIf(until -> until - now <= 0);
    List<WorkerInfo> out = new ArrayList<>(live.size());
    for (WorkerInfo w : live) {
      if (!avoidUntil.containsKey(w.getAddress())) {
        out.add(w);
      }
    }
    return out.isEmpty() ? live : out;
  }
}
