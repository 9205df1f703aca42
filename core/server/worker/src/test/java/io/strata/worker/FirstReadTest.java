package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockIds;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * First reads of blocks the worker does not hold, over its real data channel: a small block is read
 * from the under store once and cached from those bytes; readers of a block being copied share the
 * copy's reads; the start of a large block is answered before the rest is read; a random read far
 * into a large block does not wait for a copy; a file rewritten during a copy gives its readers no
 * mixed bytes and leaves nothing cached. The worker's chunk is 64 KiB.
 */
class FirstReadTest {
  private static final int CHUNK = 64 << 10;
  private static final int LARGE = (1 << 20) + 100;

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private final LocalUnderFileSystem local = new LocalUnderFileSystem();

  @BeforeEach
  void setUp() throws Exception {
    master = new FakeMaster();
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), Map.of()));
    worker.start();
    Files.createDirectories(dir.resolve("ufs"));
  }

  @AfterEach
  void tearDown() throws Exception {
    RewritingUnderFileSystem.onRead = null;
    worker.close();
    master.close();
  }

  private static byte[] content(int seed, int length) {
    byte[] b = new byte[length];
    for (int i = 0; i < length; i++) {
      b[i] = (byte) (seed * 31 + i * 7 + i / 4096);
    }
    return b;
  }

  /** A file in the under store, whole as one block of id {@code blockId}. */
  private record Block(long id, String uri, byte[] bytes, String fingerprint) {
    ReadBlockRequest read(long offset, long length) {
      UfsBlockSource source =
          UfsBlockSource.newBuilder()
              .setUfsPath(uri)
              .setMountId(0)
              .setBlockStart(0)
              .setBlockLength(bytes.length)
              .setUfsFingerprint(fingerprint)
              .build();
      return ReadBlockRequest.newBuilder()
          .setBlockId(id)
          .setOffset(offset)
          .setLength(length)
          .setSource(source)
          .build();
    }

    byte[] range(long offset, long length) {
      return Arrays.copyOfRange(bytes, (int) offset, (int) (offset + length));
    }
  }

  private Block block(String name, int length, long fileId, String scheme) throws IOException {
    Path file = dir.resolve("ufs").resolve(name);
    byte[] bytes = content((int) fileId, length);
    Files.write(file, bytes);
    return new Block(
        BlockIds.blockId(fileId, 0),
        scheme + "://" + file,
        bytes,
        local.getStatus("file://" + file).fingerprint());
  }

  private double ufsReads() {
    return worker.meterRegistry().get("strata.worker.read.ufs.calls").functionCounter().count();
  }

  @Test
  void aSmallFileIsReadFromTheUnderStoreOnceAndCachedFromThoseBytes() throws Exception {
    Block small = block("small.bin", 20 << 10, 1, "file");
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply first = client.read(small.read(0, small.bytes().length));
      assertEquals(ReadStatus.READ_OK, first.response().getStatus());
      assertFalse(first.response().getFromCache());
      assertArrayEquals(small.bytes(), first.data());
      await("block " + small.id() + " to be cached")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(small.id()));
      DataClient.Reply again = client.read(small.read(100, 5000));
      assertTrue(again.response().getFromCache());
      assertArrayEquals(small.range(100, 5000), again.data());
    }
    assertEquals(1.0, ufsReads(), "under-store reads for the first read of a 20 KiB file");
    assertArrayEquals(
        small.bytes(), Files.readAllBytes(worker.blockStore().get(small.id()).path()));
  }

  @Test
  void concurrentFirstReadersOfOneBlockShareOneUnderStoreRead() throws Exception {
    Block small = block("shared.bin", 60 << 10, 2, "file");
    int readers = 6;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(readers);
    try {
      List<Future<byte[]>> replies = new ArrayList<>();
      for (int i = 0; i < readers; i++) {
        long offset = i * 10_000L;
        replies.add(
            pool.submit(
                () -> {
                  try (DataClient client = new DataClient(worker.dataPort())) {
                    start.await();
                    DataClient.Reply r = client.read(small.read(offset, 10_000));
                    assertEquals(ReadStatus.READ_OK, r.response().getStatus());
                    return r.data();
                  }
                }));
      }
      start.countDown();
      for (int i = 0; i < readers; i++) {
        assertArrayEquals(
            small.range(i * 10_000L, 10_000),
            replies.get(i).get(60, TimeUnit.SECONDS),
            "reader " + i);
      }
    } finally {
      pool.shutdownNow();
    }
    await("block " + small.id() + " to be cached")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(small.id()));
    assertEquals(1.0, ufsReads(), "one read of a 60 KiB block for six readers");
  }

  @Test
  void aLargeBlockReadFromItsStartIsReadFromTheUnderStoreOnce() throws Exception {
    Block large = block("large.bin", LARGE, 3, "file");
    int step = 128 << 10;
    try (DataClient client = new DataClient(worker.dataPort())) {
      for (long offset = 0; offset < LARGE; offset += step) {
        long length = Math.min(step, LARGE - offset);
        DataClient.Reply r = client.read(large.read(offset, length));
        assertEquals(ReadStatus.READ_OK, r.response().getStatus(), "at " + offset);
        assertArrayEquals(large.range(offset, length), r.data(), "at " + offset);
      }
    }
    await("block " + large.id() + " to be cached")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(large.id()));
    int chunks = (LARGE + CHUNK - 1) / CHUNK; // rounded up: the last chunk is partial
    assertEquals(
        (double) chunks, ufsReads(), "a read of each chunk, for the reader and the cache together");
  }

  @Test
  void theStartOfALargeBlockIsAnsweredBeforeTheRestIsRead() throws Exception {
    Block large = block("held.bin", LARGE, 4, "rewriting");
    CountDownLatch answered = new CountDownLatch(1);
    boolean[] heldUntilAnswered = new boolean[1];
    // The copy stops before reading its second chunk until the reader has its bytes.
    RewritingUnderFileSystem.hookPosition = CHUNK;
    RewritingUnderFileSystem.onRead =
        () -> {
          try {
            heldUntilAnswered[0] = answered.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply r = client.read(large.read(0, 4096));
      answered.countDown();
      assertEquals(ReadStatus.READ_OK, r.response().getStatus());
      assertArrayEquals(large.range(0, 4096), r.data());
    }
    await("block " + large.id() + " to be cached")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(large.id()));
    assertTrue(heldUntilAnswered[0], "the reader waited for more than its range");
  }

  @Test
  void aRandomReadFarIntoALargeBlockDoesNotWaitForACopy() throws Exception {
    Block large = block("random.bin", LARGE, 5, "file");
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply r = client.read(large.read(900_000, 4096));
      assertEquals(ReadStatus.READ_OK, r.response().getStatus());
      assertArrayEquals(large.range(900_000, 4096), r.data());
    }
    await("block " + large.id() + " to be cached")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(large.id()));
    assertArrayEquals(
        large.bytes(),
        Files.readAllBytes(worker.blockStore().get(large.id()).path()),
        "the block is cached whole in the background");
  }

  @Test
  void aFileRewrittenDuringTheCopyGivesNoMixedBytesAndLeavesNothingCached() throws Exception {
    Block large = block("rewritten.bin", LARGE, 6, "rewriting");
    Path file = dir.resolve("ufs/rewritten.bin");
    RewritingUnderFileSystem.hookPosition = 4L * CHUNK;
    RewritingUnderFileSystem.onRead =
        () -> {
          try {
            Files.write(file, content(9, LARGE + 10));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    try (DataClient client = new DataClient(worker.dataPort())) {
      // The whole block: answered only after the copy has read it all, and then refused.
      DataClient.Reply r = client.read(large.read(0, LARGE));
      assertEquals(ReadStatus.READ_CHANGED, r.response().getStatus());
      assertEquals(0, r.data().length);
    }
    assertNull(RewritingUnderFileSystem.onRead, "the file was not rewritten mid-copy");
    await("the mixed copy to be dropped and unpinned")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(
            () ->
                !worker.blockStore().contains(large.id())
                    && worker.blockStore().pinCount(large.id()) == 0);
    assertFalse(worker.blockStore().contains(large.id()), "a mixed copy was kept");
  }
}
