package io.strata.worker.load;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.BlockIds;
import io.strata.common.buffer.AlignedBufferPool;
import io.strata.common.buffer.BufferPoolSettings;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.underfs.UnderStores;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.TierSpec;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.master.MountOptions;
import io.strata.worker.master.WorkerMasterClient;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Load tasks against a real block store in temporary folders and a local under store. */
class LoadExecutorTest {
  private static final int CHUNK = 64 * 1024;

  /** Three whole chunks and a partial one. */
  private static final int BLOCK = 3 * CHUNK + 3392;

  @TempDir Path dir;

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> toClose = new ArrayList<>();
  private TieredBlockStore store;
  private WorkerMasterClient master;
  private MountedStores stores;
  private AlignedBufferPool pool;

  @BeforeEach
  void setUp() throws Exception {
    store =
        new TieredBlockStore(List.of(new TierSpec("MEM", dir.resolve("mem"), 4L << 20)), registry);
    store.open();
    // Mount 0 needs no options, so the master is never called.
    master = new WorkerMasterClient("127.0.0.1", 1, Duration.ofSeconds(1));
    stores = new MountedStores(new UnderStores(), new MountOptions(master));
    pool =
        new AlignedBufferPool(
            BufferPoolSettings.of(16L << 20, 4), registry, MetricNames.WORKER_BUFFER_POOL);
    Files.createDirectories(dir.resolve("ufs"));
  }

  @AfterEach
  void tearDown() throws Exception {
    GatedUnderFileSystem.open();
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    pool.close();
    stores.close();
    master.close();
    store.close();
  }

  private LoadExecutor executor(int threads, int queueSize) {
    LoadExecutor executor =
        new LoadExecutor(
            store,
            stores,
            new BlockFileOpener(true),
            pool,
            new LoadSettings(threads, queueSize, CHUNK),
            registry);
    toClose.add(executor);
    return executor;
  }

  private Path file(String name, byte[] content) throws IOException {
    return Files.write(dir.resolve("ufs").resolve(name), content);
  }

  private static byte[] random(int length, long seed) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static LoadBlockTask task(long blockId, String uri, long start, long length) {
    return LoadBlockTask.newBuilder()
        .setBlockId(blockId)
        .setUfsPath(uri)
        .setMountId(0)
        .setBlockStart(start)
        .setBlockLength(length)
        .build();
  }

  private static LoadBlockResult get(CompletableFuture<LoadBlockResult> future) throws Exception {
    return future.get(60, TimeUnit.SECONDS);
  }

  private byte[] cachedBytes(long blockId) throws IOException {
    assertTrue(store.contains(blockId), "block " + blockId + " is cached");
    return Files.readAllBytes(store.get(blockId).path());
  }

  private long entries(String tierFolder) throws IOException {
    try (Stream<Path> s = Files.list(dir.resolve("mem").resolve(tierFolder))) {
      return s.count();
    }
  }

  private double outcomes(String outcome) {
    return registry
        .get(MetricNames.WORKER_LOAD_BLOCKS)
        .tag(MetricNames.TAG_OUTCOME, outcome)
        .counter()
        .count();
  }

