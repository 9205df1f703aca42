package io.strata.worker.block;

/**
 * What {@link TieredBlockStore#open} found on disk.
 *
 * @param blocks committed blocks loaded
 * @param bytes their total length
 * @param tempFilesRemoved half-written files deleted from the tiers' tmp folders
 * @param strayFilesRemoved files in the blocks folders that were not blocks, and held markers of
 *     blocks that were not found, deleted
 * @param blocksEvicted blocks deleted because a tier held more than its capacity
 */
public record OpenResult(
    int blocks, long bytes, int tempFilesRemoved, int strayFilesRemoved, int blocksEvicted) {}
