package io.strata.common.buffer;

import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;

/**
 * The limits of an {@link AlignedBufferPool}: the budget (bytes of direct memory the pool aims to
 * hold at most, idle and in use together), the oversize factor (how much larger than a request a
 * pooled buffer may be and still serve it) and the alignment of every buffer's address and
 * capacity. A settings value is always valid: the constructor rejects a negative budget, a factor
 * below 1 and an alignment that is not a power of two of at least 4096.
 *
 * @param budgetBytes direct memory the pool holds at most before it frees idle buffers
 * @param maxOversize a pooled buffer serves a request if its capacity is at most this many times
 *     the requested size (a buffer of the request's own size class always does)
 * @param alignment address and capacity alignment in bytes, also the smallest size class
 */
public record BufferPoolSettings(long budgetBytes, int maxOversize, int alignment) {
  /** The alignment Direct I/O needs on the file systems Strata writes to. */
  public static final int DIRECT_IO_ALIGNMENT = 4096;

  public BufferPoolSettings {
    if (budgetBytes < 0) {
      throw new IllegalArgumentException(
          "buffer pool budget must be >= 0 bytes, got "
              + budgetBytes
              + "; set "
              + WorkerKeys.BUFFER_POOL_BUDGET.name());
    }
    if (maxOversize < 1) {
      throw new IllegalArgumentException(
          "buffer pool oversize factor must be >= 1, got "
              + maxOversize
              + "; set "
              + WorkerKeys.BUFFER_POOL_MAX_OVERSIZE.name());
    }
    if (alignment < DIRECT_IO_ALIGNMENT || Integer.bitCount(alignment) != 1) {
      throw new IllegalArgumentException(
          "buffer alignment must be a power of two >= 4096, got " + alignment);
    }
  }

  /** Settings with the given budget and oversize factor, aligned for Direct I/O (4096). */
  public static BufferPoolSettings of(long budgetBytes, int maxOversize) {
    return new BufferPoolSettings(budgetBytes, maxOversize, DIRECT_IO_ALIGNMENT);
  }

  /** The worker's settings, from {@code strata.worker.buffer.pool.*}. */
  public static BufferPoolSettings fromWorker(StrataConfig conf) {
    return of(
        conf.getBytes(WorkerKeys.BUFFER_POOL_BUDGET),
        conf.getInt(WorkerKeys.BUFFER_POOL_MAX_OVERSIZE));
  }
}
