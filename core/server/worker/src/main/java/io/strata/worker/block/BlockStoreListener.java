package io.strata.worker.block;

/**
 * Told of every change to the set of blocks a {@link TieredBlockStore} holds, so the master can be
 * kept up to date. Calls come from the thread that made the change, outside the store's lock, and
 * must return quickly.
 */
public interface BlockStoreListener {
  /** A listener that ignores everything. */
  BlockStoreListener NONE =
      new BlockStoreListener() {
        @Override
        public void blockCommitted(BlockMeta block, boolean callerTellsMaster) {}

        @Override
        public void blockRemoved(long blockId) {}
      };

  /**
   * A block became readable.
   *
   * @param callerTellsMaster the code that committed it tells the master itself (a load task, whose
   *     answer the master records), so only the next heartbeat needs to repeat it
   */
  void blockCommitted(BlockMeta block, boolean callerTellsMaster);

  /** A block was evicted or removed and its file deleted. */
  void blockRemoved(long blockId);
}