  /** Tasks for the {@link #BLOCK}-sized blocks of gated files, one block per file. */
  private List<LoadBlockTask> gatedTasks(int count, long firstFileId) throws IOException {
    List<LoadBlockTask> tasks = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Path f = file("gated-" + (firstFileId + i), random(BLOCK, firstFileId + i));
      tasks.add(task(BlockIds.blockId(firstFileId + i, 0), GatedUnderFileSystem.uri(f), 0, BLOCK));
    }
    return tasks;
  }

  @Test
  void loadedBlocksHoldExactlyTheSourceBytesForSeveralChunksAndForATinyBlock() throws Exception {
    LoadExecutor executor = executor(2, 16);
    byte[] data = random(2 * BLOCK + 1000, 1);
    String uri = "file://" + file("data", data);
    String tinyUri = "file://" + file("tiny", new byte[] {1, 2, 3, 4, 5, 6, 7});
    long first = BlockIds.blockId(1, 0);
    long second = BlockIds.blockId(1, 1);
    long last = BlockIds.blockId(1, 2);
    long tiny = BlockIds.blockId(2, 0);
    List<CompletableFuture<LoadBlockResult>> results =
        List.of(
            executor.submit(task(first, uri, 0, BLOCK)),
            executor.submit(task(second, uri, BLOCK, BLOCK)),
            executor.submit(task(last, uri, 2 * BLOCK, 1000)),
            executor.submit(task(tiny, tinyUri, 0, 7)));
    for (CompletableFuture<LoadBlockResult> f : results) {
      LoadBlockResult r = get(f);
      assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, r.getOutcome(), r.getMessage());
      assertEquals("MEM", r.getTier());
    }
    assertArrayEquals(Arrays.copyOfRange(data, 0, BLOCK), cachedBytes(first));
    assertArrayEquals(Arrays.copyOfRange(data, BLOCK, 2 * BLOCK), cachedBytes(second));
    assertArrayEquals(Arrays.copyOfRange(data, 2 * BLOCK, data.length), cachedBytes(last));
    assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7}, cachedBytes(tiny));
    assertEquals(0, entries("tmp"));

    assertEquals(4, outcomes("loaded"));
    assertEquals(data.length + 7, registry.get(MetricNames.WORKER_LOAD_BYTES).counter().count());
    assertEquals(0, registry.get(MetricNames.WORKER_LOAD_PENDING).gauge().value());
    assertEquals(0, pool.inUseBytes());
    assertTrue(pool.peakInUseBytes() <= 2L * CHUNK, "peak " + pool.peakInUseBytes());
  }

  @Test
  void aSecondLoadOfACachedBlockIsAlreadyCachedWithItsTier() throws Exception {
    LoadExecutor executor = executor(1, 4);
    String uri = "file://" + file("f", random(BLOCK, 2));
    LoadBlockTask t = task(BlockIds.blockId(3, 0), uri, 0, BLOCK);
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(executor.submit(t)).getOutcome());
    LoadBlockResult again = get(executor.submit(t));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED, again.getOutcome());
    assertEquals("MEM", again.getTier());
    assertEquals(t.getBlockId(), again.getBlockId());
    assertEquals(1, outcomes("cached"));
    assertEquals(
        BLOCK,
        registry.get(MetricNames.WORKER_LOAD_BYTES).counter().count(),
        "the cached block is not read again");
  }

  @Test
  void tasksForABlockAlreadyRunningOrQueuedJoinItsOneLoad() throws Exception {
    LoadExecutor executor = executor(1, 4);
    List<LoadBlockTask> tasks = gatedTasks(2, 10);
    GatedUnderFileSystem.close(1);
    CompletableFuture<LoadBlockResult> running = executor.submit(tasks.get(0));
    assertTrue(GatedUnderFileSystem.awaitWaiting(), "the first load reached the under store");
    assertSame(running, executor.submit(tasks.get(0)), "joins the running load");
    CompletableFuture<LoadBlockResult> queued = executor.submit(tasks.get(1));
    assertSame(queued, executor.submit(tasks.get(1)), "joins the queued load");
    assertEquals(2, executor.pending());
    GatedUnderFileSystem.open();
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(running).getOutcome());
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(queued).getOutcome());
    assertEquals(2, outcomes("loaded"), "one load per block");
    assertEquals(2L * BLOCK, registry.get(MetricNames.WORKER_LOAD_BYTES).counter().count());
  }

  @Test
  void aMissingFileIsNotFoundAndLeavesNothingInTheStore() throws Exception {
    LoadExecutor executor = executor(1, 4);
    String uri = "file://" + dir.resolve("ufs/missing");
    LoadBlockResult r = get(executor.submit(task(BlockIds.blockId(4, 0), uri, 0, BLOCK)));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND, r.getOutcome());
    assertTrue(r.getMessage().contains(uri), r.getMessage());
    assertFalse(store.contains(BlockIds.blockId(4, 0)));
    assertEquals(0, entries("blocks"));
    assertEquals(0, entries("tmp"));
    assertEquals(1, outcomes("not_found"));
    assertEquals(0, pool.inUseBytes());
  }

  @Test
  void aFileShorterThanTheTaskSaysFailsAndLeavesNothingInTheStore() throws Exception {
    LoadExecutor executor = executor(1, 4);
    String uri = "file://" + file("short", random(100_000, 5));
    LoadBlockResult r = get(executor.submit(task(BlockIds.blockId(5, 0), uri, 0, BLOCK)));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_FAILED, r.getOutcome());
    assertEquals(
        "under-store file "
            + uri
            + " ends at byte 100000, inside block "
            + BlockIds.blockId(5, 0)
            + ": it changed after it was listed; run the load again",
        r.getMessage());
    assertFalse(store.contains(BlockIds.blockId(5, 0)));
    assertEquals(0, entries("blocks"));
    assertEquals(0, entries("tmp"));
    assertEquals(0, pool.inUseBytes());
  }

  @Test
  void aBlockNoTierHasRoomForFailsWithTheFix() throws Exception {
    LoadExecutor executor = executor(1, 4);
    String uri = "file://" + file("big", new byte[10]);
    long huge = 5L << 20;
    LoadBlockResult r = get(executor.submit(task(BlockIds.blockId(6, 0), uri, 0, huge)));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_FAILED, r.getOutcome());
    assertEquals(
        "no tier has room for block "
            + BlockIds.blockId(6, 0)
            + " of "
            + huge
            + " bytes; raise the tier capacities or free space",
        r.getMessage());
    assertEquals(0, entries("tmp"));
  }

  @Test
  void aTaskThatDoesNotFitTheQueueIsAnsweredBusyAtOnce() throws Exception {
    LoadExecutor executor = executor(1, 2);
    List<LoadBlockTask> tasks = gatedTasks(4, 20);
    GatedUnderFileSystem.close(1);
    CompletableFuture<LoadBlockResult> running = executor.submit(tasks.get(0));
    assertTrue(GatedUnderFileSystem.awaitWaiting());
    CompletableFuture<LoadBlockResult> queued1 = executor.submit(tasks.get(1));
    CompletableFuture<LoadBlockResult> queued2 = executor.submit(tasks.get(2));
    CompletableFuture<LoadBlockResult> busy = executor.submit(tasks.get(3));
    assertTrue(busy.isDone(), "answered without waiting for a thread");
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_BUSY, busy.get().getOutcome());
    assertEquals(tasks.get(3).getBlockId(), busy.get().getBlockId());
    assertEquals(3, executor.pending());
    GatedUnderFileSystem.open();
    for (CompletableFuture<LoadBlockResult> f : List.of(running, queued1, queued2)) {
      assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(f).getOutcome());
    }
    assertEquals(1, outcomes("busy"));
    // Busy is not remembered: the same task is taken once there is room.
    assertEquals(
        LoadBlockOutcome.LOAD_BLOCK_LOADED, get(executor.submit(tasks.get(3))).getOutcome());
  }

  @Test
  void queuedTasksHoldNoBufferWhileTheOnlyThreadIsBusy() throws Exception {
    LoadExecutor executor = executor(1, 16);
    List<LoadBlockTask> tasks = gatedTasks(6, 30);
    GatedUnderFileSystem.close(1);
    List<CompletableFuture<LoadBlockResult>> results = new ArrayList<>();
    results.add(executor.submit(tasks.get(0)));
    assertTrue(GatedUnderFileSystem.awaitWaiting());
    for (LoadBlockTask t : tasks.subList(1, tasks.size())) {
      results.add(executor.submit(t));
    }
    assertEquals(6, executor.pending());
    assertEquals(6, registry.get(MetricNames.WORKER_LOAD_PENDING).gauge().value());
    assertEquals(CHUNK, pool.inUseBytes(), "only the running task holds a buffer");
    assertEquals(1, pool.allocations());

    GatedUnderFileSystem.open();
    for (CompletableFuture<LoadBlockResult> f : results) {
      assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(f).getOutcome());
    }
    assertEquals(0, pool.inUseBytes());
    assertEquals(CHUNK, pool.peakInUseBytes(), "one thread never held more than one chunk");
    assertEquals(1, pool.allocations(), "the tasks took turns with one pooled buffer");
    assertEquals(0, executor.pending());
  }

  @Test
  void directMemoryOfManyTasksStaysWithinThreadsTimesChunk() throws Exception {
    int threads = 2;
    LoadExecutor executor = executor(threads, 32);
    List<CompletableFuture<LoadBlockResult>> results = new ArrayList<>();
    for (LoadBlockTask t : gatedTasks(12, 40)) {
      results.add(executor.submit(t));
    }
    for (CompletableFuture<LoadBlockResult> f : results) {
      assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(f).getOutcome());
    }
    assertEquals(0, pool.inUseBytes());
    assertTrue(pool.peakInUseBytes() >= CHUNK);
    assertTrue(
        pool.peakInUseBytes() <= (long) threads * CHUNK,
        "peak " + pool.peakInUseBytes() + " bytes for " + threads + " threads");
    assertEquals(
        pool.peakInUseBytes(),
        registry
            .get(MetricNames.WORKER_BUFFER_POOL + "." + MetricNames.BUFFER_POOL_IN_USE_PEAK)
            .gauge()
            .value());
  }

  @Test
  void aBlockSmallerThanAChunkTakesABufferOfItsOwnSize() throws Exception {
    LoadExecutor executor = executor(1, 4);
    Path small = file("small", random(5000, 6));
    GatedUnderFileSystem.close(1);
    CompletableFuture<LoadBlockResult> r =
        executor.submit(task(BlockIds.blockId(7, 0), GatedUnderFileSystem.uri(small), 0, 5000));
    assertTrue(GatedUnderFileSystem.awaitWaiting());
    assertEquals(8192, pool.inUseBytes(), "5000 bytes rounded up to 4 KiB, not a whole chunk");
    GatedUnderFileSystem.open();
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, get(r).getOutcome());
    assertArrayEquals(random(5000, 6), cachedBytes(BlockIds.blockId(7, 0)));
  }

  @Test
  void closeFailsQueuedTasksAndAbortsTheRunningOne() throws Exception {
    LoadExecutor executor = executor(1, 4);
    List<LoadBlockTask> tasks = gatedTasks(2, 50);
    GatedUnderFileSystem.close(1);
    CompletableFuture<LoadBlockResult> running = executor.submit(tasks.get(0));
    assertTrue(GatedUnderFileSystem.awaitWaiting());
    CompletableFuture<LoadBlockResult> queued = executor.submit(tasks.get(1));
    executor.close();

    LoadBlockResult interrupted = get(running);
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_FAILED, interrupted.getOutcome());
    assertTrue(interrupted.getMessage().contains("interrupted"), interrupted.getMessage());
    LoadBlockResult dropped = get(queued);
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_FAILED, dropped.getOutcome());
    assertTrue(dropped.getMessage().contains("worker is stopping"), dropped.getMessage());
    assertEquals(0, store.blockCount());
    assertEquals(0, entries("blocks"));
    assertEquals(0, entries("tmp"), "the half-written block file is deleted");
    assertEquals(0, pool.inUseBytes(), "the running task gave its buffer back");
    LoadBlockResult late = get(executor.submit(tasks.get(1)));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_FAILED, late.getOutcome());
  }
}
