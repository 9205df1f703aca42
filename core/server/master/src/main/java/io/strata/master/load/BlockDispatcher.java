package io.strata.master.load;

import io.grpc.Context;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.WorkerHashing;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.block.WorkerRegistry;
import io.strata.proto.BlockLocation;
import io.strata.proto.BlockReport;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadBlocksRequest;
import io.strata.proto.LoadBlocksResponse;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.io.Closeable;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands the block tasks of every load job to workers. Each block goes to the worker that {@link
 * WorkerHashing} picks among the eligible live workers -- the pick clients make when they read, so
 * later reads find the block where it was loaded. Tasks wait in a queue per worker and go out in
 * {@code LoadBlocks} batches, with at most a configured number of blocks per worker unanswered.
 *
 * <p>Failures: a task that failed on its worker is tried again, up to the retry limit, before its
 * owner is told. A worker whose call fails (gone, timed out, or a release without the call) is set
 * aside until it registers again or a cool-down passes, and its tasks go to the next pick without
 * counting as attempts. Tasks with no eligible worker wait for one. A worker that answers busy gets
 * its tasks back on the next tick.
 *
 * <p>Owners are told outside this object's lock, on gRPC or timer threads.
 */
final class BlockDispatcher implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockDispatcher.class);

  /** How long a worker whose call failed is left out unless it registers again. */
  private static final long EXCLUSION_MS = 30_000;

  /** Period of the tick that retries waiting tasks and moves tasks off ineligible workers. */
  private static final long TICK_MS = 250;

  /** How long the list of eligible workers may be reused before it is read again. */
  private static final long ELIGIBLE_CACHE_MS = 100;

  /** Told how a block task ended. */
  interface Owner {
    void finished(BlockTask task, LoadBlockOutcome outcome, String message);
  }

  /** One block to load, for one owner. */
  static final class BlockTask {
    final LoadBlockTask task;
    final Owner owner;

    /** What the owner needs to take the outcome (the file the block belongs to). */
    final Object context;

    int failures;

    /** Whether this task was sent again after a call carrying it was cancelled on the way. */
    boolean resentAfterCancel;

    WorkerInfo worker;

    BlockTask(LoadBlockTask task, Owner owner, Object context) {
      this.task = task;
      this.owner = owner;
      this.context = context;
    }
  }

  private static final class WorkerQueue {
    final ArrayDeque<BlockTask> tasks = new ArrayDeque<>();

    /** Calls sent and not answered, so that the calls of a lost worker can be cancelled. */
    final Set<Context.CancellableContext> calls = new HashSet<>();

    int inFlight;
  }

  private record Exclusion(long registeredMs, long untilMs) {}

  private record Finished(BlockTask task, LoadBlockOutcome outcome, String message) {}

  private final WorkerRegistry workers;
  private final WorkerChannels channels;
  private final int inFlightLimit;
  private final int batchSize;
  private final int retries;
  private final Duration rpcTimeout;
  private final ScheduledExecutorService timer;
  private final Map<Long, WorkerQueue> queues = new HashMap<>();
  private final ArrayDeque<BlockTask> waiting = new ArrayDeque<>();
  private final Map<Long, Exclusion> excluded = new HashMap<>();
  private final Map<LoadBlockOutcome, Counter> outcomes = new HashMap<>();
  private List<WorkerInfo> eligible = List.of();
  private long eligibleReadMs;
  private long eligibleVersion = -1;
  private boolean closed;

  BlockDispatcher(
      WorkerRegistry workers,
      int inFlightLimit,
      int batchSize,
      int retries,
      Duration rpcTimeout,
      MeterRegistry registry) {
    this.workers = workers;
    this.channels = new WorkerChannels();
    this.inFlightLimit = Math.max(1, inFlightLimit);
    this.batchSize = Math.max(1, batchSize);
    this.retries = Math.max(0, retries);
    this.rpcTimeout = rpcTimeout;
    for (LoadBlockOutcome o :
        List.of(
            LoadBlockOutcome.LOAD_BLOCK_LOADED,
            LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED,
            LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND,
            LoadBlockOutcome.LOAD_BLOCK_FAILED)) {
      outcomes.put(
          o,
          Counter.builder(MetricNames.MASTER_LOAD_BLOCKS)
              .tag(MetricNames.TAG_OUTCOME, outcomeName(o))
              .description("Blocks of load jobs by how they ended on the workers")
              .register(registry));
    }
    this.timer =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("load-dispatch-tick"));
    // A tick logs its own failure; the ticks run until close() shuts the timer down.
    var unused = timer.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
  }

  static String outcomeName(LoadBlockOutcome o) {
    return switch (o) {
      case LOAD_BLOCK_LOADED -> "loaded";
      case LOAD_BLOCK_ALREADY_CACHED -> "cached";
      case LOAD_BLOCK_NOT_FOUND -> "not_found";
      case LOAD_BLOCK_BUSY -> "busy";
      default -> "failed";
    };
  }

  /** Queues a task on its worker and sends what the worker has room for. */
  void submit(BlockTask task) {
    synchronized (this) {
      if (closed) {
        return;
      }
      assign(task);
    }
  }

  /** Drops every queued task of an owner (tasks already sent finish and are reported). */
  synchronized void cancel(Owner owner) {
    waiting.removeIf(t -> t.owner == owner);
    for (WorkerQueue q : queues.values()) {
      q.tasks.removeIf(t -> t.owner == owner);
    }
  }

  /** Whether some task waits because no worker is eligible. */
  synchronized boolean waitingForWorkers(Owner owner) {
    for (BlockTask t : waiting) {
      if (t.owner == owner && t.worker == null && eligibleWorkers().isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether one of the live workers holding a block is eligible: a block on a worker whose calls
   * fail (killed, not yet marked lost) is not counted as cached.
   */
  synchronized boolean heldByEligibleWorker(List<BlockLocation> holders) {
    if (holders.isEmpty()) {
      return false;
    }
    for (BlockLocation l : holders) {
      if (isEligible(l.getWorkerId())) {
        return true;
      }
    }
    return false;
  }

  private void assign(BlockTask task) {
    List<WorkerInfo> candidates = eligibleWorkers();
    if (candidates.isEmpty()) {
      task.worker = null;
      waiting.addLast(task);
      return;
    }
    WorkerInfo w = WorkerHashing.pick(task.task.getBlockId(), candidates, WorkerInfo::getWorkerId);
    task.worker = w;
    WorkerQueue q = queues.computeIfAbsent(w.getWorkerId(), k -> new WorkerQueue());
    q.tasks.addLast(task);
    pump(w, q, false);
  }

  private List<WorkerInfo> eligibleWorkers() {
    long now = System.currentTimeMillis();
    long version = workers.membershipVersion();
    // A worker that registered (or was lost) since is seen at once: a list from before it would
    // send blocks to workers other than the ones hashing picks.
    if (now - eligibleReadMs < ELIGIBLE_CACHE_MS && version == eligibleVersion) {
      return eligible;
    }
    List<WorkerInfo> out = new ArrayList<>();
    for (WorkerInfo w : workers.workers()) {
      if (w.getState() != WorkerState.WORKER_LIVE) {
        continue;
      }
      Exclusion e = excluded.get(w.getWorkerId());
      if (e != null && e.registeredMs() == w.getRegisteredMs() && now < e.untilMs()) {
        continue;
      }
      out.add(w);
    }
    eligible = out;
    eligibleReadMs = now;
    eligibleVersion = version;
    return out;
  }

  private boolean isEligible(long workerId) {
    for (WorkerInfo w : eligibleWorkers()) {
      if (w.getWorkerId() == workerId) {
        return true;
      }
    }
    return false;
  }

  /**
   * Sends what the worker has room for. Full batches go at once; a partial batch goes only to an
   * idle worker or when {@code flush} (the tick), so that tasks gather into batches while the
   * worker is busy instead of going out one call per block.
   */
  private void pump(WorkerInfo w, WorkerQueue q, boolean flush) {
    while (q.inFlight < inFlightLimit && !q.tasks.isEmpty()) {
      int n = Math.min(Math.min(batchSize, inFlightLimit - q.inFlight), q.tasks.size());
      if (n < batchSize && q.inFlight > 0 && !flush) {
        return;
      }
      List<BlockTask> batch = new ArrayList<>(n);
      LoadBlocksRequest.Builder request = LoadBlocksRequest.newBuilder();
      for (int i = 0; i < n; i++) {
        BlockTask t = q.tasks.pollFirst();
        batch.add(t);
        request.addTasks(t.task);
      }
      q.inFlight += n;
      send(w, q, request.build(), batch);
    }
  }

  private void send(WorkerInfo w, WorkerQueue q, LoadBlocksRequest request, List<BlockTask> batch) {
    // From the root: sends also happen inside the callbacks of earlier calls, whose contexts
    // end with them and would cancel a child call.
    Context.CancellableContext call = Context.ROOT.withCancellation();
    q.calls.add(call);
    call.run(
        () ->
            channels
                .stub(w.getAddress())
                .withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS)
                .loadBlocks(
                    request,
                    new StreamObserver<>() {
                      private LoadBlocksResponse response;

                      @Override
                      public void onNext(LoadBlocksResponse value) {
                        response = value;
                      }

                      @Override
                      public void onError(Throwable t) {
                        // Read before callEnded closes the context: whether this dispatcher
                        // cancelled it.
                        boolean cancelledHere = call.isCancelled();
                        callEnded(q, call);
                        Status status = Status.fromThrowable(t);
                        if (status.getCode() == Status.Code.CANCELLED
                            && !cancelledHere
                            && resendOnce(w, batch)) {
                          return;
                        }
                        callFailed(w, batch, status);
                      }

                      @Override
                      public void onCompleted() {
                        callEnded(q, call);
                        answered(
                            w,
                            batch,
                            response == null ? LoadBlocksResponse.getDefaultInstance() : response);
                      }
                    }));
  }

  private synchronized void callEnded(WorkerQueue q, Context.CancellableContext call) {
    q.calls.remove(call);
    call.close();
  }

  private void answered(WorkerInfo w, List<BlockTask> batch, LoadBlocksResponse response) {
    Map<Long, LoadBlockResult> results = new HashMap<>();
    for (LoadBlockResult r : response.getResultsList()) {
      results.put(r.getBlockId(), r);
    }
    List<Finished> finished = new ArrayList<>();
    for (BlockTask t : batch) {
      LoadBlockResult r = results.get(t.task.getBlockId());
      LoadBlockOutcome outcome = r == null ? LoadBlockOutcome.LOAD_BLOCK_FAILED : r.getOutcome();
      if (outcome == LoadBlockOutcome.LOAD_BLOCK_LOADED
          || outcome == LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED) {
        // Recorded now rather than at the worker's next heartbeat, so that the job's verify
        // pass and clients see the block at once.
        try {
          workers.commitBlock(
              w.getWorkerId(),
              BlockReport.newBuilder()
                  .setBlockId(t.task.getBlockId())
                  .setLength(t.task.getBlockLength())
                  .setTier(r.getTier())
                  .build());
        } catch (StrataException e) {
          LOG.debug(
              "Block {} loaded on worker {}, which is not registered now: {}",
              t.task.getBlockId(),
              w.getWorkerId(),
              e.getMessage());
        }
      }
    }
    synchronized (this) {
      WorkerQueue q = queues.computeIfAbsent(w.getWorkerId(), k -> new WorkerQueue());
      q.inFlight -= batch.size();
      for (BlockTask t : batch) {
        LoadBlockResult r = results.get(t.task.getBlockId());
        LoadBlockOutcome outcome = r == null ? LoadBlockOutcome.LOAD_BLOCK_FAILED : r.getOutcome();
        String message =
            r == null
                ? "worker "
                    + w.getAddress().getHost()
                    + ":"
                    + w.getAddress().getRpcPort()
                    + " gave no result for block "
                    + t.task.getBlockId()
                : r.getMessage();
        switch (outcome) {
          case LOAD_BLOCK_LOADED, LOAD_BLOCK_ALREADY_CACHED, LOAD_BLOCK_NOT_FOUND ->
              finished.add(new Finished(t, outcome, message));
          case LOAD_BLOCK_BUSY -> {
            t.worker = null;
            waiting.addLast(t);
          }
          default -> {
            t.failures++;
            if (t.failures > retries || closed) {
              finished.add(new Finished(t, LoadBlockOutcome.LOAD_BLOCK_FAILED, message));
            } else {
              LOG.debug(
                  "Block {} failed on worker {} (attempt {}): {}",
                  t.task.getBlockId(),
                  w.getWorkerId(),
                  t.failures,
                  message);
              assign(t);
            }
          }
        }
      }
      if (!closed) {
        pump(w, q, false);
      }
    }
    report(finished);
  }

  /**
   * Sends a batch whose call was cancelled on the way (a stream reset that neither this dispatcher
   * nor a deadline asked for) to the same worker once more, ahead of its queue, rather than
   * counting the worker out: such a reset says nothing about the worker, and moving its blocks
   * would put them on workers other than the one hashing picks. False when a task of the batch was
   * resent already, or the dispatcher is closed; then the call counts as failed.
   */
  private synchronized boolean resendOnce(WorkerInfo w, List<BlockTask> batch) {
    if (closed || batch.stream().anyMatch(t -> t.resentAfterCancel)) {
      return false;
    }
    WorkerQueue q = queues.computeIfAbsent(w.getWorkerId(), k -> new WorkerQueue());
    LOG.info(
        "LoadBlocks call to worker {} at {}:{} was cancelled on the way; sending its {}"
            + " blocks to it again",
        w.getWorkerId(),
        w.getAddress().getHost(),
        w.getAddress().getRpcPort(),
        batch.size());
    q.inFlight -= batch.size();
    for (int i = batch.size() - 1; i >= 0; i--) {
      batch.get(i).resentAfterCancel = true;
      q.tasks.addFirst(batch.get(i));
    }
    pump(w, q, true);
    return true;
  }

  private void callFailed(WorkerInfo w, List<BlockTask> batch, Status status) {
    List<Finished> finished = new ArrayList<>();
    synchronized (this) {
      WorkerQueue q = queues.computeIfAbsent(w.getWorkerId(), k -> new WorkerQueue());
      q.inFlight -= batch.size();
      if (closed) {
        return;
      }
      // A worker that is gone, slow or lost costs its tasks nothing; one that answers with an
      // error (a release without LoadBlocks, say) counts as a failed attempt, so that a
      // cluster of such workers fails the blocks instead of retrying them for ever.
      boolean refused =
          status.getCode() != Status.Code.UNAVAILABLE
              && status.getCode() != Status.Code.DEADLINE_EXCEEDED
              && status.getCode() != Status.Code.CANCELLED;
      Exclusion previous =
          excluded.put(
              w.getWorkerId(),
              new Exclusion(w.getRegisteredMs(), System.currentTimeMillis() + EXCLUSION_MS));
      if (previous == null
          || previous.registeredMs() != w.getRegisteredMs()
          || System.currentTimeMillis() >= previous.untilMs()) {
        LOG.warn(
            "LoadBlocks call to worker {} at {}:{} failed ({}: {}); its tasks go to "
                + "other workers",
            w.getWorkerId(),
            w.getAddress().getHost(),
            w.getAddress().getRpcPort(),
            status.getCode(),
            status.getDescription());
      }
      eligibleReadMs = 0;
      String reason =
          "worker "
              + w.getAddress().getHost()
              + ":"
              + w.getAddress().getRpcPort()
              + " refused LoadBlocks ("
              + status.getCode()
              + ": "
              + status.getDescription()
              + "; is it of an older release?)";
      List<BlockTask> moved = new ArrayList<>(q.tasks);
      q.tasks.clear();
      for (BlockTask t : batch) {
        if (refused && ++t.failures > retries) {
          finished.add(new Finished(t, LoadBlockOutcome.LOAD_BLOCK_FAILED, reason));
        } else {
          moved.add(t);
        }
      }
      for (BlockTask t : moved) {
        assign(t);
      }
    }
    report(finished);
  }

  /** Retries waiting tasks and moves queued tasks off workers that are no longer eligible. */
  private void tick() {
    List<Context.CancellableContext> toCancel = new ArrayList<>();
    try {
      synchronized (this) {
        if (closed) {
          return;
        }
        eligibleReadMs = 0;
        List<BlockTask> moved = new ArrayList<>();
        for (Iterator<Map.Entry<Long, WorkerQueue>> it = queues.entrySet().iterator();
            it.hasNext(); ) {
          Map.Entry<Long, WorkerQueue> e = it.next();
          if (!isEligible(e.getKey())) {
            moved.addAll(e.getValue().tasks);
            e.getValue().tasks.clear();
            if (e.getValue().inFlight == 0) {
              it.remove();
            }
          }
        }
        // Calls to a worker the registry marked lost (hung, not dead) are not waited for until
        // their deadline: cancelled, their tasks go elsewhere through callFailed.
        for (Map.Entry<Long, WorkerQueue> e : queues.entrySet()) {
          if (!e.getValue().calls.isEmpty() && !liveInRegistry(e.getKey())) {
            toCancel.addAll(e.getValue().calls);
          }
        }
        moved.addAll(waiting);
        waiting.clear();
        for (BlockTask t : moved) {
          assign(t);
        }
        for (WorkerInfo w : eligibleWorkers()) {
          WorkerQueue q = queues.get(w.getWorkerId());
          if (q != null) {
            pump(w, q, true);
          }
        }
      }
      for (Context.CancellableContext call : toCancel) {
        call.cancel(
            Status.CANCELLED.withDescription("the worker was marked lost").asRuntimeException());
      }
    } catch (RuntimeException e) {
      LOG.warn("Load dispatch tick failed: {}", e.toString(), e);
    }
  }

  private boolean liveInRegistry(long workerId) {
    for (WorkerInfo w : workers.workers()) {
      if (w.getWorkerId() == workerId) {
        return w.getState() == WorkerState.WORKER_LIVE;
      }
    }
    return false;
  }

  private void report(List<Finished> finished) {
    for (Finished f : finished) {
      Counter c = outcomes.get(f.outcome());
      if (c != null) {
        c.increment();
      }
      try {
        f.task().owner.finished(f.task(), f.outcome(), f.message());
      } catch (RuntimeException e) {
        LOG.warn(
            "A load job failed to take the outcome of block {}: {}",
            f.task().task.getBlockId(),
            e.toString(),
            e);
      }
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      waiting.clear();
      queues.clear();
    }
    timer.shutdownNow();
    channels.close();
  }
}
