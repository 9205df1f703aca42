package io.strata.common;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which chunks of a block a reader has found to match their checksums ({@link BlockChecksums}), so
 * that each is checked once: the worker before it serves a block, a client reading a block file of
 * its host. Lock-free; two readers that check the same chunk at once both find what is there.
 */
public final class VerifiedChunks {
  private final AtomicLongArray bits;

  public VerifiedChunks(int chunks) {
    this.bits = new AtomicLongArray((chunks + 63) / 64);
  }

  public boolean has(int chunk) {
    return (bits.get(chunk >>> 6) & (1L << chunk)) != 0;
  }

  public void add(int chunk) {
    int i = chunk >>> 6;
    long bit = 1L << chunk;
    long v;
    do {
      v = bits.get(i);
    } while ((v & bit) == 0 && !bits.compareAndSet(i, v, v | bit));
  }
}
