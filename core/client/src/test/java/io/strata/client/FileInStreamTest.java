package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockIds;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.ReadBlockRequest;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileInStreamTest {
  private static final int BLOCK = 64 << 10;

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

  private List<ReadBlockRequest> allRequests() {
    return cluster.requests.stream().filter(r -> !r.getShortCircuit()).toList();
  }

  private long requestedBytes() {
    return cluster.workers.stream().mapToLong(TestWorker::requestedBytes).sum();
  }

  @Test
  void positionedReadsSpanBlockBoundaries() throws Exception {
    byte[] content = TestCluster.randomBytes(3 * BLOCK + 1000, 1);
    cluster.addFile("/f", content, BLOCK);
    FileSystem fs = cluster.client();
    try (FileInStream in = fs.openFile("/f")) {
      assertEquals(content.length, in.length());
      long[][] ranges = {
        {0, 10}, {BLOCK - 5, 10}, {BLOCK - 100, 2 * BLOCK + 200}, {3 * BLOCK, 1000}
      };
      long asked = 0;
      for (long[] r : ranges) {
        byte[] buf = new byte[(int) r[1] + 3];
        assertEquals(r[1], in.read(r[0], buf, 3, (int) r[1]));
        assertArrayEquals(
            Arrays.copyOfRange(content, (int) r[0], (int) (r[0] + r[1])),
            Arrays.copyOfRange(buf, 3, buf.length));
        asked += r[1];
      }
      byte[] tail = new byte[100];
      assertEquals(10, in.read(content.length - 10, tail, 0, 100));
      assertArrayEquals(
          Arrays.copyOfRange(content, content.length - 10, content.length),
          Arrays.copyOf(tail, 10));
      asked += 10;
      assertEquals(-1, in.read(content.length, tail, 0, 100));
      StrataException past =
          assertThrows(StrataException.class, () -> in.readFully(content.length - 5, tail, 0, 10));
      assertEquals(ErrorCode.INVALID_ARGUMENT, past.code());

      // Exactly the bytes asked for were fetched, each request inside one block.
      assertEquals(asked, requestedBytes());
      for (ReadBlockRequest r : allRequests()) {
        assertTrue(r.getOffset() + r.getLength() <= r.getSource().getBlockLength());
        assertEquals(BlockIds.index(r.getBlockId()) * (long) BLOCK, r.getSource().getBlockStart());
      }
      assertEquals(asked, fs.metrics().remoteBytes());
    }
  }

  @Test
  void bytesDamagedOnTheWayAreReadAgainAndNeverHandedOn() throws Exception {
    byte[] content = TestCluster.randomBytes(2 * BLOCK, 11);
    cluster.addFile("/wire", content, BLOCK);
    FileSystem fs =
        cluster.client(
            "strata.client.read.ufs.fallback.enabled",
            "false",
            "strata.client.read.ahead.max",
            "0");
    try (FileInStream in = fs.openFile("/wire")) {
      // Once: the same worker is asked again and the right bytes come back.
      for (TestWorker w : cluster.workers) {
        w.flipsOnTheWire.set(1);
      }
      byte[] buf = new byte[10_000];
      assertEquals(buf.length, in.read(BLOCK - 3_000, buf, 0, buf.length));
      assertArrayEquals(Arrays.copyOfRange(content, BLOCK - 3_000, BLOCK + 7_000), buf);
      for (ReadBlockRequest r : allRequests()) {
        assertTrue(r.getWantChecksums(), "the client asks for checksums");
      }
      // Always: the read fails naming what arrived damaged, and nothing wrong is returned.
      for (TestWorker w : cluster.workers) {
        w.flipsOnTheWire.set(Integer.MAX_VALUE);
      }
      byte[] other = new byte[5_000];
      StrataException failed =
          assertThrows(StrataException.class, () -> in.readFully(100, other, 0, other.length));
      assertTrue(failed.getMessage().contains("another CRC32C"), failed.getMessage());
    }
    // With verification off, no checksums are asked for.
    FileSystem unchecked = cluster.client("strata.client.block.verify", "false");
    cluster.requests.clear();
    for (TestWorker w : cluster.workers) {
      w.flipsOnTheWire.set(0);
    }
    try (FileInStream in = unchecked.openFile("/wire")) {
      byte[] all = new byte[content.length];
      in.readFully(0, all, 0, all.length);
      assertArrayEquals(content, all);
    }
    for (ReadBlockRequest r : allRequests()) {
      assertFalse(r.getWantChecksums());
    }
  }

  @Test
  void concurrentPositionedReadsFromEightThreadsReturnRightBytes() throws Exception {
    byte[] content = TestCluster.randomBytes(16 * BLOCK + 123, 2);
    cluster.addFile("/shared", content, BLOCK);
    FileSystem fs = cluster.client();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try (FileInStream in = fs.openFile("/shared")) {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long seed = t;
        results.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  int checked = 0;
                  for (int i = 0; i < 100; i++) {
                    int pos = random.nextInt(content.length);
                    int len = 1 + random.nextInt(3 * BLOCK);
                    byte[] buf = new byte[len];
                    int n = in.read(pos, buf, 0, len);
                    int expected = Math.min(len, content.length - pos);
                    assertEquals(expected, n);
                    assertArrayEquals(
                        Arrays.copyOfRange(content, pos, pos + n), Arrays.copyOf(buf, n));
                    checked++;
                  }
                  return checked;
                }));
      }
      for (Future<Integer> f : results) {
        assertEquals(100, f.get());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void sequentialReadsReadAheadInGrowingChunks() throws Exception {
    byte[] content = TestCluster.randomBytes(32 * BLOCK + 100, 3);
    cluster.addFile("/seq", content, 4 * BLOCK);
    FileSystem fs = cluster.client("strata.client.read.ahead.max", "512KB");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (FileInStream in = fs.openFile("/seq")) {
      byte[] buf = new byte[4096];
      int n;
      int reads = 0;
      while ((n = in.read(buf, 0, buf.length)) > 0 && reads < 10_000) {
        out.write(buf, 0, n);
        reads++;
      }
      assertEquals(content.length / 4096 + 1, reads);
    }
    assertArrayEquals(content, out.toByteArray());
    // Every byte fetched once, in few requests: 4 KiB, then 64, 128, 256, 512, 512... KiB.
    assertEquals(content.length, requestedBytes());
    List<Long> lengths = allRequests().stream().map(ReadBlockRequest::getLength).toList();
    assertEquals(4096L, lengths.get(0));
    assertEquals(64L << 10, lengths.get(1));
    assertEquals(128L << 10, lengths.get(2));
    assertTrue(lengths.size() < 20, "requests: " + lengths);
  }

  @Test
  void randomReadsFetchOnlyWhatWasAsked() throws Exception {
    byte[] content = TestCluster.randomBytes(8 * BLOCK, 4);
    cluster.addFile("/random", content, BLOCK);
    FileSystem fs = cluster.client("strata.client.read.ahead.max", "1MB");
    Random random = new Random(5);
    long asked = 0;
    try (FileInStream in = fs.openFile("/random")) {
      for (int i = 0; i < 50; i++) {
        int pos = random.nextInt(content.length - 1000);
        in.seek(pos);
        byte[] buf = new byte[1000];
        assertEquals(1000, in.read(buf, 0, 1000));
        assertArrayEquals(Arrays.copyOfRange(content, pos, pos + 1000), buf);
        assertEquals(pos + 1000, in.getPos());
        asked += 1000;
        byte[] pbuf = new byte[77];
        in.readFully(pos / 2, pbuf, 0, 77);
        asked += 77;
      }
    }
    assertEquals(asked, requestedBytes());
  }

  @Test
  void openRefusesDirectoriesIncompleteAndMissingFiles() throws Exception {
    FileSystem fs = cluster.client();
    fs.createDirectory("/d", false, false);
    StrataException dirError = assertThrows(StrataException.class, () -> fs.openFile("/d"));
    assertEquals(ErrorCode.INVALID_ARGUMENT, dirError.code());
    assertEquals("Path is a directory: /d", dirError.getMessage());

    cluster.master.put(
        FileInfo.newBuilder()
            .setFileId(99)
            .setPath("/w")
            .setName("w")
            .setBlockSize(BLOCK)
            .setComplete(false)
            .build());
    StrataException writing = assertThrows(StrataException.class, () -> fs.openFile("/w"));
    assertEquals(ErrorCode.FAILED_PRECONDITION, writing.code());
    assertEquals("File is still being written: /w", writing.getMessage());

    StrataException missing = assertThrows(StrataException.class, () -> fs.openFile("/no"));
    assertEquals(ErrorCode.NOT_FOUND, missing.code());
  }

  @Test
  void fileGoneFromUnderStoreIsNotFound() throws Exception {
    FileInfo f = cluster.addFile("/vanished", TestCluster.randomBytes(1000, 6), BLOCK);
    cluster.contents.remove(f.getUfsPath());
    FileSystem fs = cluster.client();
    try (FileInStream in = fs.openFile("/vanished")) {
      StrataException e =
          assertThrows(StrataException.class, () -> in.read(0, new byte[10], 0, 10));
      assertEquals(ErrorCode.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("/vanished"), e.getMessage());
    }
  }

  @Test
  void shortCircuitReadsLocalBlockFiles() throws Exception {
    byte[] content = TestCluster.randomBytes(2 * BLOCK + 10, 7);
    FileInfo f = cluster.addFile("/local", content, BLOCK);
    Path blocks = Files.createDirectories(dir.resolve("blocks"));
    for (int i = 0; i < 3; i++) {
      long id = BlockIds.blockId(f.getFileId(), i);
      Path p = blocks.resolve(Long.toString(id));
      Files.write(
          p, Arrays.copyOfRange(content, i * BLOCK, Math.min(content.length, (i + 1) * BLOCK)));
      for (TestWorker w : cluster.workers) {
        w.localBlocks.put(id, p);
      }
    }
    FileSystem fs = cluster.client("strata.client.short.circuit.enabled", "true");
    try (FileInStream in = fs.openFile("/local")) {
      assertFalse(in.readsLocally(0), "no block file is mapped before a read");
      byte[] all = new byte[content.length];
      in.readFully(0, all, 0, all.length);
      assertArrayEquals(content, all);
      assertTrue(in.readsLocally(0));
      assertTrue(in.readsLocally(2 * BLOCK + 9));
      assertFalse(in.readsLocally(content.length), "past the end");
      in.readFully(BLOCK - 3, all, 0, 6);
      assertArrayEquals(Arrays.copyOfRange(content, BLOCK - 3, BLOCK + 3), Arrays.copyOf(all, 6));
    }
    assertEquals(content.length + 6, fs.metrics().shortCircuitBytes());
    assertEquals(0, fs.metrics().remoteBytes());
    assertEquals(0, requestedBytes());
  }

  @Test
  void shortCircuitFallsBackToTheNetworkWhenTheBlockFileIsGone() throws Exception {
    byte[] content = TestCluster.randomBytes(BLOCK, 8);
    FileInfo f = cluster.addFile("/moved", content, BLOCK);
    for (TestWorker w : cluster.workers) {
      w.localBlocks.put(BlockIds.blockId(f.getFileId(), 0), dir.resolve("evicted"));
    }
    FileSystem fs = cluster.client("strata.client.short.circuit.enabled", "true");
    try (FileInStream in = fs.openFile("/moved")) {
      byte[] all = new byte[content.length];
      in.readFully(0, all, 0, all.length);
      assertArrayEquals(content, all);
      assertFalse(in.readsLocally(0), "a block read over the network is not local");
    }
    assertEquals(0, fs.metrics().shortCircuitBytes());
    assertEquals(content.length, fs.metrics().remoteBytes());
  }

  @Test
  void readsAfterCloseFail() throws Exception {
    cluster.addFile("/c", TestCluster.randomBytes(100, 9), BLOCK);
    FileInStream in = cluster.client().openFile("/c");
    in.close();
    StrataException e = assertThrows(StrataException.class, () -> in.read(new byte[1], 0, 1));
    assertEquals(ErrorCode.FAILED_PRECONDITION, e.code());
  }
}
