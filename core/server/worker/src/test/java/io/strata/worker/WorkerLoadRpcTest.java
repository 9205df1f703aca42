package io.strata.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.strata.common.BlockIds;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadBlocksRequest;
import io.strata.proto.LoadBlocksResponse;
import io.strata.proto.WorkerServiceGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** LoadBlocks over real gRPC against an in-JVM worker and a file:// under store. */
class WorkerLoadRpcTest {
  private static final int CHUNK = 64 * 1024;
  private static final int BLOCK = 128 * 1024;

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private ManagedChannel channel;

  @BeforeEach
  void setUp() throws Exception {
    master = new FakeMaster();
    worker =
        new WorkerServer(
            TestWorkers.config(
                dir,
                master.port(),
                Map.of(
                    "strata.worker.load.threads", "2",
                    "strata.worker.load.chunk.size", "64KB",
                    "strata.worker.load.queue.size", "8")));
    worker.start();
    channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", worker.rpcPort()).usePlaintext().build();
  }

  @AfterEach
  void tearDown() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    worker.close();
    master.close();
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

  private LoadBlocksResponse load(List<LoadBlockTask> tasks) {
    return WorkerServiceGrpc.newBlockingStub(channel)
        .withDeadlineAfter(60, TimeUnit.SECONDS)
        .loadBlocks(LoadBlocksRequest.newBuilder().addAllTasks(tasks).build());
  }

  private double meter(String name) {
    return worker.meterRegistry().get(name).gauge().value();
  }

  @Test
  void loadBlocksAnswersEveryTaskInOrderAndCachesTheBlocks() throws Exception {
    byte[] data = new byte[2 * BLOCK + 5000];
    new Random(11).nextBytes(data);
    Path file = Files.createDirectories(dir.resolve("ufs")).resolve("data set.bin");
    Files.write(file, data);
    String uri = "file://" + file;
    String missing = "file://" + dir.resolve("ufs/missing");
    List<LoadBlockTask> tasks =
        List.of(
            task(BlockIds.blockId(1, 0), uri, 0, BLOCK),
            task(BlockIds.blockId(9, 0), missing, 0, BLOCK),
            task(BlockIds.blockId(1, 1), uri, BLOCK, BLOCK),
            task(BlockIds.blockId(1, 2), uri, 2 * BLOCK, 5000));

    LoadBlocksResponse response = load(tasks);
    assertEquals(tasks.size(), response.getResultsCount());
    for (int i = 0; i < tasks.size(); i++) {
      assertEquals(
          tasks.get(i).getBlockId(),
          response.getResults(i).getBlockId(),
          "result " + i + " answers task " + i);
    }
    LoadBlockResult notFound = response.getResults(1);
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND, notFound.getOutcome());
    assertTrue(notFound.getMessage().contains(missing), notFound.getMessage());
    for (int i : new int[] {0, 2, 3}) {
      LoadBlockResult r = response.getResults(i);
      assertEquals(LoadBlockOutcome.LOAD_BLOCK_LOADED, r.getOutcome(), r.getMessage());
      assertEquals("MEM", r.getTier());
      LoadBlockTask t = tasks.get(i);
      int from = (int) t.getBlockStart();
      assertArrayEquals(
          Arrays.copyOfRange(data, from, from + (int) t.getBlockLength()),
          Files.readAllBytes(worker.blockStore().get(t.getBlockId()).path()));
    }

    LoadBlocksResponse again = load(List.of(tasks.get(0)));
    assertEquals(LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED, again.getResults(0).getOutcome());
    assertEquals("MEM", again.getResults(0).getTier());
    assertEquals(0, load(List.of()).getResultsCount(), "an empty request is answered at once");

    String pool = MetricNames.WORKER_BUFFER_POOL + ".";
    assertEquals(0, meter(pool + MetricNames.BUFFER_POOL_IN_USE));
    double peak = meter(pool + MetricNames.BUFFER_POOL_IN_USE_PEAK);
    assertTrue(peak > 0 && peak <= 2 * CHUNK, "peak " + peak + " within 2 threads x chunk");
    assertEquals(
        3,
        worker
            .meterRegistry()
            .get(MetricNames.WORKER_LOAD_BLOCKS)
            .tag(MetricNames.TAG_OUTCOME, "loaded")
            .counter()
            .count());
    assertEquals(0, meter(MetricNames.WORKER_LOAD_PENDING));
    String scrape = worker.meterRegistry().scrape();
    for (String series :
        List.of(
            "strata_worker_load_blocks_total{outcome=\"loaded\"} 3.0",
            "strata_worker_load_blocks_total{outcome=\"not_found\"} 1.0",
            "strata_worker_load_bytes_total " + (double) (2 * BLOCK + 5000),
            "strata_worker_load_pending 0.0",
            "strata_worker_buffer_pool_in_use_peak_bytes ")) {
      assertTrue(scrape.contains(series), "/metrics shows " + series);
    }
    assertEquals(
        3,
        worker
            .meterRegistry()
            .get(MetricNames.WORKER_RPC_LATENCY)
            .tag(MetricNames.TAG_METHOD, "LoadBlocks")
            .timer()
            .count(),
        "each call is timed");
  }
}
