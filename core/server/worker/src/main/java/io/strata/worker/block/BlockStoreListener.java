package io.strata.worker.block;

/**
 * Told of every change to the set of blocks a {@link TieredBlockStore} holds, so the master
 * can be kept up to date. Calls come from the thread that made the change, outside the store's
 * lock, and must return quickly.
 */
public interface BlockStoreListener {
  /** A listener that ignores everything. */
  BlockStoreListener NONE = new BlockStoreListener() {
    @Override
    public void blockCommitted(BlockMeta block) {}

    @Override
    public void blockRemoved(long blockId) {}
  };

  /** A block became readable. */
  void blockCommitted(BlockMeta block);

  /** A block was evicted or removed and its file deleted. */
  void blockRemoved(long blockId);
}
