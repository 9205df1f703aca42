package io.strata.worker.data;

import io.strata.proto.UfsBlockSource;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies whole blocks from under stores into the block store after reads that missed, on a
 * bounded pool with a bounded queue. At most one copy of a block id is queued or running; a
 * request that finds the queue full is dropped (the next miss asks again). The source's
 * fingerprint is checked before the copy (against the one the client learnt, when it gave one)
 * and again after it: a copy whose source changed at either point -- a file rewritten while it
 * was being copied -- is dropped, so a block is never cached as a mix of two versions.
 */
public final class BlockCacher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCacher.class);

  private final TieredBlockStore store;
  private final MountedStores stores;
  private final int chunkSize;
  private final ThreadPoolExecutor pool;
  private final Set<Long> inFlight = ConcurrentHashMap.newKeySet();

  public BlockCacher(TieredBlockStore store, MountedStores stores, int threads, int queueSize,
      int chunkSize) {
    this.store = store;
    this.stores = stores;
    this.chunkSize = chunkSize;
    AtomicInteger n = new AtomicInteger();
    this.pool = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(Math.max(1, queueSize)), r -> {
          Thread t = new Thread(r, "block-cacher-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        }, new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
  }

  /**
   * Asks for the block to be cached in the background.
   *
   * @return whether a copy was queued (false when cached, already queued, or the queue is full)
   */
  public boolean request(long blockId, UfsBlockSource source) {
    if (store.contains(blockId) || !inFlight.add(blockId)) {
      return false;
    }
    try {
      pool.execute(() -> copy(blockId, source));
      return true;
    } catch (RejectedExecutionException e) {
      inFlight.remove(blockId);
      LOG.debug("Not caching block {}: the copy queue is full", blockId);
      return false;
    }
  }

  /** Copies queued or running. */
  public int pending() {
    return inFlight.size();
  }

  private void copy(long blockId, UfsBlockSource source) {
    TempBlock temp = null;
    try {
      String path = source.getUfsPath();
      UnderFileSystem ufs = stores.get(path, source.getMountId());
      String before = ufs.getStatus(path).fingerprint();
      String expected = source.getUfsFingerprint().isEmpty() ? before
          : source.getUfsFingerprint();
      if (!before.equals(expected)) {
        LOG.info("Not caching block {}: {} changed (fingerprint {} where {} was expected)",
            blockId, path, before, expected);
        return;
      }
      Optional<TempBlock> reserved = store.createTempBlock(blockId, source.getBlockLength());
      if (reserved.isEmpty()) {
        return;
      }
      temp = reserved.get();
      writeBlock(ufs, source, temp);
      String after = ufs.getStatus(path).fingerprint();
      if (!after.equals(expected)) {
        LOG.info("Dropping the copy of block {}: {} changed while it was copied (fingerprint {}"
            + " where {} was expected)", blockId, path, after, expected);
        return;
      }
      store.commit(temp);
      temp = null;
    } catch (NoSuchFileException e) {
      // The read that asked for the copy has already told its client.
      LOG.debug("Not caching block {}: {} does not exist", blockId, source.getUfsPath());
    } catch (Exception e) {
      LOG.warn("Cannot cache block {} from {}: {}", blockId, source.getUfsPath(), e.toString());
    } finally {
      if (temp != null) {
        store.abort(temp);
      }
      inFlight.remove(blockId);
    }
  }

  private void writeBlock(UnderFileSystem ufs, UfsBlockSource source, TempBlock temp)
      throws IOException {
    byte[] chunk = new byte[(int) Math.min(chunkSize, Math.max(1, source.getBlockLength()))];
    long done = 0;
    long total = source.getBlockLength();
    try (FileChannel out = FileChannel.open(temp.path(), StandardOpenOption.CREATE,
        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
      while (done < total) {
        int want = (int) Math.min(chunk.length, total - done);
        int r = ufs.read(source.getUfsPath(), source.getBlockStart() + done, chunk, 0, want);
        if (r <= 0) {
          throw new IOException("under-store file " + source.getUfsPath() + " ends at byte "
              + (source.getBlockStart() + done) + ", inside block " + temp.blockId());
        }
        ByteBuffer src = ByteBuffer.wrap(chunk, 0, r);
        while (src.hasRemaining()) {
          out.write(src);
        }
        done += r;
      }
    }
  }

  @Override
  public void close() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
