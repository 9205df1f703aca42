package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.strata.client.testing.Tmpfs;
import io.strata.common.BlockIds;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.BlockReport;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.PersistBlocksRequest;
import io.strata.proto.PersistBlocksResponse;
import io.strata.proto.ReleaseBlocksRequest;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteBlocksHeader;
import io.strata.proto.WriteBlocksRequest;
import io.strata.proto.WriteBlocksResponse;
import io.strata.worker.block.TieredBlockStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files written to a worker's cache only (ASYNC_THROUGH, MUST_CACHE): WriteBlocks holds their
 * blocks in the last tier and tells the master before it answers, PersistBlocks writes them to the
 * under store, ReleaseBlocks lets the cache evict them.
 */
class HeldBlocksRpcTest {
  private static final int MB = 1 << 20;

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private ManagedChannel channel;
  private Path ufs;

  /** Starts the master and a worker (MEM 8 MB, SSD 16 MB unless overridden), registered. */
  private void start(Map<String, String> extra) throws Exception {
    master = new FakeMaster();
    ufs = Files.createDirectories(dir.resolve("ufs"));
    startWorker(extra);
  }

  private void startWorker(Map<String, String> extra) throws Exception {
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), extra));
    worker.start();
    channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", worker.rpcPort()).usePlaintext().build();
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.masterLink().workerId() >= 0);
  }

  private void stopWorker() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    worker.close();
  }

  @AfterEach
  void tearDown() throws Exception {
    if (worker != null) {
      stopWorker();
    }
    if (master != null) {
      master.close();
    }
  }

  private TieredBlockStore store() {
    return worker.blockStore();
  }

  private WorkerServiceGrpc.WorkerServiceBlockingStub stub() {
    return WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
  }

  /** Starts a WriteBlocks call; the future completes with its response or its error. */
  private StreamObserver<WriteBlocksRequest> startWrite(
      long dataId, long blockSize, CompletableFuture<WriteBlocksResponse> result) {
    StreamObserver<WriteBlocksRequest> call =
        WorkerServiceGrpc.newStub(channel)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .writeBlocks(
                new StreamObserver<>() {
                  @Override
                  public void onNext(WriteBlocksResponse value) {
                    result.complete(value);
                  }

                  @Override
                  public void onError(Throwable t) {
                    result.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {}
                });
    call.onNext(
        WriteBlocksRequest.newBuilder()
            .setHeader(WriteBlocksHeader.newBuilder().setDataId(dataId).setBlockSize(blockSize))
            .build());
    return call;
  }

  /** Sends the data in chunks of at most 1 MB. */
  private static void send(StreamObserver<WriteBlocksRequest> call, byte[] data) {
    for (int off = 0; off < data.length; off += MB) {
      int n = Math.min(MB, data.length - off);
      call.onNext(
          WriteBlocksRequest.newBuilder().setChunk(ByteString.copyFrom(data, off, n)).build());
    }
  }

  private WriteBlocksResponse write(long dataId, long blockSize, byte[] data) throws Exception {
    CompletableFuture<WriteBlocksResponse> result = new CompletableFuture<>();
    StreamObserver<WriteBlocksRequest> call = startWrite(dataId, blockSize, result);
    send(call, data);
    call.onCompleted();
    return result.get(30, TimeUnit.SECONDS);
  }

  private static byte[] content(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (seed * 31 + i % 251);
    }
    return b;
  }

  private static long filesIn(Path folder) throws Exception {
    try (Stream<Path> s = Files.list(folder)) {
      return s.count();
    }
  }

  private static boolean emptyFolder(Path folder) {
    try {
      return filesIn(folder) == 0;
    } catch (Exception e) {
      return false;
    }
  }

  @Test
  void writeBlocksHoldsTheBlocksInTheLastTierAndTellsTheMasterBeforeAnswering() throws Exception {
    start(Map.of("strata.worker.tier.ssd.capacity", "64MB"));
    long dataId = 5;
    int blockSize = 10 * MB;
    // 2.5 blocks; the last is long enough to be reserved whole and committed shorter.
    byte[] data = content(25 * MB, 5);
    WriteBlocksResponse response = write(dataId, blockSize, data);

    List<Long> ids =
        List.of(
            BlockIds.blockId(dataId, 0), BlockIds.blockId(dataId, 1), BlockIds.blockId(dataId, 2));
    assertEquals(data.length, response.getLength());
    assertEquals(ids, response.getBlockIdsList());
    assertEquals("SSD", response.getTier());
    // Told before the answer: no waiting here.
    CommitBlocksRequest told =
        master.commitBatches.stream()
            .filter(c -> c.getBlocksCount() == 3)
            .findFirst()
            .orElseThrow();
    assertEquals(worker.masterLink().workerId(), told.getWorkerId());
    assertEquals(
        BlockReport.newBuilder().setBlockId(ids.get(2)).setLength(5 * MB).setTier("SSD").build(),
        told.getBlocks(2));
    for (int i = 0; i < 3; i++) {
      long id = ids.get(i);
      assertTrue(store().isHeld(id), "block " + i + " is not held");
      int from = i * blockSize;
      assertArrayEquals(
          Arrays.copyOfRange(data, from, Math.min(data.length, from + blockSize)),
          Files.readAllBytes(dir.resolve("ssd/blocks/" + id)),
          "bytes of block " + i);
      assertTrue(Files.exists(dir.resolve("ssd/held/" + id)));
    }
    assertEquals(data.length, store().usedBytes("SSD"));
    assertEquals(0, store().usedBytes("MEM"));
    assertEquals(
        (double) data.length,
        worker
            .meterRegistry()
            .get(MetricNames.WORKER_BLOCKS_HELD_BYTES)
            .tag("tier", "SSD")
            .gauge()
            .value());
    assertTrue(emptyFolder(dir.resolve("ssd/tmp")), "a temporary block was left");
    await("a heartbeat to carry the held blocks")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () ->
                master.heartbeats.stream()
                    .anyMatch(
                        h ->
                            h.getAddedBlocksList().stream()
                                .anyMatch(b -> b.getBlockId() == ids.get(0))));

    // The blocks are still held after the worker restarts.
    stopWorker();
    startWorker(Map.of("strata.worker.tier.ssd.capacity", "64MB"));
    for (long id : ids) {
      assertTrue(store().isHeld(id), "block " + id + " is not held after a restart");
    }
  }

  @Test
  void emptyFileHasNoBlocksAndBadHeadersAreRefusedNamingTheField() throws Exception {
    start(Map.of());
    WriteBlocksResponse empty = write(6, MB, new byte[0]);
    assertEquals(0, empty.getLength());
    assertEquals(0, empty.getBlockIdsCount());
    assertEquals(0, store().blockCount());

    for (long[] header : new long[][] {{0, MB}, {7, 0}}) {
      CompletableFuture<WriteBlocksResponse> result = new CompletableFuture<>();
      StreamObserver<WriteBlocksRequest> call = startWrite(header[0], header[1], result);
      call.onCompleted();
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> result.get(30, TimeUnit.SECONDS));
      StatusRuntimeException s = (StatusRuntimeException) e.getCause();
      assertEquals(Status.Code.INVALID_ARGUMENT, s.getStatus().getCode());
      String field = header[0] == 0 ? "data_id" : "block_size";
      assertTrue(s.getStatus().getDescription().contains(field), s.getMessage());
    }
  }

  @Test
  void cancelledWriteBlocksLeavesNothing() throws Exception {
    start(Map.of());
    long dataId = 8;
    CompletableFuture<WriteBlocksResponse> result = new CompletableFuture<>();
    StreamObserver<WriteBlocksRequest> call = startWrite(dataId, MB, result);
    send(call, content(5 * MB / 2, 8));
    // Wait until the server has committed two blocks, so the cancel has something to undo.
    await("the server to commit two blocks")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> store().contains(BlockIds.blockId(dataId, 1)));
    call.onError(new RuntimeException("client gave up"));
    await("the blocks of the cancelled write to go")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> store().blockCount() == 0);
    await("the files of the cancelled write to go")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () ->
                emptyFolder(dir.resolve("ssd/blocks"))
                    && emptyFolder(dir.resolve("ssd/held"))
                    && emptyFolder(dir.resolve("ssd/tmp")));
    assertEquals(0, store().heldBytes("SSD"));
  }

  @Test
  void writeBlocksFailsUnavailableAndKeepsNothingWhenTheMasterCannotBeTold() throws Exception {
    start(Map.of());
    master.failCommitBatches.set(1_000);
    CompletableFuture<WriteBlocksResponse> result = new CompletableFuture<>();
    StreamObserver<WriteBlocksRequest> call = startWrite(9, MB, result);
    send(call, content(3 * MB / 2, 9));
    call.onCompleted();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> result.get(30, TimeUnit.SECONDS));
    StatusRuntimeException s = (StatusRuntimeException) e.getCause();
    assertEquals(Status.Code.UNAVAILABLE, s.getStatus().getCode());
    assertTrue(
        s.getStatus().getDescription().contains("master at 127.0.0.1:" + master.port()),
        s.getMessage());
    assertEquals(0, store().blockCount());
    assertTrue(emptyFolder(dir.resolve("ssd/blocks")) && emptyFolder(dir.resolve("ssd/held")));
  }

  @Test
  void persistBlocksWritesTheExactBytesAndReplacesAnExistingFile() throws Exception {
    start(Map.of());
    byte[] data = content(5 * MB / 2, 10);
    WriteBlocksResponse written = write(10, MB, data);
    Path target = ufs.resolve("persisted.bin");
    Files.write(target, new byte[] {1, 2, 3});
    PersistBlocksResponse persisted =
        stub()
            .persistBlocks(
                PersistBlocksRequest.newBuilder()
                    .addAllBlockIds(written.getBlockIdsList())
                    .setLength(data.length)
                    .setUfsPath("file://" + target)
                    .setMountId(0)
                    .setMode(0644)
                    .build());
    assertEquals(data.length, persisted.getLength());
    assertArrayEquals(data, Files.readAllBytes(target));
    assertEquals(
        data.length + ":" + Files.getLastModifiedTime(target).toMillis(),
        persisted.getUfsFingerprint());
    assertEquals(1, filesIn(ufs), "a temporary file was left beside the persisted one");
    for (long id : written.getBlockIdsList()) {
      assertEquals(0, store().pinCount(id), "block " + id + " was left pinned");
      assertTrue(store().isHeld(id), "persisting released block " + id);
    }
  }

  /** Runs a command of this machine (mount, umount), failing the test if it fails. */
  @Test
  void aTierWhoseFileSystemFillsRefusesTheBlockWithNoSpaceAndTakesWritesOnceThereIsRoom()
      throws Exception {
    // The SSD tier (where held blocks go) says 16 MB, but its file system holds 2 MiB.
    Path ssd = Files.createDirectories(dir.resolve("ssd"));
    Tmpfs.mount(ssd, "2m");
    try {
      start(Map.of());
      ExecutionException full =
          assertThrows(ExecutionException.class, () -> write(20, 4 * MB, content(3 * MB, 20)));
      StatusRuntimeException status = (StatusRuntimeException) full.getCause();
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, status.getStatus().getCode());
      String why = status.getStatus().getDescription();
      assertTrue(why.contains("is full") && why.contains(ssd.toString()), why);
      assertTrue(why.contains("strata.worker.tier.ssd.capacity"), why);
      assertEquals(0, store().blockCount(), "no block of the refused write is kept");
      assertTrue(emptyFolder(ssd.resolve("tmp")), "nothing half-written is left");
      // The refused write took its bytes away: a write that fits succeeds.
      byte[] data = content(MB / 2, 21);
      WriteBlocksResponse written = write(21, MB, data);
      assertEquals(1, written.getBlockIdsCount());
      assertArrayEquals(data, Files.readAllBytes(store().get(written.getBlockIds(0)).path()));
    } finally {
      if (worker != null) {
        stopWorker();
        worker = null;
      }
      Tmpfs.unmount(ssd);
    }
  }

  @Test
  void aHeldBlockThatChangedAtRestIsNeverPersisted() throws Exception {
    start(Map.of());
    byte[] data = content(3 * MB / 2, 12);
    WriteBlocksResponse written = write(12, MB, data);
    long damaged = written.getBlockIds(1);
    Path file = store().get(damaged).path();
    byte[] bytes = Files.readAllBytes(file);
    bytes[100] ^= 0x01;
    Files.write(file, bytes);
    Path target = ufs.resolve("damaged.bin");
    StatusRuntimeException refused =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                stub()
                    .persistBlocks(
                        PersistBlocksRequest.newBuilder()
                            .addAllBlockIds(written.getBlockIdsList())
                            .setLength(data.length)
                            .setUfsPath("file://" + target)
                            .setMode(0644)
                            .build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, refused.getStatus().getCode());
    assertTrue(
        refused.getStatus().getDescription().contains("does not match its checksums"),
        refused.getMessage());
    assertFalse(Files.exists(target), "nothing damaged reaches the under store");
    assertFalse(store().contains(damaged), "the damaged block is dropped");
    assertEquals(1, store().corruptBlocks());
  }

  @Test
  void persistBlocksOfABlockNotHeldOrOfTheWrongLengthFailsFailedPrecondition() throws Exception {
    start(Map.of());
    WriteBlocksResponse written = write(11, MB, content(3 * MB / 2, 11));
    Path target = ufs.resolve("never.bin");
    long missing = BlockIds.blockId(11, 2);
    PersistBlocksRequest.Builder request =
        PersistBlocksRequest.newBuilder()
            .addAllBlockIds(written.getBlockIdsList())
            .setUfsPath("file://" + target)
            .setMode(0644);
    StatusRuntimeException notHeld =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                stub()
                    .persistBlocks(
                        request.clone().addBlockIds(missing).setLength(3 * MB / 2).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, notHeld.getStatus().getCode());
    assertTrue(
        notHeld.getStatus().getDescription().contains("block " + missing), notHeld.getMessage());
    StatusRuntimeException wrongLength =
        assertThrows(
            StatusRuntimeException.class,
            () -> stub().persistBlocks(request.clone().setLength(3 * MB).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, wrongLength.getStatus().getCode());
    // A released block is cached, but no longer held.
    stub()
        .releaseBlocks(
            ReleaseBlocksRequest.newBuilder().addBlockIds(written.getBlockIds(1)).build());
    StatusRuntimeException released =
        assertThrows(
            StatusRuntimeException.class,
            () -> stub().persistBlocks(request.clone().setLength(3 * MB / 2).build()));
    assertEquals(Status.Code.FAILED_PRECONDITION, released.getStatus().getCode());
    assertFalse(Files.exists(target));
    assertEquals(0, filesIn(ufs));
    for (long id : written.getBlockIdsList()) {
      assertEquals(0, store().pinCount(id), "block " + id + " was left pinned");
    }
  }

  @Test
  void heldBlocksFillingTheTierRefuseMoreUntilReleased() throws Exception {
    // One 4 MB tier: held blocks can fill it.
    Map<String, String> conf = new HashMap<>();
    conf.put("strata.worker.tier.mem.capacity", "0");
    conf.put("strata.worker.tier.ssd.capacity", "4MB");
    start(conf);
    WriteBlocksResponse first = write(12, MB, content(3 * MB, 12));

    CompletableFuture<WriteBlocksResponse> refused = new CompletableFuture<>();
    StreamObserver<WriteBlocksRequest> call = startWrite(13, MB, refused);
    send(call, content(2 * MB, 13));
    call.onCompleted();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> refused.get(30, TimeUnit.SECONDS));
    StatusRuntimeException s = (StatusRuntimeException) e.getCause();
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getStatus().getCode());
    assertTrue(
        s.getStatus().getDescription().contains("held blocks not yet persisted")
            && s.getStatus().getDescription().contains("strata.worker.tier.ssd.capacity"),
        s.getMessage());
    assertEquals(3, store().blockCount(), "the refused write kept a block");
    // A block size larger than the whole tier is refused as such once a block outgrows memory.
    CompletableFuture<WriteBlocksResponse> tooLarge = new CompletableFuture<>();
    StreamObserver<WriteBlocksRequest> large = startWrite(14, 8 * MB, tooLarge);
    send(large, content(5 * MB, 14));
    large.onCompleted();
    e = assertThrows(ExecutionException.class, () -> tooLarge.get(30, TimeUnit.SECONDS));
    s = (StatusRuntimeException) e.getCause();
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, s.getStatus().getCode());
    assertTrue(
        s.getStatus().getDescription().contains("more than the whole of tier SSD"), s.getMessage());

    List<Long> released = new ArrayList<>(first.getBlockIdsList());
    released.add(BlockIds.blockId(99, 0));
    assertEquals(
        3,
        stub()
            .releaseBlocks(ReleaseBlocksRequest.newBuilder().addAllBlockIds(released).build())
            .getReleased());
    assertTrue(emptyFolder(dir.resolve("ssd/held")));
    // The released blocks make room for the next write.
    WriteBlocksResponse second = write(13, MB, content(2 * MB, 13));
    assertEquals(2, second.getBlockIdsCount());
    assertFalse(store().contains(first.getBlockIds(0)), "no released block was evicted");
    assertTrue(store().isHeld(second.getBlockIds(1)));
  }
}
