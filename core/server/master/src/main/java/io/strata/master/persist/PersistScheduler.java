package io.strata.master.persist;

import io.grpc.StatusRuntimeException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.file.Namespace;
import io.strata.master.file.PersistChanges;
import io.strata.master.load.WorkerChannels;
import io.strata.master.metastore.InodeStore;
import io.strata.master.metastore.PersistIndex;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.GetPersistStatusResponse;
import io.strata.proto.PersistBlocksRequest;
import io.strata.proto.PersistBlocksResponse;
import io.strata.proto.ReleaseBlocksRequest;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.proto.journal.InodeEntry;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the files of write type ASYNC_THROUGH to their under stores after their writers closed
 * them. Runs on the leading master only (started when it takes the lead, stopped when it gives it
 * up). What waits is journaled with each file (its persistence state) and indexed in the metastore
 * ({@link PersistIndex}), so a new leader, or a master restarted, picks up the backlog where the
 * last one left it; nothing else is kept between leaders.
 *
 * <p>Each round walks the index oldest first and starts the files that are due, at most {@code
 * threads} at a time. One persist: a worker that holds every block of the file writes them to a
 * hidden temporary file beside the file's store path (PersistBlocks), then the namespace moves it
 * to the file's name and journals the file PERSISTED, only if the file is still that content
 * ({@link PersistChanges}); then the workers are told they need not hold the blocks any more. A
 * failure (no live worker holds the blocks, the store refused) is counted and logged, and the file
 * is tried again after a backoff that doubles from {@value #FIRST_BACKOFF_MS} ms to {@value
 * #MAX_BACKOFF_MS} ms. A file deleted or replaced meanwhile is never written under its name.
 */
public final class PersistScheduler implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(PersistScheduler.class);
  static final long FIRST_BACKOFF_MS = 1_000;
  static final long MAX_BACKOFF_MS = 300_000;

  /** Index entries read at a time. */
  private static final int BATCH = 1000;

  /** How often a round counts the whole backlog. */
  static final long COUNT_EVERY_MS = 30_000;

  /** Most index entries a round that does not count reads to find files that are due. */
  static final int SCAN_LIMIT = 10_000;

  /** A file's failed attempts: how many, when it is due again, and why the last failed. */
  private record Backoff(int failures, long dueMs, String reason) {}

  private final InodeStore store;
  private final Namespace namespace;
  private final WorkerRegistry workers;
  private final WorkerChannels channels = new WorkerChannels();
  private final int threads;
  private final Duration timeout;
  private final ScheduledExecutorService rounds;
  private final ExecutorService persists;
  private final Map<Long, CompletableFuture<FileInfo>> running = new ConcurrentHashMap<>();
  private final Map<Long, Backoff> backoffs = new ConcurrentHashMap<>();
  private final Counter persisted;
  private final Counter failures;
  private final AtomicLong backlogFiles = new AtomicLong();
  private final AtomicLong backlogBytes = new AtomicLong();
  private final AtomicLong oldestMs = new AtomicLong();
  private final AtomicLong persistedHere = new AtomicLong();
  private final AtomicLong failedHere = new AtomicLong();
  private final AtomicReference<String> lastFailure = new AtomicReference<>("");
  private volatile boolean closed;

  /** When a round last counted the whole backlog; 0: never, so the first round does. */
  private long lastCountMs;

  /**
   * @param threads files persisted at once
   * @param timeout how long one worker may take to write one file
   */
  public PersistScheduler(
      InodeStore store,
      Namespace namespace,
      WorkerRegistry workers,
      int threads,
      Duration timeout,
      MeterRegistry registry) {
    this.store = store;
    this.namespace = namespace;
    this.workers = workers;
    this.threads = Math.max(1, threads);
    this.timeout = timeout;
    this.rounds =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-persist-rounds"));
    this.persists =
        Executors.newFixedThreadPool(this.threads, DaemonThreads.named("master-persist"));
    this.persisted =
        Counter.builder(MetricNames.MASTER_PERSIST_FILES)
            .description("Files written to their under stores by the persist scheduler")
            .register(registry);
    this.failures =
        Counter.builder(MetricNames.MASTER_PERSIST_FAILURES)
            .description("Persist attempts that failed; each file is tried again after a backoff")
            .register(registry);
  }

  /**
   * Registers the backlog gauges once per registry: they read whichever scheduler leads now through
   * {@code current}, and show 0 on a master that does not lead.
   */
  public static void registerGauges(MeterRegistry registry, Supplier<PersistScheduler> current) {
    Gauge.builder(
            MetricNames.MASTER_PERSIST_BACKLOG_FILES,
            () -> value(current, s -> s.backlogFiles.get()))
        .description("Files written with ASYNC_THROUGH that are not in their under store yet")
        .register(registry);
    Gauge.builder(
            MetricNames.MASTER_PERSIST_BACKLOG_BYTES,
            () -> value(current, s -> s.backlogBytes.get()))
        .description("Bytes of the files waiting to be persisted")
        .baseUnit("bytes")
        .register(registry);
    Gauge.builder(
            MetricNames.MASTER_PERSIST_BACKLOG_AGE,
            () -> value(current, s -> s.oldestAgeMs() / 1000.0))
        .description("How long the oldest file waiting to be persisted has waited")
        .baseUnit("seconds")
        .register(registry);
  }

  private static double value(
      Supplier<PersistScheduler> current, ToDoubleFunction<PersistScheduler> read) {
    PersistScheduler s = current.get();
    return s == null ? 0 : read.applyAsDouble(s);
  }

  /** Runs a round every {@code interval}, the first at once. */
  public void start(Duration interval) {
    long ms = Math.max(1, interval.toMillis());
    // A round logs its own failure; the rounds run until the executor shuts down.
    var unused = rounds.scheduleWithFixedDelay(this::scheduledRound, 0, ms, TimeUnit.MILLISECONDS);
  }

  private void scheduledRound() {
    try {
      round(System.currentTimeMillis());
    } catch (RuntimeException e) {
      LOG.warn(
          "A round of the persist scheduler failed: {}; trying again next round", e.toString(), e);
    }
  }

  /**
   * One round: starts the files that are due while fewer than {@code threads} run, reading the
   * index oldest first, and at most every {@link #COUNT_EVERY_MS} counts the whole backlog for the
   * gauges and the report. Between counts a round reads only as far as it needs to fill the free
   * threads (and at most {@link #SCAN_LIMIT} entries), so a large backlog costs its full walk twice
   * a minute, not every round. Returns how many it started.
   */
  int round(long nowMs) {
    boolean count = nowMs - lastCountMs >= COUNT_EVERY_MS;
    long files = 0;
    long bytes = 0;
    long oldest = 0;
    int started = 0;
    int scanned = 0;
    long after = 0;
    Map<Long, Backoff> seen = new HashMap<>();
    scan:
    while (!closed) {
      List<Long> ids = store.waitingToPersist(after, BATCH);
      for (long id : ids) {
        after = id;
        scanned++;
        boolean free = running.size() < threads;
        if (!count && (!free || scanned > SCAN_LIMIT)) {
          break scan;
        }
        InodeEntry n = store.peek(id);
        if (!PersistIndex.waits(n)) {
          continue;
        }
        files++;
        bytes += n.getLength();
        if (oldest == 0 || n.getModificationTimeMs() < oldest) {
          oldest = n.getModificationTimeMs();
        }
        Backoff b = backoffs.get(id);
        if (b != null) {
          seen.put(id, b);
        }
        if (free && !running.containsKey(id) && (b == null || b.dueMs() <= nowMs)) {
          // A round only starts persists: a failure is counted and backed off by failed(), and
          // the file is tried again by a later round.
          var unused = persist(id, false);
          started++;
        }
      }
      if (ids.size() < BATCH) {
        break;
      }
    }
    if (count) {
      // Backoffs of files that do not wait any more (persisted, deleted) are forgotten.
      backoffs.keySet().retainAll(seen.keySet());
      backlogFiles.set(files);
      backlogBytes.set(bytes);
      oldestMs.set(oldest);
      lastCountMs = nowMs;
    }
    return started;
  }

  private long oldestAgeMs() {
    long oldest = oldestMs.get();
    return oldest == 0 ? 0 : Math.max(0, System.currentTimeMillis() - oldest);
  }

  /**
   * Persists the file of inode {@code id} now (or joins the persist of it in progress); completes
   * with its info once it is in its store, at once when it was already. With {@code
   * evenNotPersisted}, a MUST_CACHE file is persisted too (`strata fs persist`).
   */
  public CompletableFuture<FileInfo> persist(long id, boolean evenNotPersisted) {
    if (closed) {
      return CompletableFuture.failedFuture(
          StrataException.unavailable(
              "This master does not lead any more; persists run on the leader", null));
    }
    CompletableFuture<FileInfo> mine = new CompletableFuture<>();
    CompletableFuture<FileInfo> existing = running.putIfAbsent(id, mine);
    if (existing != null) {
      return existing;
    }
    try {
      persists.execute(
          () -> {
            try {
              mine.complete(persistNow(id, evenNotPersisted));
              backoffs.remove(id);
            } catch (Exception e) {
              failed(id, e);
              mine.completeExceptionally(e);
            } finally {
              running.remove(id, mine);
            }
          });
    } catch (RuntimeException e) {
      running.remove(id, mine);
      mine.completeExceptionally(
          StrataException.unavailable(
              "This master does not lead any more; persists run on the leader", e));
    }
    return mine;
  }

  private void failed(long id, Exception e) {
    failures.increment();
    failedHere.incrementAndGet();
    String reason = e.getMessage() == null ? e.toString() : e.getMessage();
    lastFailure.set(reason);
    Backoff before = backoffs.get(id);
    int n = before == null ? 1 : before.failures() + 1;
    long delay = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS << Math.min(20, n - 1));
    backoffs.put(id, new Backoff(n, System.currentTimeMillis() + delay, reason));
    LOG.warn(
        "Persisting file {} failed (attempt {}; next in {} s): {}", id, n, delay / 1000, reason);
  }

  /** One persist, on a thread that may wait. */
  private FileInfo persistNow(long id, boolean evenNotPersisted) throws IOException {
    Optional<PersistChanges.Plan> planned = namespace.persistPlan(id, evenNotPersisted);
    if (planned.isEmpty()) {
      return currentInfo(id);
    }
    PersistChanges.Plan plan = planned.get();
    InodeEntry file = plan.file();
    List<Long> blockIds = new ArrayList<>();
    for (BlockInfo b : plan.blocks()) {
      blockIds.add(b.getBlockId());
    }
    WorkerAddress worker = holderOfEvery(plan);
    PersistBlocksResponse written;
    try {
      written =
          channels
              .blockingStub(worker)
              .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
              .persistBlocks(
                  PersistBlocksRequest.newBuilder()
                      .addAllBlockIds(blockIds)
                      .setLength(file.getLength())
                      .setUfsPath(plan.tempUfsUri())
                      .setMountId(plan.where().mount().getMountId())
                      .setMode(file.getMode())
                      .build());
    } catch (StatusRuntimeException e) {
      StrataException error = GrpcErrors.fromStatus(e);
      throw new StrataException(
          error.code(),
          "Worker "
              + worker.getHost()
              + ":"
              + worker.getRpcPort()
              + " could not write "
              + plan.path()
              + " to "
              + plan.tempUfsUri()
              + ": "
              + error.getMessage(),
          e);
    }
    if (written.getLength() != file.getLength()) {
      namespace.discardPersist(plan);
      throw new StrataException(
          ErrorCode.INTERNAL,
          "Worker "
              + worker.getHost()
              + " wrote "
              + written.getLength()
              + " bytes of "
              + plan.path()
              + ", which has "
              + file.getLength());
    }
    Optional<FileInfo> published = Namespace.join(namespace.publishPersisted(plan));
    if (published.isEmpty()) {
      LOG.info("Not persisting {}: it was deleted or rewritten meanwhile", plan.path());
      return currentInfo(id);
    }
    persisted.increment();
    persistedHere.incrementAndGet();
    // Until the next count: one file less.
    backlogFiles.updateAndGet(v -> Math.max(0, v - 1));
    backlogBytes.updateAndGet(v -> Math.max(0, v - file.getLength()));
    LOG.debug(
        "Persisted {} ({} bytes) from worker {}", plan.path(), file.getLength(), worker.getHost());
    release(plan, blockIds);
    return published.get();
  }

  /** The current info of an inode, or NOT_FOUND when it is gone. */
  private FileInfo currentInfo(long id) throws StrataException {
    InodeEntry n = store.peek(id);
    String path = n == null ? null : namespace.pathOf(id);
    if (path == null) {
      throw new StrataException(ErrorCode.NOT_FOUND, "File " + id + " is gone (deleted)");
    }
    return namespace.info(n, path);
  }

  /** A live worker that holds every block of the plan's file. */
  private WorkerAddress holderOfEvery(PersistChanges.Plan plan) throws StrataException {
    Map<Long, WorkerAddress> candidates = null;
    for (BlockInfo b : plan.blocks()) {
      Map<Long, WorkerAddress> holders = new LinkedHashMap<>();
      for (BlockLocation l : b.getLocationsList()) {
        if (candidates == null || candidates.containsKey(l.getWorkerId())) {
          holders.put(l.getWorkerId(), l.getAddress());
        }
      }
      candidates = holders;
      if (candidates.isEmpty()) {
        throw StrataException.unavailable(
            "No live worker holds every block of "
                + plan.path()
                + " (block "
                + b.getBlockId()
                + " is on none): it is persisted once the worker"
                + " that holds it is back",
            null);
      }
    }
    if (candidates == null) {
      // An empty file has no block: any live worker writes it.
      for (WorkerInfo w : workers.workers()) {
        if (w.getState() == WorkerState.WORKER_LIVE) {
          return w.getAddress();
        }
      }
      throw StrataException.unavailable(
          "No live worker to write the empty file " + plan.path() + " to its under store", null);
    }
    return candidates.values().iterator().next();
  }

  /** Tells every worker that holds the blocks it need not hold them any more; best effort. */
  private void release(PersistChanges.Plan plan, List<Long> blockIds) {
    Map<Long, WorkerAddress> holders = new LinkedHashMap<>();
    for (BlockInfo b : plan.blocks()) {
      for (BlockLocation l : b.getLocationsList()) {
        holders.put(l.getWorkerId(), l.getAddress());
      }
    }
    for (WorkerAddress w : holders.values()) {
      try {
        channels
            .blockingStub(w)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .releaseBlocks(ReleaseBlocksRequest.newBuilder().addAllBlockIds(blockIds).build());
      } catch (StatusRuntimeException e) {
        LOG.warn(
            "Worker {}:{} was not told that the blocks of {} need no holding any more"
                + " (they stay in its cache until removed): {}",
            w.getHost(),
            w.getRpcPort(),
            plan.path(),
            e.getStatus());
      }
    }
  }

  /** The backlog and what this leader did, for `strata fsadmin report`. */
  public GetPersistStatusResponse status() {
    return GetPersistStatusResponse.newBuilder()
        .setBacklogFiles(backlogFiles.get())
        .setBacklogBytes(backlogBytes.get())
        .setOldestAgeMs(oldestAgeMs())
        .setPersistedFiles(persistedHere.get())
        .setFailedAttempts(failedHere.get())
        .setLastFailure(lastFailure.get())
        .setRunning(running.size())
        .build();
  }

  @Override
  public void close() {
    closed = true;
    rounds.shutdownNow();
    persists.shutdownNow();
    // Persists queued but never started would leave their callers waiting.
    for (CompletableFuture<FileInfo> f : running.values()) {
      f.completeExceptionally(
          StrataException.unavailable(
              "This master gave up the lead before" + " the persist finished; ask the new leader",
              null));
    }
    channels.close();
  }
}
