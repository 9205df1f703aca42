package io.strata.worker.block;

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

  @Override
  public String toString() {
    return "block " + blockId + " (" + length + " bytes in " + tierAlias() + " at " + path + ")";
  }
}
