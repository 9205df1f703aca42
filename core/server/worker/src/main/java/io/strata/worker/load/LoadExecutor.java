package io.strata.worker.load;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockChecksums;
import io.strata.common.DaemonThreads;
import io.strata.common.buffer.AlignedBufferPool;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.BlockFileWriter;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the load tasks the master sends: each reads one block from its under store and commits it to
 * the block store, on a bounded pool of threads with a bounded queue.
 *
 * <p>Guarantees:
 *
 * <ul>
 *   <li><b>Memory.</b> A queued task holds no buffer, only a supplier of one; a thread takes a
 *       buffer from the {@link AlignedBufferPool} when it starts the copy and gives it back when
 *       the task ends, however it ends. So the direct memory loads hold is at most threads x chunk
 *       size (the pool's size class of the chunk), whatever the queue holds.
 *   <li><b>Back-pressure.</b> A task that finds every thread busy and the queue full is answered
 *       {@link LoadBlockOutcome#LOAD_BLOCK_BUSY} at once; the master sends it again.
 *   <li><b>One load per block.</b> A task for a block whose load is queued or running gets the
 *       future of that load; a block already cached is answered {@link
 *       LoadBlockOutcome#LOAD_BLOCK_ALREADY_CACHED} with its tier.
 *   <li><b>Nothing half-written is served.</b> A block is written to a temporary file in its tier
 *       (Direct I/O where the tier takes it), and becomes visible only when complete and its length
 *       checked; a copy that fails or is interrupted is aborted and its file deleted.
 *   <li>Every future completes, with an outcome rather than an exception: a task still queued when
 *       the executor closes is answered {@link LoadBlockOutcome#LOAD_BLOCK_FAILED}.
 * </ul>
 *
 * <p>Metrics: {@link MetricNames#WORKER_LOAD_BLOCKS} by outcome (one per load, so a task that
 * joined another's load is not counted again), {@link MetricNames#WORKER_LOAD_BYTES} read from
 * under stores, and the gauge {@link MetricNames#WORKER_LOAD_PENDING} of loads queued or running.
 */
public final class LoadExecutor implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LoadExecutor.class);

  private final TieredBlockStore store;
  private final MountedStores stores;
  private final BlockFileOpener opener;
  private final AlignedBufferPool buffers;
  private final LoadSettings settings;
  private final ThreadPoolExecutor pool;

  /** The load of each block queued or running; a later task for the block joins it. */
  private final ConcurrentHashMap<Long, CompletableFuture<LoadBlockResult>> inFlight =
      new ConcurrentHashMap<>();

  private final MeterRegistry registry;
  private final List<Meter> meters = new ArrayList<>();
  private final Map<LoadBlockOutcome, Counter> outcomes = new EnumMap<>(LoadBlockOutcome.class);
  private final Counter loadBytes;

  /**
   * @param opener opens block files, with Direct I/O where the tier takes it
   * @param buffers where each running task takes its chunk buffer
   * @param registry where the load meters are published; {@link #close} removes them
   */
  public LoadExecutor(
      TieredBlockStore store,
      MountedStores stores,
      BlockFileOpener opener,
      AlignedBufferPool buffers,
      LoadSettings settings,
      MeterRegistry registry) {
    this.store = store;
    this.stores = stores;
    this.opener = opener;
    this.buffers = buffers;
    this.settings = settings;
    this.registry = registry;
    this.pool =
        new ThreadPoolExecutor(
            settings.threads(),
            settings.threads(),
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(settings.queueSize()),
            DaemonThreads.numbered("block-load-"),
            new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
    outcomes.put(LoadBlockOutcome.LOAD_BLOCK_LOADED, outcomeCounter("loaded"));
    outcomes.put(LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED, outcomeCounter("cached"));
    outcomes.put(LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND, outcomeCounter("not_found"));
    outcomes.put(LoadBlockOutcome.LOAD_BLOCK_FAILED, outcomeCounter("failed"));
    outcomes.put(LoadBlockOutcome.LOAD_BLOCK_BUSY, outcomeCounter("busy"));
    loadBytes =
        Counter.builder(MetricNames.WORKER_LOAD_BYTES)
            .baseUnit("bytes")
            .description("Bytes read from under stores by load tasks")
            .register(registry);
    meters.add(loadBytes);
    meters.add(
        Gauge.builder(MetricNames.WORKER_LOAD_PENDING, inFlight, Map::size)
            .description("Load tasks queued or running")
            .register(registry));
    LOG.info(
        "Load executor: {} threads, up to {} queued tasks, chunks of {} bytes",
        settings.threads(),
        settings.queueSize(),
        settings.chunkSize());
  }

  private Counter outcomeCounter(String outcome) {
    Counter c =
        Counter.builder(MetricNames.WORKER_LOAD_BLOCKS)
            .description("Load tasks by outcome")
            .tag(MetricNames.TAG_OUTCOME, outcome)
            .register(registry);
    meters.add(c);
    return c;
  }

  /**
   * Queues a task; the future completes with its outcome, never exceptionally. Never blocks: a task
   * that does not fit the queue is answered busy at once.
   */
  public CompletableFuture<LoadBlockResult> submit(LoadBlockTask task) {
    long blockId = task.getBlockId();
    BlockMeta cached = store.get(blockId);
    if (cached != null) {
      // Answered without a queue slot, so that re-checking a cached dataset is never busy.
      return CompletableFuture.completedFuture(counted(alreadyCached(cached)));
    }
    CompletableFuture<LoadBlockResult> future = new CompletableFuture<>();
    CompletableFuture<LoadBlockResult> running = inFlight.putIfAbsent(blockId, future);
    if (running != null) {
      return running;
    }
    Job job = new Job(task, future, bufferFor(task.getBlockLength()));
    try {
      pool.execute(job);
    } catch (RejectedExecutionException e) {
      inFlight.remove(blockId, future);
      future.complete(
          counted(
              pool.isShutdown()
                  ? result(
                      task,
                      LoadBlockOutcome.LOAD_BLOCK_FAILED,
                      "worker is stopping; load block " + blockId + " again on another worker")
                  : result(
                      task,
                      LoadBlockOutcome.LOAD_BLOCK_BUSY,
                      "the worker's load queue of "
                          + settings.queueSize()
                          + " tasks is full; send the task again later")));
    }
    return future;
  }

  /**
   * The buffer a task takes when it starts: one chunk, or for a block shorter than a chunk its
   * length rounded up to 4 KiB, so that small blocks do not hold whole chunks.
   */
  private Supplier<ByteBuffer> bufferFor(long blockLength) {
    int size =
        (int)
            Math.max(
                BlockFileWriter.ALIGNMENT,
                Math.min(settings.chunkSize(), LoadSettings.alignUp(Math.max(0, blockLength))));
    return () -> buffers.acquire(size);
  }

  /** Loads queued or running. */
  public int pending() {
    return inFlight.size();
  }

  /** A task waiting for a thread: what to load, whom to tell, and how to get a buffer. */
  private final class Job implements Runnable {
    final LoadBlockTask task;
    final CompletableFuture<LoadBlockResult> future;
    final Supplier<ByteBuffer> buffer;

    Job(
        LoadBlockTask task,
        CompletableFuture<LoadBlockResult> future,
        Supplier<ByteBuffer> buffer) {
      this.task = task;
      this.future = future;
      this.buffer = buffer;
    }

    @Override
    public void run() {
      LoadBlockResult result;
      try {
        result = load(task, buffer);
      } catch (RuntimeException | Error e) {
        LOG.warn(
            "Load of block {} from {} failed unexpectedly",
            task.getBlockId(),
            task.getUfsPath(),
            e);
        result =
            result(
                task,
                LoadBlockOutcome.LOAD_BLOCK_FAILED,
                "cannot load block " + task.getBlockId() + " from " + task.getUfsPath() + ": " + e);
      }
      finish(result);
    }

    /** Completes the future; a later task for the block starts a load of its own. */
    void finish(LoadBlockResult result) {
      inFlight.remove(task.getBlockId(), future);
      future.complete(counted(result));
    }
  }

  private LoadBlockResult load(LoadBlockTask task, Supplier<ByteBuffer> bufferSupplier) {
    long blockId = task.getBlockId();
    String path = task.getUfsPath();
    BlockMeta cached = store.get(blockId);
    if (cached != null) {
      return alreadyCached(cached);
    }
    if (task.getBlockStart() < 0 || task.getBlockLength() < 0) {
      return result(
          task,
          LoadBlockOutcome.LOAD_BLOCK_FAILED,
          "load task of block "
              + blockId
              + " has a negative start "
              + task.getBlockStart()
              + " or length "
              + task.getBlockLength()
              + "; the master sent a bad task");
    }
    TempBlock temp = null;
    ByteBuffer buffer = null;
    try {
      UnderFileSystem ufs = stores.get(path, task.getMountId());
      Optional<TempBlock> reserved = store.createTempBlock(blockId, task.getBlockLength());
      if (reserved.isEmpty()) {
        BlockMeta now = store.get(blockId);
        return now != null
            ? alreadyCached(now)
            : result(
                task,
                LoadBlockOutcome.LOAD_BLOCK_FAILED,
                "no tier has room for block "
                    + blockId
                    + " of "
                    + task.getBlockLength()
                    + " bytes; raise the tier capacities or free "
                    + "space");
      }
      temp = reserved.get();
      // The LoadBlocks answer of a load job tells the master, which records the block at once;
      // a CommitBlock call per block would double the master's work for nothing. A client's
      // request is answered to the client, so the worker tells the master then.
      if (!task.getWorkerTellsMaster()) {
        temp.callerTellsMaster();
      }
      buffer = bufferSupplier.get();
      BlockChecksums checksums;
      try {
        checksums = copy(ufs, task, temp, buffer);
      } catch (IOException e) {
        throw store.writeFailure(temp, e);
      }
      BlockMeta meta = store.commit(temp, temp.length(), checksums);
      temp = null;
      LOG.debug(
          "Loaded block {} ({} bytes) from {} into {}",
          blockId,
          meta.length(),
          path,
          meta.tierAlias());
      return result(task, LoadBlockOutcome.LOAD_BLOCK_LOADED, "").toBuilder()
          .setTier(meta.tierAlias())
          .build();
    } catch (NoSuchFileException e) {
      LOG.debug("Not loading block {}: {} does not exist", blockId, path);
      return result(
          task,
          LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND,
          "under-store file "
              + path
              + " does not exist (any more); block "
              + blockId
              + " was not loaded");
    } catch (UnderStoreEndedException e) {
      LOG.info("Load of block {} failed: {}", blockId, e.getMessage());
      return result(task, LoadBlockOutcome.LOAD_BLOCK_FAILED, e.getMessage());
    } catch (InterruptedIOException | ClosedByInterruptException e) {
      return result(
          task,
          LoadBlockOutcome.LOAD_BLOCK_FAILED,
          "load of block "
              + blockId
              + " from "
              + path
              + " was interrupted: the worker is stopping; load it again");
    } catch (Exception e) {
      LOG.info("Load of block {} from {} failed: {}", blockId, path, e.toString());
      return result(
          task,
          LoadBlockOutcome.LOAD_BLOCK_FAILED,
          "cannot load block " + blockId + " from " + path + ": " + e);
    } finally {
      if (temp != null) {
        store.abort(temp);
      }
      if (buffer != null) {
        buffers.release(buffer);
      }
    }
  }

  /**
   * Copies the block's range chunk by chunk: each chunk is filled completely from the under store
   * before it is written, so that under Direct I/O only the block's last chunk has a length that is
   * not a multiple of 4 KiB (the writer pads it and truncates on close).
   */
  private BlockChecksums copy(
      UnderFileSystem ufs, LoadBlockTask task, TempBlock temp, ByteBuffer buffer)
      throws IOException {
    int chunk = buffer.limit();
    long total = task.getBlockLength();
    long done = 0;
    try (BlockFileWriter out = opener.open(temp)) {
      while (done < total) {
        int want = (int) Math.min(chunk, total - done);
        buffer.position(0).limit(want);
        while (buffer.hasRemaining()) {
          long at = task.getBlockStart() + done + buffer.position();
          int n = ufs.read(task.getUfsPath(), at, buffer);
          if (n <= 0) {
            throw new UnderStoreEndedException(
                "under-store file "
                    + task.getUfsPath()
                    + " ends at byte "
                    + at
                    + ", inside block "
                    + task.getBlockId()
                    + ": it "
                    + "changed after it was listed; run the load again");
          }
          loadBytes.increment(n);
        }
        if (Thread.currentThread().isInterrupted()) {
          throw new InterruptedIOException("load of block " + task.getBlockId() + " interrupted");
        }
        buffer.flip();
        out.write(buffer);
        done += want;
      }
      return out.checksums();
    }
  }

  /** The under-store file is shorter than the task said. */
  private static final class UnderStoreEndedException extends IOException {
    UnderStoreEndedException(String message) {
      super(message);
    }
  }

  private static LoadBlockResult alreadyCached(BlockMeta meta) {
    return LoadBlockResult.newBuilder()
        .setBlockId(meta.blockId())
        .setOutcome(LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED)
        .setTier(meta.tierAlias())
        .build();
  }

  private static LoadBlockResult result(
      LoadBlockTask task, LoadBlockOutcome outcome, String message) {
    return LoadBlockResult.newBuilder()
        .setBlockId(task.getBlockId())
        .setOutcome(outcome)
        .setMessage(message)
        .build();
  }

  private LoadBlockResult counted(LoadBlockResult result) {
    Counter c = outcomes.get(result.getOutcome());
    if (c != null) {
      c.increment();
    }
    return result;
  }

  /**
   * Stops the threads: running loads are interrupted and aborted, queued ones answered {@link
   * LoadBlockOutcome#LOAD_BLOCK_FAILED}, later submits too; waits up to 10 seconds for the threads
   * to end, then removes the meters. Idempotent.
   */
  @Override
  public synchronized void close() throws InterruptedException {
    if (pool.isShutdown()) {
      return;
    }
    for (Runnable r : pool.shutdownNow()) {
      Job job = (Job) r;
      job.finish(
          result(
              job.task,
              LoadBlockOutcome.LOAD_BLOCK_FAILED,
              "worker is stopping; "
                  + "load block "
                  + job.task.getBlockId()
                  + " again on another worker"));
    }
    if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
      LOG.warn("Load threads still running 10 s after the worker asked them to stop");
    }
    meters.forEach(registry::remove);
  }
}
