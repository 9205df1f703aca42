package io.strata.common;

/**
 * Block ids are derived from the file id and the block's index in the file, so the master needs no
 * table to name the blocks of a file, and a block id tells its file. Layout: {@code fileId << 20 |
 * index}: up to 2^20 blocks a file (64 TiB at 64 MiB blocks) and 2^43 file ids.
 */
public final class BlockIds {
  public static final int INDEX_BITS = 20;
  public static final long MAX_BLOCKS_PER_FILE = 1L << INDEX_BITS;

  private BlockIds() {}

  public static long blockId(long fileId, int index) {
    if (index < 0 || index >= MAX_BLOCKS_PER_FILE) {
      throw new IllegalArgumentException("block index out of range: " + index);
    }
    return (fileId << INDEX_BITS) | index;
  }

  public static long fileId(long blockId) {
    return blockId >>> INDEX_BITS;
  }

  public static int index(long blockId) {
    return (int) (blockId & (MAX_BLOCKS_PER_FILE - 1));
  }

  /** Number of blocks of a file of that length and block size (0 for an empty file). */
  public static int blockCount(long length, long blockSize) {
    return (int) ((length + blockSize - 1) / blockSize);
  }
}
