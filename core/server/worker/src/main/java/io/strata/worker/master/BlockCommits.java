package io.strata.worker.master;

import io.grpc.Status;
import io.strata.proto.BlockReport;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.CommitBlocksResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the master of blocks this worker has just cached, a batch at a time: a commit waits at most
 * {@link #DELAY_MS} for others, and every block committed meanwhile goes in one CommitBlocks call.
 * A worker that caches thousands of small files a second (their first reads, or a load) otherwise
 * makes a master call for each, which cost about a fifth of the CPU of a first pass over
 * never-cached small files on a 2-core machine. Fire-and-forget, as single commits were: the
 * heartbeat repeats every block added since the last one, so a lost batch costs only time. A master
 * that predates CommitBlocks is sent single CommitBlock calls from then on. Thread-safe.
 */
final class BlockCommits {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCommits.class);
  static final long DELAY_MS = 2;
  static final int MAX_BATCH = 1000;

  private record Commit(long workerId, BlockReport block) {}

  private final WorkerMasterClient master;
  private final ScheduledExecutorService timer;
  private final ConcurrentLinkedQueue<Commit> pending = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean batches = true;

  BlockCommits(WorkerMasterClient master, ScheduledExecutorService timer) {
    this.master = master;
    this.timer = timer;
  }

  /** Queues a commit; it is sent within {@link #DELAY_MS}. */
  void add(long workerId, BlockReport block) {
    pending.add(new Commit(workerId, block));
    if (scheduled.compareAndSet(false, true)) {
      try {
        // Commits are fire-and-forget; nothing waits for the flush.
        var unused = timer.schedule(this::flush, DELAY_MS, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        scheduled.set(false);
      }
    }
  }

  private void flush() {
    scheduled.set(false);
    while (!pending.isEmpty()) {
      List<BlockReport> batch = new ArrayList<>();
      long id = -1;
      Commit c;
      while (batch.size() < MAX_BATCH
          && (c = pending.peek()) != null
          && (id < 0 || c.workerId() == id)) {
        pending.poll();
        id = c.workerId();
        batch.add(c.block());
      }
      if (!batch.isEmpty()) {
        send(id, batch);
      }
    }
  }

  private void send(long workerId, List<BlockReport> blocks) {
    if (!batches) {
      blocks.forEach(b -> sendOne(workerId, b));
      return;
    }
    CommitBlocksRequest request =
        CommitBlocksRequest.newBuilder().setWorkerId(workerId).addAllBlocks(blocks).build();
    master.<CommitBlocksResponse>send(
        (stub, answer) -> stub.commitBlocks(request, answer),
        t -> {
          if (Status.fromThrowable(t).getCode() == Status.Code.UNIMPLEMENTED) {
            batches = false;
            blocks.forEach(b -> sendOne(workerId, b));
            return;
          }
          LOG.debug("CommitBlocks of {} blocks failed: {}", blocks.size(), t.toString());
        });
  }

  private void sendOne(long workerId, BlockReport block) {
    CommitBlockRequest request =
        CommitBlockRequest.newBuilder().setWorkerId(workerId).setBlock(block).build();
    master.<CommitBlockResponse>send(
        (stub, answer) -> stub.commitBlock(request, answer),
        t -> LOG.debug("CommitBlock of block {} failed: {}", block.getBlockId(), t.toString()));
  }
}
