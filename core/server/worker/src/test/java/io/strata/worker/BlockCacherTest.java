package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.BlockIds;
import io.strata.proto.UfsBlockSource;
import io.strata.underfs.UnderStores;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.TierSpec;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.data.BlockCacher;
import io.strata.worker.master.MountOptions;
import io.strata.worker.master.WorkerMasterClient;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Background block copies and files that change under them. */
class BlockCacherTest {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCacherTest.class);
  private static final int LENGTH = 1 << 20;
  private static final long BLOCK_ID = BlockIds.blockId(77, 0);

  @TempDir Path dir;

  private TieredBlockStore store;
  private WorkerMasterClient master;
  private MountedStores stores;
  private BlockCacher cacher;
  private Path file;

  @BeforeEach
  void setUp() throws Exception {
    store =
        new TieredBlockStore(
            List.of(new TierSpec("MEM", dir.resolve("mem"), 8L << 20)), new SimpleMeterRegistry());
    store.open();
    // Mount 0 needs no options, so the master is never called.
    master = new WorkerMasterClient("127.0.0.1", 1, Duration.ofSeconds(1));
    stores = new MountedStores(new UnderStores(), new MountOptions(master));
    cacher = new BlockCacher(store, stores, 1, 4, 64 << 10);
    file = dir.resolve("ufs/data.bin");
    Files.createDirectories(file.getParent());
    Files.write(file, content(1));
  }

  @AfterEach
  void tearDown() throws Exception {
    RewritingUnderFileSystem.onRead = null;
    cacher.close();
    stores.close();
    master.close();
    store.close();
  }

  private static byte[] content(int seed) {
    byte[] b = new byte[LENGTH];
    Arrays.fill(b, (byte) seed);
    return b;
  }

  private UfsBlockSource source() throws IOException {
    String uri = "rewriting://" + file;
    return UfsBlockSource.newBuilder()
        .setUfsPath(uri)
        .setMountId(0)
        .setBlockStart(0)
        .setBlockLength(LENGTH)
        .setUfsFingerprint(stores.get(uri, 0).getStatus(uri).fingerprint())
        .build();
  }

  @Test
  void copyWhoseSourceIsRewrittenDuringTheCopyIsDropped() throws Exception {
    UfsBlockSource before = source();
    // Half-way through the copy the file is rewritten in place: same length, new bytes.
    RewritingUnderFileSystem.hookPosition = LENGTH / 2;
    RewritingUnderFileSystem.onRead =
        () -> {
          try {
            Files.write(file, content(2));
            Files.setLastModifiedTime(
                file, FileTime.fromMillis(Files.getLastModifiedTime(file).toMillis() + 5_000));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    assertTrue(cacher.request(BLOCK_ID, before));
    await("the copy to finish")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> cacher.pending() == 0);
    assertNull(RewritingUnderFileSystem.onRead, "the file was rewritten mid-copy");
    assertFalse(store.contains(BLOCK_ID), "a block mixing two versions must not be cached");

    // The old fingerprint no longer matches before the copy starts either.
    cacher.request(BLOCK_ID, before);
    await("the copy to finish")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> cacher.pending() == 0);
    assertFalse(store.contains(BLOCK_ID));

    // A copy of the file as it is now is cached whole.
    assertTrue(cacher.request(BLOCK_ID, source()));
    await("the copy to finish")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> cacher.pending() == 0);
    assertTrue(store.contains(BLOCK_ID));
    assertEquals(LENGTH, store.get(BLOCK_ID).length());
    assertArrayEquals(content(2), Files.readAllBytes(store.get(BLOCK_ID).path()));
  }

  private static long entries(Path folder) throws IOException {
    try (Stream<Path> list = Files.list(folder)) {
      return list.count();
    }
  }

  @Test
  void copyFailingHalfWayLeavesNothingUnderBlocks() throws Exception {
    RewritingUnderFileSystem.hookPosition = LENGTH / 2;
    RewritingUnderFileSystem.onRead =
        () -> {
          throw new UncheckedIOException(new IOException("under store went away"));
        };
    assertTrue(cacher.request(BLOCK_ID, source()));
    await("the copy to finish")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> cacher.pending() == 0);
    assertNull(RewritingUnderFileSystem.onRead, "the copy failed half-way");
    assertFalse(store.contains(BLOCK_ID));
    assertEquals(0, entries(dir.resolve("mem/blocks")), "no block file is served");
    assertEquals(0, entries(dir.resolve("mem/tmp")), "the partial file is deleted");
  }

  @Test
  void blockOfUnalignedLengthIsCachedWholeThroughTheBlockWriter() throws Exception {
    int length = (1 << 20) + 4097;
    byte[] data = new byte[length];
    new Random(7).nextBytes(data);
    Files.write(file, data);
    String uri = "rewriting://" + file;
    UfsBlockSource whole =
        UfsBlockSource.newBuilder()
            .setUfsPath(uri)
            .setMountId(0)
            .setBlockStart(0)
            .setBlockLength(length)
            .setUfsFingerprint(stores.get(uri, 0).getStatus(uri).fingerprint())
            .build();
    BlockFileOpener opener = new BlockFileOpener(true);
    try (BlockCacher direct = new BlockCacher(store, stores, 1, 4, 256 << 10, opener)) {
      assertTrue(direct.request(BLOCK_ID, whole));
      await("the copy to finish")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> direct.pending() == 0);
    }
    assertTrue(store.contains(BLOCK_ID));
    assertEquals(length, Files.size(store.get(BLOCK_ID).path()));
    assertArrayEquals(data, Files.readAllBytes(store.get(BLOCK_ID).path()));
    LOG.info(
        "write path of the cached block: {}",
        opener.refusesDirect(dir.resolve("mem")) ? "page cache (fallback)" : "O_DIRECT");
  }
}
