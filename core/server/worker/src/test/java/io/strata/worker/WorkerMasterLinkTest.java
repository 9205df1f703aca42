package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.Version;
import io.strata.proto.BlockReport;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadStatus;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.UfsBlockSource;
import io.strata.proto.WorkerCommand;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker's registration and heartbeats, against a fake master on 127.0.0.1. */
class WorkerMasterLinkTest {
  private static final long HELD_BLOCK = 12345;

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;

  @AfterEach
  void tearDown() throws Exception {
    if (worker != null) {
      worker.close();
    }
    if (master != null) {
      master.close();
    }
  }

  /** Puts a committed block on disk as a previous run would have left it. */
  private void blockOnDisk(long id, int length) throws Exception {
    Path blocks = dir.resolve("mem/blocks");
    Files.createDirectories(blocks);
    Files.write(blocks.resolve(Long.toString(id)), new byte[length]);
  }

  private void startWorker(int masterPort) throws Exception {
    worker = new WorkerServer(TestWorkers.config(dir, masterPort, Map.of()));
    worker.start();
  }

  /** Makes the worker cache a 1000-byte block by reading it once. */
  private long cacheOneBlock() throws Exception {
    Path file = dir.resolve("ufs.bin");
    Files.write(file, new byte[1000]);
    long id = 9000;
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply reply =
          client.read(
              ReadBlockRequest.newBuilder()
                  .setBlockId(id)
                  .setOffset(0)
                  .setLength(10)
                  .setSource(
                      UfsBlockSource.newBuilder().setUfsPath("file://" + file).setBlockLength(1000))
                  .build());
      assertEquals(ReadStatus.READ_OK, reply.response().getStatus());
    }
    await("the block to be cached")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(id));
    return id;
  }

  private boolean heartbeatAdded(long id) {
    for (HeartbeatRequest h : master.heartbeats) {
      for (BlockReport b : h.getAddedBlocksList()) {
        if (b.getBlockId() == id) {
          return true;
        }
      }
    }
    return false;
  }

  @Test
  void registrationCarriesFullReportAndBoundPorts() throws Exception {
    blockOnDisk(HELD_BLOCK, 321);
    master = new FakeMaster();
    startWorker(master.port());
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    RegisterWorkerRequest r = master.registrations.get(0);
    assertEquals("127.0.0.1", r.getAddress().getHost());
    assertEquals(worker.rpcPort(), r.getAddress().getRpcPort());
    assertEquals(worker.dataPort(), r.getAddress().getDataPort());
    assertEquals(worker.webPort(), r.getAddress().getWebPort());
    assertTrue(worker.dataPort() > 0 && worker.rpcPort() > 0 && worker.webPort() > 0);
    assertEquals(Version.RELEASE, r.getRelease());
    assertEquals(Version.PROTOCOL_VERSION, r.getRpcProtocolVersion());
    assertEquals(1, r.getBlocksCount());
    assertEquals(
        BlockReport.newBuilder().setBlockId(HELD_BLOCK).setLength(321).setTier("MEM").build(),
        r.getBlocks(0));
    assertEquals(2, r.getTiersCount());
    assertEquals("MEM", r.getTiers(0).getAlias());
    assertEquals(321, r.getTiers(0).getUsedBytes());
    assertEquals(8L << 20, r.getTiers(0).getCapacityBytes());
    await("two heartbeats")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> master.heartbeats.size() >= 2);
    assertEquals(100, master.heartbeats.get(0).getWorkerId());
  }

  @Test
  void cachedBlockIsCommittedAndReportedInAHeartbeatWithCacheStats() throws Exception {
    master = new FakeMaster();
    startWorker(master.port());
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    long id = cacheOneBlock();
    await("a heartbeat to carry the block")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> heartbeatAdded(id));
    await("the commit of the block")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () ->
                master.commits.stream()
                    .anyMatch(c -> c.getBlock().getBlockId() == id && c.getWorkerId() == 100));
    HeartbeatRequest last = master.heartbeats.get(master.heartbeats.size() - 1);
    assertEquals(1, last.getCacheStats().getMisses());
    assertEquals(10, last.getCacheStats().getBytesFromUfs());
  }

  @Test
  void blocksAddedWhileHeartbeatsFailAreReportedLater() throws Exception {
    master = new FakeMaster();
    startWorker(master.port());
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    master.failHeartbeats.set(1_000_000);
    long id = cacheOneBlock();
    // Let a few heartbeats fail while the block is pending.
    int refused = master.refusedHeartbeats.get();
    await("three refused heartbeats")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> master.refusedHeartbeats.get() >= refused + 3);
    assertFalse(heartbeatAdded(id));
    master.failHeartbeats.set(0);
    await("a heartbeat to carry the block after the failed ones")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> heartbeatAdded(id));
  }

  @Test
  void registerCommandCausesRegistrationWithAFullReport() throws Exception {
    blockOnDisk(HELD_BLOCK, 10);
    master = new FakeMaster();
    startWorker(master.port());
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    int dataPort = worker.dataPort();
    master.nextResponses.add(
        HeartbeatResponse.newBuilder().setCommand(WorkerCommand.WORKER_COMMAND_REGISTER).build());
    await("a second registration")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> master.registrations.size() >= 2);
    RegisterWorkerRequest again = master.registrations.get(1);
    assertEquals(1, again.getBlocksCount());
    assertEquals(HELD_BLOCK, again.getBlocks(0).getBlockId());
    assertEquals(dataPort, again.getAddress().getDataPort());
    // Heartbeats go on under the new id.
    await("a heartbeat under the new id")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> master.heartbeats.stream().anyMatch(h -> h.getWorkerId() == 101));
    assertEquals(2, worker.masterLink().registrations());
  }

  @Test
  void heartbeatRemovalsAreAppliedAndReported() throws Exception {
    blockOnDisk(HELD_BLOCK, 10);
    master = new FakeMaster();
    startWorker(master.port());
    await("the worker to register")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    master.nextResponses.add(HeartbeatResponse.newBuilder().addRemoveBlockIds(HELD_BLOCK).build());
    await("the block to be removed")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !worker.blockStore().contains(HELD_BLOCK));
    assertFalse(Files.exists(dir.resolve("mem/blocks/" + HELD_BLOCK)));
    await("a heartbeat to report the removal")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () ->
                master.heartbeats.stream()
                    .anyMatch(h -> h.getRemovedBlockIdsList().contains(HELD_BLOCK)));
  }

  @Test
  void workerServesWhileTheMasterIsDownAndRegistersWhenItComesUp() throws Exception {
    blockOnDisk(HELD_BLOCK, 64);
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    startWorker(port);
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply reply =
          client.read(
              ReadBlockRequest.newBuilder()
                  .setBlockId(HELD_BLOCK)
                  .setOffset(0)
                  .setLength(64)
                  .build());
      assertEquals(ReadStatus.READ_OK, reply.response().getStatus());
      assertArrayEquals(new byte[64], reply.data());
    }
    assertEquals(-1, worker.masterLink().workerId());
    master = new FakeMaster(port);
    await("the worker to register once the master came up")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> !master.registrations.isEmpty());
    assertEquals(1, master.registrations.get(0).getBlocksCount());
  }
}
