package io.strata.worker.block;

import io.strata.common.BlockFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The state of one tier inside a {@link TieredBlockStore}: space accounting and the
 * least-recently-used order of its blocks. Not thread-safe: every method runs under the store's
 * lock, except the gauges, which read volatile fields.
 */
final class StoreTier {
  private final TierSpec spec;
  private final Path blocksDir;
  private final Path tmpDir;
  // Access-ordered: iteration starts at the least recently used block.
  private final LinkedHashMap<Long, BlockMeta> lru = new LinkedHashMap<>(1024, 0.75f, true);
  private volatile long usedBytes;
  private volatile long reservedBytes;
  private volatile int blockCount;

  StoreTier(TierSpec spec) {
    this.spec = spec;
    this.blocksDir = BlockFiles.committedDir(spec.dir());
    this.tmpDir = BlockFiles.temporaryDir(spec.dir());
  }

  TierSpec spec() {
    return spec;
  }

  Path blocksDir() {
    return blocksDir;
  }

  Path tmpDir() {
    return tmpDir;
  }

  long capacity() {
    return spec.capacityBytes();
  }

  long usedBytes() {
    return usedBytes;
  }

  int blockCount() {
    return blockCount;
  }

  /** Bytes neither used by committed blocks nor reserved by blocks being written. */
  long freeBytes() {
    return spec.capacityBytes() - usedBytes - reservedBytes;
  }

  void reserve(long bytes) {
    reservedBytes += bytes;
  }

  void unreserve(long bytes) {
    reservedBytes -= bytes;
  }

  void add(BlockMeta block) {
    lru.put(block.blockId(), block);
    usedBytes += block.length();
    blockCount++;
  }

  void remove(BlockMeta block) {
    if (lru.remove(block.blockId()) != null) {
      usedBytes -= block.length();
      blockCount--;
    }
  }

  /** Marks a block as just used. */
  void touch(long blockId) {
    lru.get(blockId);
  }

  /**
   * The least recently used unpinned blocks whose removal frees at least {@code bytes}, or
   * null when even evicting every unpinned block would not.
   */
  List<BlockMeta> victimsFor(long bytes) {
    List<BlockMeta> victims = new ArrayList<>();
    long freed = 0;
    for (BlockMeta b : lru.values()) {
      if (freed >= bytes) {
        break;
      }
      if (b.pins == 0 && !b.removePending) {
        victims.add(b);
        freed += b.length();
      }
    }
    return freed >= bytes ? victims : null;
  }

  /** Blocks from least to most recently used, for eviction at start-up. */
  List<BlockMeta> inLruOrder() {
    return new ArrayList<>(lru.values());
  }
}
