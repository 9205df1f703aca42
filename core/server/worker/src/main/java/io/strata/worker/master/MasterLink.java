package io.strata.worker.master;

import io.grpc.StatusRuntimeException;
import io.strata.common.DaemonThreads;
import io.strata.common.Version;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.BlockReport;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerCommand;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.BlockStoreListener;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the master informed of this worker. Registers with a full block report, retrying with
 * growing pauses while the master cannot be reached (the worker serves what it has meanwhile), then
 * heartbeats at a fixed interval with tier usage, the blocks added and removed since the last
 * acknowledged heartbeat, and cumulative cache statistics. Blocks are also committed to the master
 * as soon as they are cached. Applies the master's removals, and registers again when the master
 * asks (it restarted, had marked this worker lost, or is a new leader that does not know this
 * worker). With several masters each call goes to the leader, following a follower's redirect
 * within the same attempt (see {@link WorkerMasterClient}). All master calls run on one thread of
 * its own, except the fire-and-forget commits and {@link #commitHeldBlocks}, which runs on its
 * caller's thread.
 */
public final class MasterLink implements BlockStoreListener, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterLink.class);
  private static final long FIRST_RETRY_MS = 100;

  private final WorkerMasterClient master;
  private final TieredBlockStore store;
  private final Supplier<WorkerAddress> address;
  private final Supplier<WorkerCacheStats> stats;
  private final long heartbeatMs;
  private final long maxRetryMs;
  private final BlockChangeLog changes = new BlockChangeLog();
  private final ScheduledExecutorService thread;
  private final ScheduledExecutorService commitThread;
  private final BlockCommits commits;
  private volatile long workerId = -1;
  private volatile int registrations;
  private volatile boolean closed;
  private volatile boolean draining;
  private long retryMs = FIRST_RETRY_MS;
  private boolean masterReachable = true;

  /**
   * @param address this worker's address with the ports actually bound
   * @param stats the cumulative cache statistics to report
   */
  public MasterLink(
      WorkerMasterClient master,
      TieredBlockStore store,
      Supplier<WorkerAddress> address,
      Supplier<WorkerCacheStats> stats,
      Duration heartbeatInterval,
      Duration maxRetryInterval) {
    this.master = master;
    this.store = store;
    this.address = address;
    this.stats = stats;
    this.heartbeatMs = Math.max(1, heartbeatInterval.toMillis());
    this.maxRetryMs = Math.max(FIRST_RETRY_MS, maxRetryInterval.toMillis());
    this.thread = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-link"));
    // Apart from the heartbeats, which can wait for a master that does not answer.
    this.commitThread =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("block-commits"));
    this.commits = new BlockCommits(master, commitThread);
  }

  /** Starts registering in the background; returns at once. */
  public void start() {
    schedule(0);
  }

  /** The id the master gave this worker, or -1 before the first registration. */
  public long workerId() {
    return workerId;
  }

  /** Successful registrations so far (more than one after the master asked again). */
  public int registrations() {
    return registrations;
  }

  private void schedule(long delayMs) {
    try {
      // Each tick schedules the next one; nothing waits for it.
      var unused = thread.schedule(this::tick, delayMs, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // Closing.
    }
  }

  private void tick() {
    long next;
    try {
      if (workerId < 0) {
        next = register() ? heartbeatMs : backOff();
      } else {
        heartbeat();
        next = heartbeatMs;
      }
    } catch (RuntimeException e) {
      LOG.warn("Unexpected error talking to the master at {}", master.address(), e);
      next = heartbeatMs;
    }
    schedule(next);
  }

  private long backOff() {
    long wait = retryMs;
    retryMs = Math.min(maxRetryMs, retryMs * 2);
    return wait;
  }

  /** Sends a full report; returns whether the master accepted it. */
  @SuppressWarnings("NonAtomicVolatileUpdate") // only the master-link thread writes registrations
  private boolean register() {
    // Changes from here on reach the master in heartbeats; earlier ones are in the report.
    changes.clear();
    List<BlockReport> report = store.blockReport();
    RegisterWorkerRequest request =
        RegisterWorkerRequest.newBuilder()
            .setAddress(address.get())
            .addAllTiers(store.tierUsage())
            .addAllBlocks(report)
            .setRelease(Version.RELEASE)
            .setRpcProtocolVersion(Version.PROTOCOL_VERSION)
            .build();
    RegisterWorkerResponse response;
    try {
      response = master.callBlockMaster(s -> s.registerWorker(request));
    } catch (StatusRuntimeException e) {
      unreachable(e);
      return false;
    }
    reachable();
    retryMs = FIRST_RETRY_MS;
    workerId = response.getWorkerId();
    registrations++;
    LOG.info(
        "Registered with the master at {} as worker {} with {} blocks",
        master.address(),
        workerId,
        report.size());
    return true;
  }

  private void heartbeat() {
    BlockChangeLog.Changes sent = changes.drain();
    HeartbeatRequest request =
        HeartbeatRequest.newBuilder()
            .setWorkerId(workerId)
            .addAllTiers(store.tierUsage())
            .addAllAddedBlocks(sent.added())
            .addAllRemovedBlockIds(sent.removed())
            .setCacheStats(stats.get())
            .setDraining(draining)
            .build();
    HeartbeatResponse response;
    try {
      response = master.callBlockMaster(s -> s.heartbeat(request));
    } catch (StatusRuntimeException e) {
      changes.restore(sent);
      unreachable(e);
      return;
    }
    reachable();
    if (response.getRemoveBlockIdsCount() > 0) {
      int removed = store.remove(response.getRemoveBlockIdsList());
      LOG.debug(
          "Master asked to remove {} blocks; {} were cached",
          response.getRemoveBlockIdsCount(),
          removed);
    }
    if (response.getCommand() == WorkerCommand.WORKER_COMMAND_REGISTER) {
      LOG.info("The master at {} asked worker {} to register again", master.address(), workerId);
      workerId = -1;
      register();
    }
  }

  private void unreachable(StatusRuntimeException e) {
    if (closed) {
      return;
    }
    if (masterReachable) {
      masterReachable = false;
      LOG.warn(
          "Cannot reach {} ({}); retrying, and serving cached blocks meanwhile",
          master.masters(),
          describe(e));
    }
  }

  private static String describe(StatusRuntimeException e) {
    String d = e.getStatus().getDescription();
    return e.getStatus().getCode() + (d == null ? "" : ": " + d);
  }

  private void reachable() {
    if (!masterReachable) {
      masterReachable = true;
      LOG.info("Reached the master at {} again", master.address());
    }
  }

  @Override
  public void blockCommitted(BlockMeta block, boolean callerTellsMaster) {
    BlockReport report = TieredBlockStore.toReport(block);
    changes.added(report);
    long id = workerId;
    if (id < 0 || callerTellsMaster) {
      return;
    }
    // Within milliseconds, batched, so that clients find the block soon; the heartbeat
    // repeats it in case the call is lost.
    commits.add(id, report);
  }

  /**
   * Tells the master that this worker holds these blocks, and returns once it has answered: one
   * CommitBlocks call with the reports the batched commits send, within the configured master RPC
   * timeout. Runs on the caller's thread. The blocks were committed with {@link
   * TempBlock#callerTellsMaster}, so no batched commit repeats them; the heartbeat still does.
   *
   * @throws StrataException UNAVAILABLE, naming the master, when this worker has not registered yet
   *     or the master did not take the call
   */
  public void commitHeldBlocks(List<BlockMeta> blocks) throws StrataException {
    long id = workerId;
    if (id < 0) {
      throw StrataException.unavailable(
          "This worker has not registered with "
              + master.masters()
              + " yet, so it cannot tell it that it holds "
              + blocks.size()
              + " blocks",
          null);
    }
    List<BlockReport> reports = new ArrayList<>(blocks.size());
    for (BlockMeta b : blocks) {
      reports.add(TieredBlockStore.toReport(b));
    }
    CommitBlocksRequest request =
        CommitBlocksRequest.newBuilder().setWorkerId(id).addAllBlocks(reports).build();
    try {
      master.callBlockMaster(s -> s.commitBlocks(request));
    } catch (StatusRuntimeException e) {
      throw StrataException.unavailable(
          "Cannot tell "
              + master.masters()
              + " that worker "
              + id
              + " holds "
              + blocks.size()
              + " blocks: "
              + GrpcErrors.reason(e.getStatus()),
          e);
    }
  }

  @Override
  public void blockRemoved(long blockId) {
    changes.removed(blockId);
  }

  /**
   * Tells the master at once that this worker is stopping, so that it stops naming it as a source
   * of new reads; returns when the master has heard it, or could not be told within {@code timeout}
   * (a master of release 0.1.0 ignores the flag).
   */
  public void drain(java.time.Duration timeout) throws InterruptedException {
    draining = true;
    if (workerId < 0) {
      return;
    }
    try {
      thread.submit(this::heartbeat).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException
        | RejectedExecutionException e) {
      LOG.warn("Could not tell the master that this worker is draining: {}", e.toString());
    }
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    thread.shutdownNow();
    commitThread.shutdownNow();
    thread.awaitTermination(10, TimeUnit.SECONDS);
    commitThread.awaitTermination(10, TimeUnit.SECONDS);
  }
}
