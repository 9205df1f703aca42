package io.strata.worker.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TieredBlockStoreTest {
  @TempDir Path dir;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<String> events = new ArrayList<>();

  private TieredBlockStore open(long memCapacity, long ssdCapacity) throws StrataException {
    TieredBlockStore store =
        new TieredBlockStore(
            List.of(
                new TierSpec("MEM", dir.resolve("mem"), memCapacity),
                new TierSpec("SSD", dir.resolve("ssd"), ssdCapacity)),
            registry);
    store.open();
    store.setListener(
        new BlockStoreListener() {
          @Override
          public void blockCommitted(BlockMeta block, boolean callerTellsMaster) {
            events.add("+" + block.blockId());
          }

          @Override
          public void blockRemoved(long blockId) {
            events.add("-" + blockId);
          }
        });
    return store;
  }

  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (seed * 31 + i);
    }
    return b;
  }

  private static BlockMeta put(TieredBlockStore store, long id, byte[] data) throws IOException {
    Optional<TempBlock> temp = store.createTempBlock(id, data.length);
    assertTrue(temp.isPresent(), "no room for block " + id);
    Files.write(temp.get().path(), data);
    return store.commit(temp.get());
  }

  /**
   * A tier whose capacity says more than its file system holds (a real 2 MiB tmpfs under a 16 MB
   * tier): a block that the disk cannot take evicts the least recently used blocks instead of
   * failing half-way; with nothing to evict, it is refused before a byte is written, and the store
   * names the full file system.
   */
  @Test
  void aTierWhoseDiskIsFullerThanItsCapacitySaysEvictsToMakeRoom() throws Exception {
    Path ssd = Files.createDirectories(dir.resolve("small-disk"));
    io.strata.client.testing.Tmpfs.mount(ssd, "2m");
    TieredBlockStore store =
        new TieredBlockStore(List.of(new TierSpec("SSD", ssd, 16 << 20)), registry);
    try {
      store.open();
      int size = 600 << 10;
      for (long id = 1; id <= 3; id++) {
        put(store, id, bytes(size, (int) id));
      }
      store.get(2);
      store.get(3);
      BlockMeta fourth = put(store, 4, bytes(size, 4));
      assertArrayEquals(bytes(size, 4), Files.readAllBytes(fourth.path()));
      assertNull(store.get(1), "the least recently used block made room");
      assertTrue(store.evictedBlocks() >= 1);
      // Held blocks cannot be evicted: a block the disk cannot take is refused up front.
      for (long id = 2; id <= 4; id++) {
        if (store.get(id) != null) {
          store.hold(id);
        }
      }
      assertTrue(store.createTempBlock(5, 1 << 20).isEmpty());
      StrataException full = store.fileSystemFull("SSD", 5, 1 << 20);
      assertNotNull(full, "the store says the file system is full");
      assertTrue(
          full.getMessage().contains(ssd.toString())
              && full.getMessage().contains("strata.worker.tier.ssd.capacity"),
          full.getMessage());
      assertNull(store.fileSystemFull("SSD", 6, 1024), "a small block still fits");
    } finally {
      // The store holds its tier folder's lock until closed, which keeps the tmpfs busy.
      store.close();
      io.strata.client.testing.Tmpfs.unmount(ssd);
    }
  }

  @Test
  void newBlocksGoToTheFastestTierWithRoom() throws IOException {
    TieredBlockStore store = open(100, 1000);
    assertEquals("MEM", put(store, 1, bytes(60, 1)).tierAlias());
    assertEquals("SSD", put(store, 2, bytes(60, 2)).tierAlias());
    assertEquals("MEM", put(store, 3, bytes(40, 3)).tierAlias());
    assertEquals(100, store.usedBytes("MEM"));
    assertEquals(60, store.usedBytes("SSD"));
    assertEquals(List.of("+1", "+2", "+3"), events);
  }

  @Test
  void evictsLeastRecentlyUsedBlocksOfTheFastestTierThatCanHoldTheBlock() throws IOException {
    TieredBlockStore store = open(100, 50);
    put(store, 1, bytes(30, 1));
    put(store, 2, bytes(30, 2));
    put(store, 3, bytes(30, 3));
    put(store, 4, bytes(40, 4)); // MEM is full (90 of 100): goes to SSD
    assertEquals("SSD", store.get(4).tierAlias());
    // Block 1 was read since, so block 2 is now the least recently used in MEM.
    store.unpin(store.pin(1));
    put(store, 5, bytes(20, 5)); // no tier has room: evict from MEM, the fastest that fits
    assertNull(store.get(2));
    assertFalse(Files.exists(dir.resolve("mem/blocks/2")));
    assertNotNull(store.get(1));
    assertNotNull(store.get(3));
    assertEquals("MEM", store.get(5).tierAlias());
    assertEquals(80, store.usedBytes("MEM"));
    assertEquals(1, store.evictedBlocks());
    assertEquals(1.0, registry.get("strata.worker.blocks.evicted").counter().count());
    assertTrue(events.contains("-2"));

    // 60 bytes do not fit in SSD (50) at all: evict from MEM, oldest first (3, then 1).
    put(store, 6, bytes(60, 6));
    assertNull(store.get(3));
    assertNull(store.get(1));
    assertEquals("MEM", store.get(6).tierAlias());
    assertEquals(80, store.usedBytes("MEM"));
  }

  @Test
  void pinnedBlockIsNeverEvicted() throws IOException {
    TieredBlockStore store = open(100, 10);
    put(store, 1, bytes(50, 1));
    put(store, 2, bytes(50, 2));
    BlockMeta reading = store.pin(1); // least recently used, but being read
    store.unpin(store.pin(2));
    store.unpin(store.pin(2));
    put(store, 3, bytes(50, 3));
    assertNotNull(store.get(1), "the pinned block was evicted");
    assertNull(store.get(2));
    // Every other block is pinned now: no room can be made, so the block is not cached.
    BlockMeta reading3 = store.pin(3);
    assertTrue(store.createTempBlock(4, 50).isEmpty());
    assertArrayEquals(bytes(50, 1), Files.readAllBytes(reading.path()));
    store.unpin(reading);
    store.unpin(reading3);
    put(store, 4, bytes(50, 4));
    assertNull(store.get(1));
  }

  @Test
  void removalOfPinnedBlockWaitsForItsLastReader() throws IOException {
    TieredBlockStore store = open(100, 100);
    BlockMeta block = put(store, 7, bytes(10, 7));
    BlockMeta r1 = store.pin(7);
    BlockMeta r2 = store.pin(7);
    assertEquals(1, store.remove(List.of(7L, 8L)));
    assertNull(store.pin(7), "a block marked for removal takes no new readers");
    assertTrue(Files.exists(block.path()));
    store.unpin(r1);
    assertTrue(Files.exists(block.path()));
    assertFalse(events.contains("-7"));
    store.unpin(r2);
    assertFalse(Files.exists(block.path()));
    assertEquals(0, store.usedBytes("MEM"));
    assertTrue(events.contains("-7"));
  }

  @Test
  void restartRemovesTempFilesAndRebuildsTheBlockList() throws IOException {
    TieredBlockStore store = open(1000, 1000);
    put(store, 11, bytes(100, 11));
    put(store, 12, bytes(200, 12));
    TempBlock halfWritten = store.createTempBlock(13, 300).orElseThrow();
    Files.write(halfWritten.path(), bytes(120, 13)); // the worker "crashes" here
    Files.write(dir.resolve("mem/blocks/not-a-block"), bytes(5, 0));
    Files.write(dir.resolve("mem/blocks/0012"), bytes(5, 0)); // not the canonical spelling
    store.close(); // the process is gone: its folder locks with it

    TieredBlockStore reopened =
        new TieredBlockStore(
            List.of(
                new TierSpec("MEM", dir.resolve("mem"), 1000),
                new TierSpec("SSD", dir.resolve("ssd"), 1000)),
            new SimpleMeterRegistry());
    OpenResult result = reopened.open();
    assertEquals(new OpenResult(2, 300, 1, 2, 0), result);
    assertNull(reopened.pin(13), "a half-written block was served after a restart");
    assertFalse(Files.exists(halfWritten.path()));
    assertFalse(Files.exists(dir.resolve("mem/blocks/not-a-block")));
    assertFalse(Files.exists(dir.resolve("mem/blocks/13")));
    BlockMeta b12 = reopened.pin(12);
    assertEquals(200, b12.length());
    assertArrayEquals(bytes(200, 12), Files.readAllBytes(b12.path()));
    reopened.unpin(b12);
    assertEquals(300, reopened.usedBytes("MEM"));
    assertEquals(2, reopened.blockReport().size());
    // Block 13 can be written again after the restart.
    put(reopened, 13, bytes(300, 13));
    assertEquals(600, reopened.usedBytes("MEM"));
  }

  @Test
  void restartWithSmallerCapacityEvictsOldestBlocks() throws IOException {
    TieredBlockStore store = open(1000, 1000);
    put(store, 1, bytes(100, 1));
    put(store, 2, bytes(100, 2));
    put(store, 3, bytes(100, 3));
    Files.setLastModifiedTime(
        dir.resolve("mem/blocks/2"), java.nio.file.attribute.FileTime.fromMillis(1000));
    store.close();
    TieredBlockStore reopened =
        new TieredBlockStore(
            List.of(new TierSpec("MEM", dir.resolve("mem"), 250)), new SimpleMeterRegistry());
    assertEquals(1, reopened.open().blocksEvicted());
    assertNull(reopened.get(2));
    assertEquals(200, reopened.usedBytes("MEM"));
  }

  @Test
  void aSecondStoreOnTheSameTierFolderIsRefusedNamingTheHolder() throws IOException {
    TieredBlockStore first = open(1000, 1000);
    TieredBlockStore second =
        new TieredBlockStore(
            List.of(new TierSpec("MEM", dir.resolve("mem"), 1000, "strata.worker.tier.mem.dir")),
            new SimpleMeterRegistry());
    StrataException e = assertThrows(StrataException.class, second::open);
    assertTrue(
        e.getMessage().contains("in use by another process")
            && e.getMessage().contains("strata.worker.tier.mem.dir"),
        e.getMessage());
    first.close();
    assertEquals(0, second.open().blocks());
    second.close();
  }

  @Test
  void commitOfWrongLengthLeavesNothingInBlocks() throws IOException {
    TieredBlockStore store = open(1000, 1000);
    TempBlock temp = store.createTempBlock(5, 100).orElseThrow();
    Files.write(temp.path(), bytes(99, 5));
    StrataException e = assertThrows(StrataException.class, () -> store.commit(temp));
    assertTrue(e.getMessage().contains("Block 5"), e.getMessage());
    assertFalse(Files.exists(temp.path()));
    assertFalse(Files.exists(dir.resolve("mem/blocks/5")));
    assertNull(store.get(5));
    // The reservation was released: the whole tier is free again.
    put(store, 6, bytes(1000, 6));
    assertEquals("MEM", store.get(6).tierAlias());
  }

  @Test
  void spaceAccountingFollowsWritesAbortsAndRemovals() throws IOException {
    TieredBlockStore store = open(100, 100);
    TempBlock a = store.createTempBlock(1, 70).orElseThrow();
    // Reserved space counts: the next block goes to SSD although nothing is committed yet.
    TempBlock b = store.createTempBlock(2, 70).orElseThrow();
    assertEquals("MEM", a.tierAlias());
    assertEquals("SSD", b.tierAlias());
    assertTrue(store.createTempBlock(1, 70).isEmpty(), "a block id was written twice at once");
    store.abort(a);
    store.abort(a);
    Files.write(b.path(), bytes(70, 2));
    store.commit(b);
    assertEquals(0, store.usedBytes("MEM"));
    assertEquals(70, store.usedBytes("SSD"));
    assertTrue(store.createTempBlock(2, 70).isEmpty(), "a cached block was written again");
    put(store, 3, bytes(100, 3));
    assertEquals(100, store.usedBytes("MEM"));
    assertEquals(2, store.remove(List.of(2L, 3L)));
    assertEquals(0, store.usedBytes("MEM"));
    assertEquals(0, store.usedBytes("SSD"));
    assertEquals(0, store.blockCount());
    assertEquals(0.0, registry.get("strata.worker.tier.used").tag("tier", "SSD").gauge().value());
    assertEquals(
        100.0, registry.get("strata.worker.tier.capacity").tag("tier", "MEM").gauge().value());
    assertEquals(2.0, registry.get("strata.worker.blocks.cached").counter().count());
  }

  @Test
  void blockLargerThanEveryTierIsNotCached() throws IOException {
    TieredBlockStore store = open(100, 200);
    put(store, 1, bytes(50, 1));
    assertTrue(store.createTempBlock(2, 201).isEmpty());
    assertNotNull(store.get(1), "a block was evicted for one that could never fit");
  }

  @Test
  void tierFolderThatCannotBeCreatedFailsNamingKeyAndFolder() throws IOException {
    Path file = dir.resolve("a-file");
    Files.write(file, new byte[1]);
    TieredBlockStore store =
        new TieredBlockStore(
            List.of(new TierSpec("SSD", file.resolve("ssd"), 100, "strata.worker.tier.ssd.dir")),
            registry);
    StrataException e = assertThrows(StrataException.class, store::open);
    assertTrue(e.getMessage().contains("strata.worker.tier.ssd.dir"), e.getMessage());
    assertTrue(e.getMessage().contains(file.resolve("ssd").toString()), e.getMessage());
  }

  @Test
  void configWithEveryTierOffIsRejectedNamingTheKeys() {
    StrataConfig conf =
        StrataConfig.load(
            Map.of(
                "strata.worker.tier.mem.capacity",
                "0",
                "strata.worker.tier.ssd.capacity",
                "0",
                "strata.worker.tier.hdd.capacity",
                "0"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> TierSpec.fromConfig(conf));
    assertTrue(e.getMessage().contains("strata.worker.tier.mem.capacity"), e.getMessage());
    assertTrue(e.getMessage().contains("strata.worker.tier.hdd.capacity"), e.getMessage());
  }

  private TieredBlockStore openSsdOnly(long capacity, SimpleMeterRegistry meters)
      throws StrataException {
    TieredBlockStore store =
        new TieredBlockStore(List.of(new TierSpec("SSD", dir.resolve("ssd"), capacity)), meters);
    store.open();
    return store;
  }

  private static BlockMeta putHeld(TieredBlockStore store, long id, byte[] data)
      throws IOException {
    Optional<TempBlock> temp = store.createHeldTempBlock(id, data.length);
    assertTrue(temp.isPresent(), "no room for held block " + id);
    Files.write(temp.get().path(), data);
    return store.commit(temp.get());
  }

  private Path marker(String tier, long id) {
    return dir.resolve(tier).resolve("held").resolve(Long.toString(id));
  }

  private double heldGauge(SimpleMeterRegistry meters, String tier) {
    return meters.get(MetricNames.WORKER_BLOCKS_HELD_BYTES).tag("tier", tier).gauge().value();
  }

  @Test
  void heldBlocksGoToTheLastTierAndAreNotEvictedWhenANewBlockNeedsRoom() throws IOException {
    TieredBlockStore store = open(50, 100);
    assertEquals("SSD", putHeld(store, 1, bytes(40, 1)).tierAlias());
    assertTrue(store.isHeld(1));
    assertTrue(Files.exists(marker("ssd", 1)));
    put(store, 2, bytes(40, 2)); // MEM
    put(store, 3, bytes(60, 3)); // MEM is short of room: SSD, which is now full
    assertEquals("SSD", store.get(3).tierAlias());
    // Block 1 is the least recently used in SSD, but held: block 3 makes the room.
    TempBlock temp = store.createHeldTempBlock(4, 50).orElseThrow();
    assertNotNull(store.get(1), "a held block was evicted");
    assertNull(store.get(3));
    // Fewer bytes than were reserved: the rest of the reservation is free again.
    Files.write(temp.path(), bytes(30, 4));
    assertEquals(30, store.commit(temp, 30).length());
    assertEquals(70.0, heldGauge(registry, "SSD"));
    assertEquals(0.0, heldGauge(registry, "MEM"));
    put(store, 5, bytes(30, 5));
    assertEquals("SSD", store.get(5).tierAlias());
    // Only held blocks are left in SSD: no room can be made for more.
    assertTrue(store.createHeldTempBlock(6, 40).isEmpty());
    assertNotNull(store.get(5), "a block was evicted without making enough room");
    assertTrue(store.createHeldTempBlock(6, 30).isPresent());
    assertNull(store.get(5));
    assertTrue(store.isHeld(1) && store.isHeld(4));
  }

  @Test
  void heldBlockIdThatIsAlreadyStoredIsRefused() throws IOException {
    TieredBlockStore store = open(100, 100);
    putHeld(store, 1, bytes(10, 1));
    StrataException e = assertThrows(StrataException.class, () -> store.createHeldTempBlock(1, 10));
    assertTrue(e.getMessage().contains("Block 1 is already stored"), e.getMessage());
  }

  @Test
  void onlyHeldBlocksLeftMeansNoRoomForAnyNewBlock() throws IOException {
    TieredBlockStore store = openSsdOnly(100, registry);
    putHeld(store, 1, bytes(60, 1));
    put(store, 2, bytes(40, 2));
    assertTrue(store.createTempBlock(3, 50).isEmpty());
    assertNotNull(store.get(1));
    assertNotNull(store.get(2), "a block was evicted without making enough room");
  }

  @Test
  void heldMarksSurviveARestartAndMarkersOfGoneBlocksAreDeleted() throws IOException {
    TieredBlockStore store = open(100, 100);
    putHeld(store, 1, bytes(40, 1));
    putHeld(store, 2, bytes(40, 2));
    put(store, 3, bytes(90, 3)); // MEM
    Files.write(marker("ssd", 99), new byte[0]); // a marker whose block never got renamed in
    store.close();

    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    TieredBlockStore reopened =
        new TieredBlockStore(
            List.of(
                new TierSpec("MEM", dir.resolve("mem"), 100),
                new TierSpec("SSD", dir.resolve("ssd"), 100)),
            meters);
    reopened.open();
    assertTrue(reopened.isHeld(1) && reopened.isHeld(2));
    assertFalse(reopened.isHeld(3));
    assertFalse(Files.exists(marker("ssd", 99)));
    assertEquals(80.0, heldGauge(meters, "SSD"));
    // Room in SSD can only come from the unheld block moved there.
    assertTrue(reopened.createHeldTempBlock(4, 30).isEmpty());
    assertArrayEquals(bytes(40, 2), Files.readAllBytes(reopened.get(2).path()));
    reopened.close();
  }

  @Test
  void restartWithACapacityBelowTheHeldBlocksKeepsThemAndEvictsTheRest() throws IOException {
    TieredBlockStore store = openSsdOnly(1000, registry);
    putHeld(store, 1, bytes(100, 1));
    put(store, 2, bytes(100, 2));
    putHeld(store, 3, bytes(100, 3));
    Files.setLastModifiedTime(
        dir.resolve("ssd/blocks/1"), java.nio.file.attribute.FileTime.fromMillis(1000));
    store.close();
    TieredBlockStore reopened = openSsdOnly(150, new SimpleMeterRegistry());
    assertNotNull(reopened.get(1), "the oldest block was evicted although held");
    assertNotNull(reopened.get(3));
    assertNull(reopened.get(2));
    assertEquals(200, reopened.usedBytes("SSD"));
    reopened.close();
  }

  @Test
  void releaseMakesHeldBlocksEvictableAndDeletesTheirMarkers() throws IOException {
    TieredBlockStore store = openSsdOnly(100, registry);
    putHeld(store, 1, bytes(60, 1));
    assertTrue(store.createTempBlock(2, 60).isEmpty());
    assertEquals(1, store.release(List.of(1L, 42L)));
    assertEquals(0, store.release(List.of(1L)), "a block was released twice");
    assertFalse(store.isHeld(1));
    assertFalse(Files.exists(marker("ssd", 1)));
    assertEquals(0.0, heldGauge(registry, "SSD"));
    put(store, 2, bytes(60, 2));
    assertNull(store.get(1));
    // A cached block can be held afterwards, and is kept then.
    assertTrue(store.hold(2));
    assertTrue(store.hold(2));
    assertFalse(store.hold(77), "a block that is not cached was held");
    assertTrue(Files.exists(marker("ssd", 2)));
    assertTrue(store.createTempBlock(3, 60).isEmpty());
    assertNotNull(store.get(2));
  }

  @Test
  void removeDeletesAHeldBlockAndItsMarker() throws IOException {
    TieredBlockStore store = openSsdOnly(100, registry);
    BlockMeta one = putHeld(store, 1, bytes(30, 1));
    BlockMeta two = putHeld(store, 2, bytes(30, 2));
    assertEquals(1, store.remove(List.of(1L)));
    assertFalse(Files.exists(one.path()));
    assertFalse(Files.exists(marker("ssd", 1)));
    // A held block being read goes, marker and all, at its last unpin.
    BlockMeta reading = store.pin(2);
    assertEquals(1, store.remove(List.of(2L)));
    assertTrue(Files.exists(marker("ssd", 2)));
    store.unpin(reading);
    assertFalse(Files.exists(two.path()));
    assertFalse(Files.exists(marker("ssd", 2)));
    assertEquals(0.0, heldGauge(registry, "SSD"));
    assertEquals(0, store.usedBytes("SSD"));
  }
}
