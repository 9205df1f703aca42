package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockIds;
import io.strata.common.WorkerHashing;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.ReadBlockRequest;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FailoverTest {
  private static final int BLOCK = 256 << 10;

  @TempDir Path dir;
  private TestCluster cluster;

  @BeforeEach
  void setUp() throws Exception {
    cluster = new TestCluster(dir, 2);
  }

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  /** The workers in the order a client tries them for a block (home first). */
  private List<TestWorker> ranking(long blockId) {
    return WorkerHashing.rank(blockId, cluster.workers, w -> w.id);
  }

  @Test
  void readSurvivesWorkerClosingTheConnectionMidRead() throws Exception {
    byte[] content = TestCluster.randomBytes(BLOCK, 11);
    FileInfo f = cluster.addFile("/big", content, BLOCK);
    List<TestWorker> order = ranking(BlockIds.blockId(f.getFileId(), 0));
    order.get(0).closeAfterBytes.set(100_000);
    FileSystem fs = cluster.client();
    byte[] buf = new byte[BLOCK];
    try (FileInStream in = fs.openFile("/big")) {
      in.readFully(0, buf, 0, BLOCK);
    }
    assertArrayEquals(content, buf);
    // The second worker was asked for exactly the part the first did not deliver.
    List<ReadBlockRequest> second = order.get(1).requests;
    assertEquals(1, second.size());
    assertEquals(100_000, second.get(0).getOffset());
    assertEquals(BLOCK - 100_000, second.get(0).getLength());
    assertEquals(1, fs.metrics().retries());
    assertEquals(BLOCK, fs.metrics().remoteBytes());
    assertEquals(0, fs.metrics().ufsBytes());
  }

  @Test
  void readMovesOnWhenAWorkerGoesSilent() throws Exception {
    byte[] content = TestCluster.randomBytes(BLOCK, 18);
    FileInfo f = cluster.addFile("/silent", content, BLOCK);
    List<TestWorker> order = ranking(BlockIds.blockId(f.getFileId(), 0));
    order.get(0).stallAfterBytes.set(5000);
    FileSystem fs = cluster.client("strata.client.data.read.timeout", "300ms");
    byte[] buf = new byte[BLOCK];
    try (FileInStream in = fs.openFile("/silent")) {
      in.readFully(0, buf, 0, BLOCK);
    }
    assertArrayEquals(content, buf);
    assertEquals(5000, order.get(1).requests.get(0).getOffset());
    assertEquals(1, fs.metrics().retries());
  }

  @Test
  void sequentialReadSurvivesWorkerCrash() throws Exception {
    byte[] content = TestCluster.randomBytes(3 * BLOCK, 12);
    FileInfo f = cluster.addFile("/stream", content, BLOCK);
    FileSystem fs = cluster.client();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (FileInStream in = fs.openFile("/stream")) {
      byte[] buf = new byte[10_000];
      int n = in.read(buf, 0, buf.length);
      out.write(buf, 0, n);
      // The home of the second block dies; the stream goes on from the other worker.
      ranking(BlockIds.blockId(f.getFileId(), 1)).get(0).close();
      for (int i = 0; i < 1000 && (n = in.read(buf, 0, buf.length)) > 0; i++) {
        out.write(buf, 0, n);
      }
    }
    assertArrayEquals(content, out.toByteArray());
    assertTrue(fs.metrics().retries() >= 1);
  }

  @Test
  void readFallsBackToTheUnderStoreWhenEveryWorkerFails() throws Exception {
    byte[] content = TestCluster.randomBytes(2 * BLOCK + 7, 13);
    cluster.addFile("/ufs", content, BLOCK);
    for (TestWorker w : cluster.workers) {
      w.replyError = true;
    }
    FileSystem fs = cluster.client();
    byte[] buf = new byte[content.length];
    try (FileInStream in = fs.openFile("/ufs")) {
      in.readFully(0, buf, 0, buf.length);
    }
    assertArrayEquals(content, buf);
    assertEquals(content.length, fs.metrics().ufsBytes());
    assertEquals(2, fs.metrics().retries());
    // The store is opened with the mount's real secrets and only the store's own options.
    assertTrue(cluster.master.mountRequests.get(0).getIncludeSecrets());
    assertTrue(cluster.master.mountRequests.get(0).getStoreOptionsOnly());
  }

  @Test
  void readFromDeadWorkersFallsBackToTheUnderStore() throws Exception {
    byte[] content = TestCluster.randomBytes(BLOCK / 2, 14);
    cluster.addFile("/dead", content, BLOCK);
    for (TestWorker w : cluster.workers) {
      w.close();
    }
    FileSystem fs = cluster.client();
    byte[] buf = new byte[content.length];
    try (FileInStream in = fs.openFile("/dead")) {
      assertEquals(content.length, in.read(0, buf, 0, buf.length));
    }
    assertArrayEquals(content, buf);
    assertEquals(content.length, fs.metrics().ufsBytes());
  }

  @Test
  void readFailsClearlyWhenWorkersFailAndFallbackIsOff() throws Exception {
    cluster.addFile("/nofallback", TestCluster.randomBytes(1000, 15), BLOCK);
    for (TestWorker w : cluster.workers) {
      w.replyError = true;
    }
    FileSystem fs = cluster.client("strata.client.read.ufs.fallback.enabled", "false");
    try (FileInStream in = fs.openFile("/nofallback")) {
      StrataException e =
          assertThrows(StrataException.class, () -> in.read(0, new byte[10], 0, 10));
      assertEquals(ErrorCode.UNAVAILABLE, e.code());
      assertTrue(
          e.getMessage().contains("every worker that could serve it failed"), e.getMessage());
    }
  }

  @Test
  void aWorkerHoldingTheBlockIsAskedBeforeTheHome() throws Exception {
    byte[] content = TestCluster.randomBytes(1000, 16);
    FileInfo f = cluster.addFile("/held", content, BLOCK);
    long blockId = BlockIds.blockId(f.getFileId(), 0);
    TestWorker holder = ranking(blockId).get(1);
    cluster.master.setLocations(
        blockId,
        List.of(
            BlockLocation.newBuilder()
                .setWorkerId(holder.id)
                .setAddress(holder.address())
                .setTier("MEM")
                .build()));
    FileSystem fs = cluster.client();
    byte[] buf = new byte[1000];
    try (FileInStream in = fs.openFile("/held")) {
      in.readFully(0, buf, 0, 1000);
    }
    assertArrayEquals(content, buf);
    assertEquals(1, holder.requests.size());
    assertEquals(0, ranking(blockId).get(0).requests.size());
  }

  @Test
  void noLiveWorkersAndNoFallbackSaysHowToStartOne() throws Exception {
    cluster.addFile("/lonely", TestCluster.randomBytes(10, 17), BLOCK);
    cluster.master.workers = List.of();
    FileSystem fs = cluster.client("strata.client.read.ufs.fallback.enabled", "false");
    try (FileInStream in = fs.openFile("/lonely")) {
      StrataException e =
          assertThrows(StrataException.class, () -> in.read(0, new byte[10], 0, 10));
      assertEquals("No live workers: start one with `strata worker start`", e.getMessage());
    }
  }
}
