package io.strata.worker.block;

import java.nio.file.Path;

/**
 * A block being written: space is reserved for it in one tier and its bytes go to a file in that
 * tier's {@code tmp/} folder. It becomes readable only through {@link TieredBlockStore#commit}, and
 * {@link TieredBlockStore#abort} releases it; whoever created it must do exactly one of the two.
 */
public final class TempBlock {
  private final long blockId;
  private final long length;
  private final StoreTier tier;
  private final Path path;
  private final boolean held;
  // Guarded by the owning store's lock.
  boolean finished;
  private volatile boolean callerTellsMaster;

  TempBlock(long blockId, long length, StoreTier tier, Path path, boolean held) {
    this.blockId = blockId;
    this.length = length;
    this.tier = tier;
    this.path = path;
    this.held = held;
  }

  public long blockId() {
    return blockId;
  }

  /**
   * The bytes reserved for the block: the length it must have when committed, or at most, when
   * committed with {@link TieredBlockStore#commit(TempBlock, long)}.
   */
  public long length() {
    return length;
  }

  /** The temporary file to write the block's bytes into. */
  public Path path() {
    return path;
  }

  public String tierAlias() {
    return tier.spec().alias();
  }

  /** Marks that whoever commits this block tells the master about it (see BlockStoreListener). */
  public void callerTellsMaster() {
    callerTellsMaster = true;
  }

  /** Whether the block is held from the moment it is committed (see TieredBlockStore#hold). */
  public boolean isHeld() {
    return held;
  }

  boolean isCallerTellingMaster() {
    return callerTellsMaster;
  }

  StoreTier tier() {
    return tier;
  }
}
