package io.strata.worker.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.BlockReport;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.CommitBlocksResponse;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Block commits go to the master in batches, or one by one to a master without batches. */
class BlockCommitsTest {
  private final List<CommitBlocksRequest> batches = new CopyOnWriteArrayList<>();
  private final List<CommitBlockRequest> singles = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private Server server;
  private WorkerMasterClient client;

  private void startMaster(boolean knowsBatches) throws Exception {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new BlockMasterWorkerGrpc.BlockMasterWorkerImplBase() {
                  @Override
                  public void commitBlock(
                      CommitBlockRequest request, StreamObserver<CommitBlockResponse> observer) {
                    singles.add(request);
                    observer.onNext(CommitBlockResponse.getDefaultInstance());
                    observer.onCompleted();
                  }

                  @Override
                  public void commitBlocks(
                      CommitBlocksRequest request, StreamObserver<CommitBlocksResponse> observer) {
                    if (!knowsBatches) {
                      super.commitBlocks(request, observer);
                      return;
                    }
                    batches.add(request);
                    observer.onNext(CommitBlocksResponse.getDefaultInstance());
                    observer.onCompleted();
                  }
                })
            .build()
            .start();
    client = new WorkerMasterClient("127.0.0.1", server.getPort(), Duration.ofSeconds(5));
  }

  @AfterEach
  void stop() throws Exception {
    timer.shutdownNow();
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static BlockReport block(long id) {
    return BlockReport.newBuilder().setBlockId(id).setLength(10).setTier("MEM").build();
  }

  @Test
  void manyCommitsAtOnceGoInFewCallsAndEachBlockOnce() throws Exception {
    startMaster(true);
    BlockCommits commits = new BlockCommits(client, timer);
    for (long id = 1; id <= 2500; id++) {
      commits.add(7, block(id));
    }
    Set<Long> seen = new TreeSet<>();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> batches.stream().mapToInt(CommitBlocksRequest::getBlocksCount).sum() == 2500);
    for (CommitBlocksRequest b : batches) {
      assertEquals(7, b.getWorkerId());
      assertTrue(b.getBlocksCount() <= BlockCommits.MAX_BATCH);
      b.getBlocksList().forEach(r -> assertTrue(seen.add(r.getBlockId()), "repeated"));
    }
    assertEquals(2500, seen.size());
    assertTrue(batches.size() < 100, batches.size() + " calls for 2500 blocks");
    assertEquals(0, singles.size());
  }

  @Test
  void aMasterWithoutBatchesGetsEachBlockAlone() throws Exception {
    startMaster(false);
    BlockCommits commits = new BlockCommits(client, timer);
    for (long id = 1; id <= 20; id++) {
      commits.add(7, block(id));
    }
    // Twenty single calls show the worker has already found the master has no batches.
    await().atMost(Duration.ofSeconds(10)).until(() -> singles.size() == 20);
    commits.add(7, block(21));
    await().atMost(Duration.ofSeconds(10)).until(() -> singles.size() == 21);
    assertEquals(0, batches.size());
  }
}
