package io.strata.worker.block;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockChecksums;
import io.strata.common.DaemonThreads;
import io.strata.common.metrics.MetricNames;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads every cached block in turn, in the background, at most {@code strata.worker.scrub.rate}
 * bytes per second, and checks it against its checksums: a block that rotted at rest without being
 * read is dropped before a reader meets it ({@link TieredBlockStore#dropCorrupted}). A block cached
 * before blocks had checksums gets them from its bytes as they are now, so that it is verified from
 * then on. A pass over all blocks starts again after the last; blocks are neither pinned nor marked
 * as used, so the scrubber never keeps a block from eviction or removal.
 */
public final class BlockScrubber implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockScrubber.class);

  /** Bytes read at a time. */
  private static final int PIECE = 256 << 10;

  /** Pause between passes when there is nothing to scrub. */
  private static final long IDLE_MS = 10_000;

  private final TieredBlockStore store;
  private final long bytesPerSecond;
  private final Counter verifiedBytes;
  private final AtomicLong passes = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final Thread thread;
  private volatile boolean closed;

  /**
   * @param bytesPerSecond read rate; 0 leaves the scrubber off
   */
  public BlockScrubber(TieredBlockStore store, long bytesPerSecond, MeterRegistry registry) {
    this.store = store;
    this.bytesPerSecond = bytesPerSecond;
    this.verifiedBytes =
        Counter.builder(MetricNames.WORKER_SCRUBBED_BYTES)
            .description("Bytes of cached blocks the scrubber verified against their checksums")
            .baseUnit("bytes")
            .register(registry);
    this.thread = DaemonThreads.named("block-scrubber").newThread(this::run);
  }

  /** Starts scrubbing, unless the rate is 0. */
  public void start() {
    if (bytesPerSecond > 0) {
      thread.start();
    }
  }

  /** Bytes read and verified so far. */
  public long verifiedBytes() {
    return bytes.get();
  }

  /** Passes over every block finished so far. */
  public long passes() {
    return passes.get();
  }

  private void run() {
    ByteBuffer buffer = ByteBuffer.allocateDirect(PIECE);
    while (!closed) {
      List<Long> ids = store.blockIds();
      try {
        for (long id : ids) {
          if (closed) {
            return;
          }
          scrub(id, buffer);
        }
        passes.incrementAndGet();
        if (ids.isEmpty()) {
          Thread.sleep(IDLE_MS);
        }
      } catch (InterruptedException e) {
        return;
      } catch (RuntimeException e) {
        LOG.warn("Scrubbing cached blocks failed: {}; starting a new pass", e.toString(), e);
      }
    }
  }

  /**
   * Verifies one block, if it is still cached. The block is not pinned: a long read at the
   * scrubber's rate must not hold up its eviction or removal. The file is read through its own
   * descriptor, and a verdict counts only if the store still has the same block afterwards.
   */
  void scrub(long blockId, ByteBuffer buffer) throws InterruptedException {
    BlockMeta block = store.get(blockId);
    if (block == null) {
      return;
    }
    String damage = null;
    BlockChecksums kept;
    try {
      kept = store.checksums(block);
    } catch (IOException e) {
      kept = null;
      damage = "its checksums cannot be read: " + e.getMessage();
    }
    BlockChecksums now = null;
    if (damage == null) {
      try {
        now = read(block, buffer);
      } catch (NoSuchFileException e) {
        damage = "its file " + block.path() + " is gone";
      } catch (IOException e) {
        LOG.warn("Cannot scrub {}: {}", block, e.toString());
        return;
      }
    }
    if (closed || store.get(blockId) != block) {
      // Stopped part-way, or the block went or was replaced meanwhile: no verdict.
      return;
    }
    if (now != null) {
      if (now.blockLength() != block.length()) {
        damage =
            "its file has " + now.blockLength() + " bytes where the block has " + block.length();
      } else if (kept == null) {
        try {
          store.keepChecksums(block, now);
        } catch (IOException e) {
          LOG.warn("Cannot keep the checksums of {}: {}", block, e.toString());
        }
      } else {
        int bad = kept.firstDifference(now);
        if (bad >= 0) {
          damage = "chunk " + bad + " (found by the scrubber)";
        }
      }
    }
    if (damage != null) {
      store.dropCorrupted(block, damage);
    }
  }

  /** The checksums of the block's file as it is now, read at the scrubber's rate. */
  private BlockChecksums read(BlockMeta block, ByteBuffer buffer)
      throws IOException, InterruptedException {
    BlockChecksums.Builder b = BlockChecksums.builder();
    long start = System.nanoTime();
    long done = 0;
    try (FileChannel file = FileChannel.open(block.path(), StandardOpenOption.READ)) {
      while (!closed) {
        buffer.clear();
        int n = file.read(buffer, done);
        if (n < 0) {
          break;
        }
        buffer.flip();
        b.update(buffer);
        done += n;
        verifiedBytes.increment(n);
        bytes.addAndGet(n);
        // Keeps the rate: sleeps until the bytes read so far are due.
        long dueNanos = TimeUnit.SECONDS.toNanos(1) * done / bytesPerSecond;
        long aheadNanos = dueNanos - (System.nanoTime() - start);
        if (aheadNanos > 0) {
          TimeUnit.NANOSECONDS.sleep(aheadNanos);
        }
      }
    }
    return b.build();
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
  }
}
