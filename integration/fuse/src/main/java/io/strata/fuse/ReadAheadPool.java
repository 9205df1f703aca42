package io.strata.fuse;

import io.strata.common.DaemonThreads;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The mount's read-ahead threads, shared by every open file.
 *
 * <p>Guarantees: at most {@code threads} fetches run at once and at most {@code queueCapacity}
 * wait; {@link #trySubmit} never blocks, it declines a task when the queue is full or the pool is
 * closed, so a busy mount skips read-ahead instead of stalling a read. Threads are daemons and end
 * when the pool is closed. With 0 threads every task is declined (read-ahead off).
 */
public final class ReadAheadPool implements AutoCloseable {
  /** Tasks that may wait for a thread; each is a fetch of at most a few pages. */
  public static final int DEFAULT_QUEUE_CAPACITY = 64;

  private final ThreadPoolExecutor executor;

  /**
   * @param threads fetches run at once; 0 declines every task
   * @param queueCapacity tasks that may wait for a thread
   */
  public ReadAheadPool(int threads, int queueCapacity) {
    if (threads < 0 || queueCapacity < 1) {
      throw new IllegalArgumentException(
          "read-ahead threads must be >= 0 (set "
              + FuseKeys.READ_AHEAD_THREADS.name()
              + "), got "
              + threads
              + ", and the queue capacity >= 1, got "
              + queueCapacity);
    }
    if (threads == 0) {
      executor = null;
      return;
    }
    executor =
        new ThreadPoolExecutor(
            threads,
            threads,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(queueCapacity),
            DaemonThreads.numbered("strata-fuse-readahead-"),
            new ThreadPoolExecutor.AbortPolicy());
    // Idle mounts should hold no threads.
    executor.allowCoreThreadTimeOut(true);
  }

  /** The mount's pool from {@code strata.fuse.readahead.threads}. */
  public static ReadAheadPool fromConfig(StrataConfig conf) {
    return new ReadAheadPool(conf.getInt(FuseKeys.READ_AHEAD_THREADS), DEFAULT_QUEUE_CAPACITY);
  }

  /** Queues {@code task}; false, without running it, when the queue is full or closed. */
  public boolean trySubmit(Runnable task) {
    if (executor == null) {
      return false;
    }
    try {
      executor.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /** Whether tasks are taken at all (false with 0 threads). */
  public boolean enabled() {
    return executor != null;
  }

  /** Tasks waiting for a thread (for tests and status). */
  int queued() {
    return executor == null ? 0 : executor.getQueue().size();
  }

  /** Stops taking tasks and drops the queued ones; running fetches finish on their own. */
  @Override
  public void close() {
    if (executor != null) {
      executor.shutdownNow();
    }
  }
}
