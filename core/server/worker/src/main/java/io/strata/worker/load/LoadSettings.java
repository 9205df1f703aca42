package io.strata.worker.load;

import io.strata.common.buffer.AlignedBufferPool;
import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import io.strata.worker.block.BlockFileWriter;

/**
 * The limits of a {@link LoadExecutor}: load threads, tasks that may wait for one, and the bytes a
 * thread moves per step. A value is always valid: threads and queue are at least 1, and the chunk
 * size is a positive multiple of 4 KiB (Direct I/O's alignment) no larger than the buffer pool's
 * largest class.
 *
 * @param threads load threads; with the chunk size this bounds the direct memory loads use
 * @param queueSize tasks that may wait for a thread; a task beyond them is answered busy
 * @param chunkSize bytes read from the under store and written per step
 */
public record LoadSettings(int threads, int queueSize, int chunkSize) {
  public LoadSettings {
    if (threads < 1) {
      throw new IllegalArgumentException(
          WorkerKeys.LOAD_THREADS.name() + " must be at least " + "1, got " + threads);
    }
    if (queueSize < 1) {
      throw new IllegalArgumentException(
          WorkerKeys.LOAD_QUEUE_SIZE.name() + " must be at " + "least 1, got " + queueSize);
    }
    if (chunkSize <= 0 || chunkSize % BlockFileWriter.ALIGNMENT != 0) {
      throw new IllegalArgumentException(
          "load chunk size must be a positive multiple of "
              + BlockFileWriter.ALIGNMENT
              + " bytes, got "
              + chunkSize);
    }
  }

  /**
   * The worker's settings, from {@code strata.worker.load.*}; the chunk size is rounded up to a
   * multiple of 4 KiB.
   *
   * @throws IllegalArgumentException naming the key of a value out of range
   */
  public static LoadSettings fromWorker(StrataConfig conf) {
    long chunk = conf.getBytes(WorkerKeys.LOAD_CHUNK_SIZE);
    if (chunk <= 0 || chunk > AlignedBufferPool.MAX_CLASS) {
      throw new IllegalArgumentException(
          WorkerKeys.LOAD_CHUNK_SIZE.name()
              + " must be between "
              + "1 byte and "
              + AlignedBufferPool.MAX_CLASS
              + " bytes, got "
              + chunk
              + "; the default is "
              + WorkerKeys.LOAD_CHUNK_SIZE.defaultValue());
    }
    return new LoadSettings(
        conf.getInt(WorkerKeys.LOAD_THREADS),
        conf.getInt(WorkerKeys.LOAD_QUEUE_SIZE),
        (int) alignUp(chunk));
  }

  /** {@code bytes} rounded up to a multiple of Direct I/O's 4 KiB alignment. */
  static long alignUp(long bytes) {
    int align = BlockFileWriter.ALIGNMENT;
    return (bytes + align - 1) / align * align;
  }
}
