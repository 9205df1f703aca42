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
import io.strata.proto.ConcatFilesRequest;
import io.strata.proto.ConcatFilesResponse;
import io.strata.proto.MountInfo;
import io.strata.proto.RemoveBlocksRequest;
import io.strata.proto.ReportLocalReadsRequest;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import io.strata.proto.WriteSmallFileRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker's gRPC service: write-through to a file:// under store, block removal. */
class WorkerRpcTest {
  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private ManagedChannel channel;
  private Path ufs;

  @BeforeEach
  void setUp() throws Exception {
    master = new FakeMaster();
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), Map.of()));
    worker.start();
    channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", worker.rpcPort()).usePlaintext().build();
    ufs = Files.createDirectories(dir.resolve("ufs"));
  }

  @AfterEach
  void tearDown() throws Exception {
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    worker.close();
    master.close();
  }

  /** Starts a WriteFile call; the future completes with its response or its error. */
  private StreamObserver<WriteFileRequest> startWrite(CompletableFuture<WriteFileResponse> result) {
    return WorkerServiceGrpc.newStub(channel)
        .writeFile(
            new StreamObserver<>() {
              @Override
              public void onNext(WriteFileResponse value) {
                result.complete(value);
              }

              @Override
              public void onError(Throwable t) {
                result.completeExceptionally(t);
              }

              @Override
              public void onCompleted() {}
            });
  }

  private static WriteFileRequest header(String uri, long mountId) {
    return WriteFileRequest.newBuilder()
        .setHeader(WriteFileHeader.newBuilder().setUfsPath(uri).setMountId(mountId).setMode(0644))
        .build();
  }

  private static WriteFileRequest chunk(byte[] data) {
    return WriteFileRequest.newBuilder().setChunk(ByteString.copyFrom(data)).build();
  }

  private long filesIn(Path folder) throws Exception {
    try (Stream<Path> s = Files.list(folder)) {
      return s.count();
    }
  }

  @Test
  void writeFileRoundTripLandsTheFileUnderItsName() throws Exception {
    Path target = ufs.resolve("out.bin");
    byte[] data = new byte[300_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i % 251);
    }
    CompletableFuture<WriteFileResponse> result = new CompletableFuture<>();
    StreamObserver<WriteFileRequest> call = startWrite(result);
    call.onNext(header("file://" + target, 0));
    for (int off = 0; off < data.length; off += 100_000) {
      byte[] part = new byte[100_000];
      System.arraycopy(data, off, part, 0, part.length);
      call.onNext(chunk(part));
    }
    call.onCompleted();
    WriteFileResponse response = result.get(30, TimeUnit.SECONDS);
    assertEquals(data.length, response.getLength());
    assertArrayEquals(data, Files.readAllBytes(target));
    assertEquals(
        data.length + ":" + Files.getLastModifiedTime(target).toMillis(),
        response.getUfsFingerprint());
    assertEquals(1, filesIn(ufs), "a temporary file was left beside the written one");
    assertEquals(
        (double) data.length,
        worker.meterRegistry().get("strata.worker.write.ufs").counter().count());
  }

  @Test
  void cancelledWriteLeavesNoFile() throws Exception {
    Path target = ufs.resolve("cancelled.bin");
    CompletableFuture<WriteFileResponse> result = new CompletableFuture<>();
    StreamObserver<WriteFileRequest> call = startWrite(result);
    call.onNext(header("file://" + target, 0));
    call.onNext(chunk(new byte[50_000]));
    // Wait until the server has started the file, so the cancel has something to abort.
    await("the server to start the file")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () -> {
              try {
                return filesIn(ufs) == 1;
              } catch (Exception e) {
                return false;
              }
            });
    call.onError(new RuntimeException("client gave up"));
    await("the partial file to be discarded")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () -> {
              try {
                return filesIn(ufs) == 0;
              } catch (Exception e) {
                return false;
              }
            });
    assertFalse(Files.exists(target));
  }

  @Test
  void writeOfAnExistingFileWithoutOverwriteFailsAndKeepsIt() throws Exception {
    Path target = ufs.resolve("exists.bin");
    Files.write(target, new byte[] {1, 2, 3});
    CompletableFuture<WriteFileResponse> result = new CompletableFuture<>();
    StreamObserver<WriteFileRequest> call = startWrite(result);
    call.onNext(header("file://" + target, 0));
    call.onNext(chunk(new byte[10]));
    call.onCompleted();
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> result.get(30, TimeUnit.SECONDS));
    assertEquals(
        Status.Code.ALREADY_EXISTS, ((StatusRuntimeException) e.getCause()).getStatus().getCode());
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(target));
  }

  @Test
  void writeSmallFileLandsAWholeFileInOneCallAndNeverOverwrites() throws Exception {
    Path target = ufs.resolve("small.bin");
    byte[] data = new byte[20_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i % 241);
    }
    WorkerServiceGrpc.WorkerServiceBlockingStub stub =
        WorkerServiceGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    WriteFileResponse response =
        stub.writeSmallFile(
            WriteSmallFileRequest.newBuilder()
                .setHeader(header("file://" + target, 0).getHeader())
                .setContent(ByteString.copyFrom(data))
                .build());
    assertEquals(data.length, response.getLength());
    assertArrayEquals(data, Files.readAllBytes(target));
    assertEquals(
        data.length + ":" + Files.getLastModifiedTime(target).toMillis(),
        response.getUfsFingerprint());
    assertEquals(1, filesIn(ufs), "a temporary file was left beside the written one");
    assertEquals(
        1L,
        worker
            .meterRegistry()
            .get("strata.worker.rpc.latency")
            .tag("method", "WriteSmallFile")
            .timer()
            .count());

    // Without overwrite an existing file is refused and kept, and nothing is left beside it.
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                WorkerServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(30, TimeUnit.SECONDS)
                    .writeSmallFile(
                        WriteSmallFileRequest.newBuilder()
                            .setHeader(header("file://" + target, 0).getHeader())
                            .setContent(ByteString.copyFrom(new byte[10]))
                            .build()));
    assertEquals(Status.Code.ALREADY_EXISTS, e.getStatus().getCode());
    assertArrayEquals(data, Files.readAllBytes(target));
    assertEquals(1, filesIn(ufs), "a temporary file was left beside the kept one");

    // An empty file is a header alone.
    Path empty = ufs.resolve("empty.bin");
    assertEquals(
        0,
        WorkerServiceGrpc.newBlockingStub(channel)
            .withDeadlineAfter(30, TimeUnit.SECONDS)
            .writeSmallFile(
                WriteSmallFileRequest.newBuilder()
                    .setHeader(header("file://" + empty, 0).getHeader())
                    .build())
            .getLength());
    assertEquals(0, Files.size(empty));
  }

  @Test
  void writeOpensTheStoreWithTheMountOptionsFromTheMaster() throws Exception {
    master.mounts.add(
        MountInfo.newBuilder()
            .setMountId(7)
            .setPath("/data")
            .setUfsUri("file://" + ufs)
            .putOptions("endpoint", "http://example")
            .build());
    CompletableFuture<WriteFileResponse> result = new CompletableFuture<>();
    StreamObserver<WriteFileRequest> call = startWrite(result);
    call.onNext(header("file://" + ufs.resolve("m.bin"), 7));
    call.onCompleted();
    // The local store takes no options, so seeing them refused proves they were passed on.
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> result.get(30, TimeUnit.SECONDS));
    StatusRuntimeException s = (StatusRuntimeException) e.getCause();
    assertEquals(Status.Code.INVALID_ARGUMENT, s.getStatus().getCode());
    assertTrue(s.getStatus().getDescription().contains("endpoint"), s.getMessage());
    assertTrue(s.getStatus().getDescription().contains("mount 7"), s.getMessage());
    // Stores need the real secret values and only the options that are the store's.
    assertTrue(master.mountRequests.get(0).getIncludeSecrets());
    assertTrue(master.mountRequests.get(0).getStoreOptionsOnly());
  }

  @Test
  void concatFilesJoinsFilesInTheUnderStoreAndAnswersWhatWasWritten() throws Exception {
    byte[] a = new byte[200_000];
    byte[] b = new byte[77];
    Arrays.fill(a, (byte) 1);
    Arrays.fill(b, (byte) 2);
    Files.createDirectories(ufs.resolve("parts"));
    Files.write(ufs.resolve("parts/1"), a);
    Files.write(ufs.resolve("parts/2"), b);
    Path target = ufs.resolve("joined.bin");
    ConcatFilesResponse r =
        WorkerServiceGrpc.newBlockingStub(channel)
            .concatFiles(
                ConcatFilesRequest.newBuilder()
                    .addSourceUfsPaths("file://" + ufs.resolve("parts/1"))
                    .addSourceUfsPaths("file://" + ufs.resolve("parts/2"))
                    .setUfsPath("file://" + target)
                    .setMountId(0)
                    .setMode(0600)
                    .build());
    byte[] joined = Files.readAllBytes(target);
    assertEquals(a.length + b.length, joined.length);
    assertArrayEquals(a, Arrays.copyOf(joined, a.length));
    assertEquals(a.length + b.length, r.getLength());
    assertEquals(
        joined.length + ":" + Files.getLastModifiedTime(target).toMillis(), r.getUfsFingerprint());
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(target)));
  }

  @Test
  void concatFilesRefusesAMissingSourceAnExistingTargetAndNoSources() throws Exception {
    Files.write(ufs.resolve("one"), new byte[] {1});
    Files.write(ufs.resolve("kept"), new byte[] {9});
    WorkerServiceGrpc.WorkerServiceBlockingStub stub = WorkerServiceGrpc.newBlockingStub(channel);
    ConcatFilesRequest.Builder base =
        ConcatFilesRequest.newBuilder()
            .addSourceUfsPaths("file://" + ufs.resolve("one"))
            .setUfsPath("file://" + ufs.resolve("kept"));
    StatusRuntimeException missing =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                stub.concatFiles(
                    base.clone()
                        .addSourceUfsPaths("file://" + ufs.resolve("gone"))
                        .setOverwrite(true)
                        .build()));
    assertEquals(Status.Code.NOT_FOUND, missing.getStatus().getCode());
    StatusRuntimeException exists =
        assertThrows(StatusRuntimeException.class, () -> stub.concatFiles(base.build()));
    assertEquals(Status.Code.ALREADY_EXISTS, exists.getStatus().getCode());
    StatusRuntimeException none =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                stub.concatFiles(
                    ConcatFilesRequest.newBuilder()
                        .setUfsPath("file://" + ufs.resolve("x"))
                        .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, none.getStatus().getCode());
    assertArrayEquals(new byte[] {9}, Files.readAllBytes(ufs.resolve("kept")));
    assertEquals(2, filesIn(ufs), "a temporary file was left");
  }

  @Test
  void removeBlocksDropsThemFromTheStore() throws Exception {
    Path blocks = dir.resolve("mem/blocks");
    worker.close();
    Files.write(blocks.resolve("77"), new byte[100]);
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), Map.of()));
    worker.start();
    channel.shutdownNow();
    channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", worker.rpcPort()).usePlaintext().build();
    assertTrue(worker.blockStore().contains(77));
    long removed =
        WorkerServiceGrpc.newBlockingStub(channel)
            .removeBlocks(RemoveBlocksRequest.newBuilder().addBlockIds(77).addBlockIds(78).build())
            .getRemoved();
    assertEquals(1, removed);
    assertFalse(worker.blockStore().contains(77));
    assertFalse(Files.exists(blocks.resolve("77")));
  }

  @Test
  void blocksReadDirectlyByLocalClientsAreKeptRecentlyUsedAndCountedAsHits() throws Exception {
    Path blocks = dir.resolve("mem/blocks");
    worker.close();
    Files.createDirectories(blocks);
    Files.write(blocks.resolve("1"), new byte[3 << 20]);
    Files.write(blocks.resolve("2"), new byte[3 << 20]);
    // A memory tier only, so that room for a new block is made by eviction.
    worker =
        new WorkerServer(
            TestWorkers.config(dir, master.port(), Map.of("strata.worker.tier.ssd.capacity", "0")));
    worker.start();
    channel.shutdownNow();
    channel =
        ManagedChannelBuilder.forAddress("127.0.0.1", worker.rpcPort()).usePlaintext().build();
    double hits = worker.meterRegistry().get("strata.worker.cache.hits").functionCounter().count();
    // Block 2 read, then block 1 (and a block the worker does not hold): 1 is now the most
    // recently used, whatever order the store found them in.
    for (long id : new long[] {2, 1}) {
      WorkerServiceGrpc.newBlockingStub(channel)
          .reportLocalReads(
              ReportLocalReadsRequest.newBuilder()
                  .addBlockIds(id)
                  .addBlockIds(99)
                  .setBytes(4096)
                  .build());
    }
    assertEquals(
        hits + 2,
        worker.meterRegistry().get("strata.worker.cache.hits").functionCounter().count(),
        "only blocks the worker holds count");
    // The 8 MB memory tier holds 6 MB: room for 3 MB more means evicting one block.
    assertTrue(worker.blockStore().createTempBlock(3, 3 << 20).isPresent());
    assertTrue(worker.blockStore().contains(1), "the block read last was evicted");
    assertFalse(worker.blockStore().contains(2));
  }
}
