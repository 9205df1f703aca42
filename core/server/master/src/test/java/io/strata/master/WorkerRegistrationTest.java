package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.grpc.Status;
import io.strata.common.BlockIds;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockReport;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FreeRequest;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerCommand;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerRegistrationTest {
  private static final long MB = 1 << 20;

  @TempDir Path home;

  private static WorkerAddress address(int dataPort) {
    return WorkerAddress.newBuilder()
        .setHost("127.0.0.1")
        .setRpcPort(dataPort + 1)
        .setDataPort(dataPort)
        .setWebPort(dataPort + 2)
        .build();
  }

  private static BlockReport block(long blockId, long length) {
    return BlockReport.newBuilder().setBlockId(blockId).setLength(length).setTier("MEM").build();
  }

  private static long register(TestMaster m, int dataPort, List<BlockReport> blocks) {
    return m.blocks
        .registerWorker(
            RegisterWorkerRequest.newBuilder()
                .setAddress(address(dataPort))
                .addTiers(TierUsage.newBuilder().setAlias("MEM").setCapacityBytes(100 * MB))
                .addAllBlocks(blocks)
                .setRelease("test")
                .setRpcProtocolVersion(1)
                .build())
        .getWorkerId();
  }

  private static HeartbeatResponse heartbeat(TestMaster m, long workerId) {
    return m.blocks.heartbeat(HeartbeatRequest.newBuilder().setWorkerId(workerId).build());
  }

  private FileInfo fileOfThreeBlocks(TestMaster m, String path) throws Exception {
    m.fs.createFile(
        CreateFileRequest.newBuilder().setPath(path).setBlockSize(MB).setRecursive(true).build());
    return m.fs
        .completeFile(CompleteFileRequest.newBuilder().setPath(path).setLength(3 * MB - 10).build())
        .getFile();
  }

  @Test
  void registeredBlocksBecomeLocationsAndCachedBytes() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo f = fileOfThreeBlocks(m, "/f");
      long b0 = BlockIds.blockId(f.getFileId(), 0);
      long b2 = BlockIds.blockId(f.getFileId(), 2);
      long w1 = register(m, 7001, List.of(block(b0, MB)));
      long w2 = register(m, 7002, List.of());
      assertNotEquals(w1, w2);
      assertEquals(w1, register(m, 7001, List.of(block(b0, MB))), "same address, same id");

      m.blocks.commitBlock(
          CommitBlockRequest.newBuilder().setWorkerId(w2).setBlock(block(b2, MB - 10)).build());
      HeartbeatResponse hb =
          m.blocks.heartbeat(
              HeartbeatRequest.newBuilder()
                  .setWorkerId(w2)
                  .addAddedBlocks(block(b0, MB))
                  .setCacheStats(WorkerCacheStats.newBuilder().setHits(5).setMisses(2))
                  .build());
      assertEquals(WorkerCommand.WORKER_COMMAND_NONE, hb.getCommand());

      List<BlockInfo> blocks =
          m.fs
              .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/f").build())
              .getBlocksList();
      assertEquals(Set.of(w1, w2), workerIds(blocks.get(0)));
      assertEquals(Set.of(), workerIds(blocks.get(1)));
      assertEquals(Set.of(w2), workerIds(blocks.get(2)));
      assertEquals("MEM", blocks.get(2).getLocations(0).getTier());
      assertEquals(7002, blocks.get(2).getLocations(0).getAddress().getDataPort());
      assertEquals(MB + MB - 10, m.stat("/f").getCachedBytes());

      WorkerInfo info =
          m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkersList().stream()
              .filter(w -> w.getWorkerId() == w2)
              .findFirst()
              .orElseThrow();
      assertEquals(WorkerState.WORKER_LIVE, info.getState());
      assertEquals(2, info.getBlockCount());
      assertEquals(5, info.getCacheStats().getHits());
      assertEquals("MEM", info.getTiers(0).getAlias());

      // A worker reports a block it dropped: the location goes.
      m.blocks.heartbeat(
          HeartbeatRequest.newBuilder().setWorkerId(w2).addRemovedBlockIds(b0).build());
      assertEquals(
          Set.of(w1),
          workerIds(
              m.fs
                  .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/f").build())
                  .getBlocks(0)));
    }
  }

  @Test
  void aDrainingWorkerIsNoLongerNamedAsASourceUntilItRegistersAgain() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo f = fileOfThreeBlocks(m, "/f");
      long b0 = BlockIds.blockId(f.getFileId(), 0);
      long w1 = register(m, 7001, List.of(block(b0, MB)));
      long w2 = register(m, 7002, List.of(block(b0, MB)));
      m.blocks.heartbeat(HeartbeatRequest.newBuilder().setWorkerId(w1).setDraining(true).build());

      assertEquals(
          Set.of(w2),
          workerIds(
              m.fs
                  .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/f").build())
                  .getBlocks(0)));
      Map<Long, WorkerState> states = new java.util.HashMap<>();
      m.fs
          .getWorkers(GetWorkersRequest.getDefaultInstance())
          .getWorkersList()
          .forEach(w -> states.put(w.getWorkerId(), w.getState()));
      assertEquals(Map.of(w1, WorkerState.WORKER_DRAINING, w2, WorkerState.WORKER_LIVE), states);
      assertEquals(
          WorkerCommand.WORKER_COMMAND_NONE,
          heartbeat(m, w1).getCommand(),
          "a draining worker still heartbeats");

      // Restarted (a new registration), it serves again with the blocks it kept.
      register(m, 7001, List.of(block(b0, MB)));
      assertEquals(
          Set.of(w1, w2),
          workerIds(
              m.fs
                  .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/f").build())
                  .getBlocks(0)));
      WorkerInfo back =
          m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkersList().stream()
              .filter(w -> w.getWorkerId() == w1)
              .findFirst()
              .orElseThrow();
      assertEquals(WorkerState.WORKER_LIVE, back.getState());
      assertEquals(1, back.getProtocolVersion(), "the protocol it registered with");
    }
  }

  private static Set<Long> workerIds(BlockInfo b) {
    Set<Long> ids = new HashSet<>();
    b.getLocationsList().forEach(l -> ids.add(l.getWorkerId()));
    return ids;
  }

  @Test
  void deleteAndFreeQueueBlockRemovalsForTheWorkersHoldingThem() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo kept = fileOfThreeBlocks(m, "/dir/kept");
      FileInfo gone = fileOfThreeBlocks(m, "/dir/gone");
      long k0 = BlockIds.blockId(kept.getFileId(), 0);
      long k1 = BlockIds.blockId(kept.getFileId(), 1);
      long g0 = BlockIds.blockId(gone.getFileId(), 0);
      long orphan = BlockIds.blockId(999_999, 0);
      long w =
          register(
              m, 7001, List.of(block(k0, MB), block(k1, MB), block(g0, MB), block(orphan, 10)));
      // A block of a file that does not exist is sent back for removal at once.
      assertEquals(List.of(orphan), heartbeat(m, w).getRemoveBlockIdsList());

      m.fs.delete(DeleteRequest.newBuilder().setPath("/dir/gone").build());
      assertEquals(List.of(g0), heartbeat(m, w).getRemoveBlockIdsList());
      assertEquals(List.of(), heartbeat(m, w).getRemoveBlockIdsList(), "handed out once");

      FreeResponse freed =
          m.fs.free(FreeRequest.newBuilder().setPath("/dir").setRecursive(true).build());
      assertEquals(2, freed.getBlocksFreed());
      assertEquals(2 * MB, freed.getBytesFreed());
      assertEquals(Set.of(k0, k1), new HashSet<>(heartbeat(m, w).getRemoveBlockIdsList()));
      assertEquals(0, m.stat("/dir/kept").getCachedBytes());
      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "Path is a directory: /dir",
          () -> m.fs.free(FreeRequest.newBuilder().setPath("/dir").build()));
    }
  }

  @Test
  void silentWorkerIsLostThenReRegistersOnCommand() throws Exception {
    try (TestMaster m = TestMaster.start(home, Map.of("strata.master.worker.timeout", "1s"))) {
      FileInfo f = fileOfThreeBlocks(m, "/f");
      long b0 = BlockIds.blockId(f.getFileId(), 0);
      long w = register(m, 7001, List.of(block(b0, MB)));
      assertEquals(MB, m.stat("/f").getCachedBytes());

      // Bounded wait for the background checker; the test asserts the state, not the timing.
      await("the silent worker to be marked lost")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkers(0).getState()
                      == WorkerState.WORKER_LOST);
      assertEquals(0, m.stat("/f").getCachedBytes(), "a lost worker's locations are dropped");
      assertEquals(WorkerCommand.WORKER_COMMAND_REGISTER, heartbeat(m, w).getCommand());
      assertEquals(WorkerCommand.WORKER_COMMAND_REGISTER, heartbeat(m, 12345).getCommand());

      assertEquals(w, register(m, 7001, List.of(block(b0, MB))));
      assertEquals(
          WorkerState.WORKER_LIVE,
          m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkers(0).getState());
      assertEquals(MB, m.stat("/f").getCachedBytes());
    }
  }

  @Test
  void workerIdIsStableAcrossMasterRestarts() throws Exception {
    long id;
    try (TestMaster m = TestMaster.start(home)) {
      id = register(m, 7001, List.of());
    }
    try (TestMaster m = TestMaster.start(home)) {
      assertEquals(WorkerCommand.WORKER_COMMAND_REGISTER, heartbeat(m, id).getCommand());
      assertEquals(id, register(m, 7001, List.of()));
    }
  }
}
