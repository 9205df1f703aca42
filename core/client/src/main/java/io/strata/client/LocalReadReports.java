package io.strata.client;

import io.grpc.ManagedChannel;
import io.strata.common.DaemonThreads;
import io.strata.proto.ReportLocalReadsRequest;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerServiceGrpc;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells each worker on this machine, once a second, which of its blocks this client read from their
 * files directly (short-circuit without a call, see {@link LocalTiers}) and how many bytes: the
 * worker then keeps those blocks recently used, so that eviction does not take the blocks local
 * readers use most, and counts the reads as cache hits. A report is sent without waiting for its
 * answer and a failed one is dropped: it only informs eviction and metrics. At most {@link
 * #MAX_BLOCKS} blocks per worker per report; more are not named (their bytes still count).
 */
final class LocalReadReports implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LocalReadReports.class);
  static final int MAX_BLOCKS = 100_000;
  private static final long PERIOD_MS = 1000;

  /** What one worker has not been told yet. Guarded by itself. */
  private static final class Pending {
    final WorkerAddress address;
    Set<Long> blocks = new HashSet<>();
    long bytes;

    Pending(WorkerAddress address) {
      this.address = address;
    }
  }

  private final Function<WorkerAddress, ManagedChannel> channels;
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();

  /** Started by the first short-circuit read: a client that never reads locally has no thread. */
  private volatile ScheduledExecutorService timer;

  private boolean closed;

  /**
   * @param channels the gRPC channel of a worker's address
   */
  LocalReadReports(Function<WorkerAddress, ManagedChannel> channels) {
    this.channels = channels;
  }

  private void startTimer() {
    if (timer != null) {
      return;
    }
    synchronized (this) {
      if (timer != null || closed) {
        return;
      }
      ScheduledExecutorService t =
          Executors.newSingleThreadScheduledExecutor(
              DaemonThreads.named("strata-local-read-reports"));
      // Runs until close() shuts the executor down; nothing waits for the periodic task.
      var unused =
          t.scheduleWithFixedDelay(this::send, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
      timer = t;
    }
  }

  /** A block of worker {@code workerId} opened directly. */
  void opened(long workerId, WorkerAddress address, long blockId) {
    startTimer();
    Pending p = pending.computeIfAbsent(workerId, id -> new Pending(address));
    synchronized (p) {
      if (p.blocks.size() < MAX_BLOCKS) {
        p.blocks.add(blockId);
      }
    }
  }

  /** Bytes read from a block file of worker {@code workerId} opened directly. */
  void read(long workerId, WorkerAddress address, long bytes) {
    startTimer();
    Pending p = pending.computeIfAbsent(workerId, id -> new Pending(address));
    synchronized (p) {
      p.bytes += bytes;
    }
  }

  private void send() {
    for (Pending p : pending.values()) {
      ReportLocalReadsRequest.Builder report = ReportLocalReadsRequest.newBuilder();
      synchronized (p) {
        if (p.blocks.isEmpty() && p.bytes == 0) {
          continue;
        }
        report.addAllBlockIds(p.blocks).setBytes(p.bytes);
        p.blocks = new HashSet<>();
        p.bytes = 0;
      }
      try {
        // A report only informs eviction and metrics: nothing waits for its answer, and a
        // failed one is dropped.
        var unused =
            WorkerServiceGrpc.newFutureStub(channels.apply(p.address))
                .withDeadlineAfter(5, TimeUnit.SECONDS)
                .reportLocalReads(report.build());
      } catch (RuntimeException e) {
        LOG.debug("Cannot report local reads to {}: {}", p.address.getHost(), e.toString());
      }
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
