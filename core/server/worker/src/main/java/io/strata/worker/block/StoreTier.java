package io.strata.worker.block;

import io.strata.common.BlockFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The state of one tier inside a {@link TieredBlockStore}: space accounting, the
 * least-recently-used order of its blocks and the bytes of its held blocks. Not thread-safe: every
 * method runs under the store's lock, except the gauges, which read volatile fields.
 */
final class StoreTier {
  /** The folder of the markers of held blocks: an empty file named by the block id. */
  private static final String HELD = "held";

  private final TierSpec spec;
  private final Path blocksDir;
  private final Path tmpDir;
  private final Path heldDir;
  private final Path checksumsDir;
  // Access-ordered: iteration starts at the least recently used block.
  private final LinkedHashMap<Long, BlockMeta> lru = new LinkedHashMap<>(1024, 0.75f, true);
  // The four counters are written only under the store's lock, so no update is lost; they are
  // volatile so that the gauges, which read without the lock, see the latest values.
  private volatile long usedBytes;
  private volatile long reservedBytes;
  private volatile int blockCount;
  private volatile long heldBytes;

  /** When the store last logged that this tier's disk, not its capacity, limits it (nanoTime). */
  long diskLimitLoggedNanos;

  // Looked up once (it reads the mount table); each usableSpace() is then one statvfs call.
  private volatile java.nio.file.FileStore fileStore;

  StoreTier(TierSpec spec) {
    this.spec = spec;
    this.blocksDir = BlockFiles.committedDir(spec.dir());
    this.tmpDir = BlockFiles.temporaryDir(spec.dir());
    this.heldDir = spec.dir().resolve(HELD);
    this.checksumsDir = BlockFiles.checksumsDir(spec.dir());
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

  Path heldDir() {
    return heldDir;
  }

  Path checksumsDir() {
    return checksumsDir;
  }

  /** The checksums of a block of this tier ({@link io.strata.common.BlockChecksums}). */
  Path checksums(long blockId) {
    return checksumsDir.resolve(Long.toString(blockId));
  }

  /** The marker that says a block of this tier is held; it survives a restart. */
  Path heldMarker(long blockId) {
    return heldDir.resolve(Long.toString(blockId));
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

  /** Bytes of the tier's committed blocks that are held (never evicted). */
  long heldBytes() {
    return heldBytes;
  }

  /** Bytes neither used by committed blocks nor reserved by blocks being written. */
  long freeBytes() {
    return spec.capacityBytes() - usedBytes - reservedBytes;
  }

  /**
   * The bytes this tier may take for a new block: what its capacity leaves, and no more than its
   * file system can still hold ({@code usable}, from {@link #usableSpace}) less what blocks being
   * written have reserved, which their files may not hold yet. So a tier whose capacity says more
   * than its disk holds (set too large, or a disk shared with other files) evicts to make room
   * rather than fail a write half-way.
   */
  long roomFor(long usable) {
    return Math.min(freeBytes(), usable - reservedBytes);
  }

  /**
   * The bytes the tier folder's file system can still take (one statvfs call); Long.MAX_VALUE when
   * it cannot be read, so that the capacity alone decides. Called outside the store's lock.
   */
  long usableSpace() {
    java.nio.file.FileStore store = fileStore;
    try {
      if (store == null) {
        store = java.nio.file.Files.getFileStore(spec.dir());
        fileStore = store;
      }
      return store.getUsableSpace();
    } catch (java.io.IOException | RuntimeException e) {
      return Long.MAX_VALUE;
    }
  }

  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  void reserve(long bytes) {
    reservedBytes += bytes;
  }

  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  void unreserve(long bytes) {
    reservedBytes -= bytes;
  }

  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  void add(BlockMeta block) {
    lru.put(block.blockId(), block);
    usedBytes += block.length();
    blockCount++;
  }

  /** Stops counting a block; a held block keeps its mark, so that its marker gets deleted. */
  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  void remove(BlockMeta block) {
    if (lru.remove(block.blockId()) != null) {
      usedBytes -= block.length();
      blockCount--;
      if (block.held) {
        heldBytes -= block.length();
      }
    }
  }

  /** Marks a block of this tier held; does nothing when it already is. */
  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  void hold(BlockMeta block) {
    if (!block.held) {
      block.held = true;
      heldBytes += block.length();
    }
  }

  /** Drops the held mark of a block of this tier; returns whether it was held. */
  @SuppressWarnings("NonAtomicVolatileUpdate") // runs under the store's lock
  boolean release(BlockMeta block) {
    if (!block.held) {
      return false;
    }
    block.held = false;
    heldBytes -= block.length();
    return true;
  }

  /** Marks a block as just used. */
  void touch(long blockId) {
    lru.get(blockId);
  }

  /**
   * The least recently used blocks, neither pinned nor held, whose removal frees at least {@code
   * bytes}, or null when even evicting every such block would not.
   */
  List<BlockMeta> victimsFor(long bytes) {
    List<BlockMeta> victims = new ArrayList<>();
    long freed = 0;
    for (BlockMeta b : lru.values()) {
      if (freed >= bytes) {
        break;
      }
      if (b.pins == 0 && !b.removePending && !b.held) {
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
