package io.strata.worker.data;

import io.strata.proto.UfsBlockSource;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.BlockFileWriter;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
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
 *
 * <p>Block files are written through a {@link BlockFileOpener}, with Direct I/O where the tier
 * takes it. Each copy thread owns one heap chunk (under stores read into arrays) and one 4 KiB
 * aligned direct chunk, made the first time it copies, so the memory used is threads x 2 x
 * chunk size whatever the queue holds. A copy that fails or is interrupted half-way is aborted:
 * its temporary file is deleted and nothing is served.
 */
public final class BlockCacher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCacher.class);

  private final TieredBlockStore store;
  private final MountedStores stores;
  private final BlockFileOpener opener;
  private final int chunkSize;
  private final ThreadPoolExecutor pool;
  private final Set<Long> inFlight = ConcurrentHashMap.newKeySet();
  // Dies with its thread when an idle copy thread times out, and the buffers with it.
  private final ThreadLocal<Chunk> chunks;

  /** A cacher that writes with Direct I/O where the tiers take it. */
  public BlockCacher(TieredBlockStore store, MountedStores stores, int threads, int queueSize,
      int chunkSize) {
    this(store, stores, threads, queueSize, chunkSize, new BlockFileOpener(true));
  }

  /**
   * @param chunkSize bytes read from the under store and written per step; rounded up to a
   *     multiple of {@link BlockFileWriter#ALIGNMENT}
   * @param opener opens the block files, deciding on Direct I/O
   */
  public BlockCacher(TieredBlockStore store, MountedStores stores, int threads, int queueSize,
      int chunkSize, BlockFileOpener opener) {
    this.store = store;
    this.stores = stores;
    this.opener = opener;
    int align = BlockFileWriter.ALIGNMENT;
    this.chunkSize = (Math.max(1, chunkSize) + align - 1) / align * align;
    this.chunks = ThreadLocal.withInitial(() -> new Chunk(this.chunkSize));
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
    Chunk chunk = chunks.get();
    long done = 0;
    long total = source.getBlockLength();
    try (BlockFileWriter out = opener.open(temp)) {
      while (done < total) {
        // Fill the chunk completely (short reads happen), so that under Direct I/O only the
        // block's last chunk has an unaligned length.
        int want = (int) Math.min(chunk.heap.length, total - done);
        int filled = 0;
        while (filled < want) {
          int r = ufs.read(source.getUfsPath(), source.getBlockStart() + done + filled,
              chunk.heap, filled, want - filled);
          if (r <= 0) {
            throw new IOException("under-store file " + source.getUfsPath() + " ends at byte "
                + (source.getBlockStart() + done + filled) + ", inside block "
                + temp.blockId());
          }
          filled += r;
        }
        if (Thread.currentThread().isInterrupted()) {
          throw new InterruptedIOException("copy of block " + temp.blockId()
              + " interrupted: the worker is stopping");
        }
        chunk.direct.clear();
        chunk.direct.put(chunk.heap, 0, filled).flip();
        out.write(chunk.direct);
        done += filled;
      }
    }
  }

  /** One copy thread's buffers: under stores read into arrays, Direct I/O needs aligned memory. */
  private static final class Chunk {
    final byte[] heap;
    final ByteBuffer direct;

    Chunk(int size) {
      heap = new byte[size];
      direct = ByteBuffer.allocateDirect(size + BlockFileWriter.ALIGNMENT - 1)
          .alignedSlice(BlockFileWriter.ALIGNMENT);
    }
  }

  @Override
  public void close() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
