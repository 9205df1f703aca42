package io.strata.worker.block;

import io.strata.common.BlockChecksums;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A block committed to one tier of a {@link TieredBlockStore}: its id, its length and the file that
 * holds exactly its bytes. The identity fields never change; the pin count, the removal mark and
 * the held mark are guarded by the store's lock and only the store touches them.
 */
public final class BlockMeta {
  private final long blockId;
  private final long length;
  private final StoreTier tier;
  private final Path path;

  // Guarded by the owning store's lock.
  int pins;
  boolean removePending;
  boolean live = true;
  // Written to the cache only and not yet persisted: never evicted (see TieredBlockStore#hold).
  boolean held;

  // The block's checksums once known (given at commit, or read from their file when first
  // needed); null until then. Set once with the same value by whoever reads them first.
  private volatile BlockChecksums checksums;

  // The chunks found whole so far (see BlockVerifier); replaced when the file's time changes.
  volatile BlockVerifier.Verified verified;

  BlockMeta(long blockId, long length, StoreTier tier, Path path) {
    this.blockId = blockId;
    this.length = length;
    this.tier = tier;
    this.path = path;
  }

  public long blockId() {
    return blockId;
  }

  /** Bytes in the block, which is also the length of its file. */
  public long length() {
    return length;
  }

  /** The alias of the tier holding the block (MEM, SSD or HDD). */
  public String tierAlias() {
    return tier.spec().alias();
  }

  /** The absolute path of the block's file. */
  public Path path() {
    return path;
  }

  StoreTier tier() {
    return tier;
  }

  /**
   * The block's checksums: from memory, or read from the tier's checksum file.
   *
   * @return null for a block cached before blocks had checksums (no file)
   * @throws IOException when the file cannot be read or is damaged
   */
  public BlockChecksums checksums() throws IOException {
    BlockChecksums c = checksums;
    if (c == null) {
      c = BlockChecksums.read(tier.checksums(blockId));
      checksums = c;
    }
    return c;
  }

  void setChecksums(BlockChecksums c) {
    checksums = c;
  }

  @Override
  public String toString() {
    return "block " + blockId + " (" + length + " bytes in " + tierAlias() + " at " + path + ")";
  }
}
