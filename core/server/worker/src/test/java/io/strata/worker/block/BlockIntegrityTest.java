package io.strata.worker.block;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.BlockChecksums;
import io.strata.common.metrics.MetricNames;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every committed block has checksums beside it; a block whose file changed, was cut short or went
 * is found by the verifier on the chunks a read touches, or by the scrubber with nobody reading,
 * and is dropped and counted; a block cached before checksums existed gets them from the scrubber.
 */
class BlockIntegrityTest {
  @TempDir Path dir;
  SimpleMeterRegistry registry;
  TieredBlockStore store;

  @BeforeEach
  void open() throws Exception {
    registry = new SimpleMeterRegistry();
    store =
        new TieredBlockStore(List.of(new TierSpec("MEM", dir.resolve("mem"), 8L << 20)), registry);
    store.open();
  }

  @AfterEach
  void close() {
    store.close();
  }

  private BlockMeta commit(long id, int length) throws Exception {
    byte[] bytes = new byte[length];
    new Random(id).nextBytes(bytes);
    TempBlock temp = store.createTempBlock(id, length).orElseThrow();
    Files.write(temp.path(), bytes);
    // No checksums given: the store computes them from the file.
    return store.commit(temp);
  }

  private double corruptions() {
    return registry.get(MetricNames.WORKER_BLOCK_CORRUPTIONS).counter().count();
  }

  private static void flip(Path file, long at) throws Exception {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(1);
      ch.read(b, at);
      b.put(0, (byte) (b.get(0) ^ 0x40)).rewind();
      ch.write(b, at);
    }
  }

  @Test
  void aReadFindsTheChunkItTouchesAndTheBlockIsDropped() throws Exception {
    int length = 3 * BlockChecksums.CHUNK + 100;
    BlockMeta block = commit(1, length);
    assertTrue(Files.exists(dir.resolve("mem/checksums/1")), "the checksums are kept");
    BlockVerifier verifier = store.verifier();
    assertNull(verifier.check(block, 0, length));
    flip(block.path(), 2L * BlockChecksums.CHUNK + 7);
    // A chunk the read does not touch is not looked at.
    assertNull(verifier.check(block, 0, BlockChecksums.CHUNK));
    BlockVerifier.Damage damage =
        verifier.check(block, BlockChecksums.CHUNK, 2 * BlockChecksums.CHUNK);
    assertNotNull(damage);
    assertTrue(damage.how().contains("chunk 2"), damage.how());
    store.dropCorrupted(block, damage.how());
    assertFalse(store.contains(1));
    assertFalse(Files.exists(block.path()));
    assertFalse(Files.exists(dir.resolve("mem/checksums/1")));
    assertEquals(1, corruptions());
  }

  @Test
  void aTruncatedOrDeletedFileIsDamage() throws Exception {
    BlockMeta cut = commit(2, 100_000);
    try (FileChannel ch = FileChannel.open(cut.path(), StandardOpenOption.WRITE)) {
      ch.truncate(50_000);
    }
    assertTrue(store.verifier().check(cut, 0, 10).how().contains("50000 bytes"));
    BlockMeta gone = commit(3, 1000);
    Files.delete(gone.path());
    assertTrue(store.verifier().check(gone, 0, 10).how().contains("gone"));
  }

  @Test
  void theScrubberFindsWhatNobodyReadAndGivesOldBlocksChecksums() throws Exception {
    BlockMeta rotten = commit(4, 2 * BlockChecksums.CHUNK);
    BlockMeta old = commit(5, 5000);
    BlockMeta fine = commit(6, 70_000);
    flip(rotten.path(), 10);
    Files.delete(dir.resolve("mem/checksums/5"));
    // The store forgets the checksums it had in memory, as after a restart.
    store.close();
    store =
        new TieredBlockStore(List.of(new TierSpec("MEM", dir.resolve("mem"), 8L << 20)), registry);
    store.open();
    BlockScrubber scrubber = new BlockScrubber(store, 1L << 30, registry);
    java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocateDirect(256 << 10);
    for (long id : List.of(4L, 5L, 6L)) {
      scrubber.scrub(id, buffer);
    }
    assertFalse(store.contains(rotten.blockId()));
    assertEquals(1, corruptions());
    assertTrue(store.contains(old.blockId()));
    assertTrue(Files.exists(dir.resolve("mem/checksums/5")), "an old block gets its checksums");
    assertNull(store.verifier().check(store.get(5), 0, 5000));
    assertTrue(store.contains(fine.blockId()));
    assertEquals(
        2 * BlockChecksums.CHUNK + 5000 + 70_000,
        registry.get(MetricNames.WORKER_SCRUBBED_BYTES).counter().count());
  }
}
