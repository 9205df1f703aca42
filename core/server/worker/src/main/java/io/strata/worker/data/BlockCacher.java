package io.strata.worker.data;

import io.netty.buffer.ByteBuf;
import io.strata.common.BlockChecksums;
import io.strata.common.DaemonThreads;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.block.BlockFileOpener;
import io.strata.worker.block.BlockFileWriter;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.TempBlock;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Copies whole blocks from under stores into the block store, on a bounded pool with a bounded
 * queue: in the background after a read that missed ({@link #request}), or for readers that wait
 * for the copy ({@link #serve}), so that a first read of a block reads the under store once -- the
 * bytes fetched for the readers are the bytes cached -- instead of once for the reader and once
 * more for the cache. At most one copy of a block id is queued or running; a background request
 * that finds the queue full is dropped (the next miss asks again), a reader that finds it full is
 * told to read another way.
 *
 * <p>Readers of a copy are answered as soon as the bytes of their range are written, not when the
 * whole block is: a small block (a small file) is read in one chunk and every waiting reader is
 * answered from it; a reader of the start of a large block gets its range after the first chunks. A
 * reader whose range starts more than two chunks beyond what is written is not made to wait (a
 * random read far into a block the copy would reach only later); it reads the range on its own.
 *
 * <p>Versions are never mixed: the source's fingerprint is checked before readers are answered from
 * bytes read since the last check, and after the last byte was read, before the block is committed,
 * against the one the client learnt (or, when it gave none, the one found before the copy started).
 * A block of more than one chunk is also checked before the copy starts, so that a file changed
 * already is not read whole for nothing. A copy whose source changed at any point is dropped, and
 * its readers not yet answered get READ_CHANGED; a block is never cached as a mix of two versions.
 * A small block costs one status and one read of the under store.
 *
 * <p>Block files are written through a {@link BlockFileOpener}, with Direct I/O where the tier
 * takes it. Each copy thread owns one heap chunk (under stores read into arrays) and one 4 KiB
 * aligned direct chunk, made the first time it copies, so the memory used is threads x 2 x chunk
 * size whatever the queue or the number of waiting readers. A copy that fails or is interrupted
 * half-way is aborted: its temporary file is deleted and nothing is served from it or committed.
 */
public final class BlockCacher implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BlockCacher.class);

  /** A reader waiting for a range of a block being copied; answered exactly once. */
  interface Waiter {
    /** Offset of the range within the block. */
    long offset();

    /** Bytes of the range. */
    long length();

    /** The range is in {@code block} (readable until this returns): send it. */
    void ready(BlockBytes block);

    /** The copy cannot give the range and nothing was sent: answer with this status. */
    void failed(ReadStatus status, String message, String fingerprint);

    /** The copy could not start (no room in the store): read the range another way. */
    void readElsewhere();
  }

  /** Where a waiter's range is read from: the copy's chunk in memory, or the block's file. */
  interface BlockBytes {
    /** Appends {@code length} bytes of the block at {@code offset} to {@code into}. */
    void copy(long offset, int length, ByteBuf into) throws IOException;
  }

  /** The bytes of a block held whole in memory (a block of one chunk). */
  private record InMemory(byte[] bytes) implements BlockBytes {
    @Override
    public void copy(long offset, int length, ByteBuf into) {
      into.writeBytes(bytes, (int) offset, length);
    }
  }

  /** The bytes of a block read back from its file. */
  private record InFile(FileChannel file) implements BlockBytes {
    @Override
    public void copy(long offset, int length, ByteBuf into) throws IOException {
      int done = 0;
      while (done < length) {
        int n = into.writeBytes(file, offset + done, length - done);
        if (n < 0) {
          throw new IOException("the block's file ends at " + (offset + done));
        }
        done += n;
      }
    }
  }

  private final TieredBlockStore store;
  private final MountedStores stores;
  private final BlockFileOpener opener;
  private final int chunkSize;
  private final ThreadPoolExecutor pool;
  private final Map<Long, Copy> copies = new ConcurrentHashMap<>();
  // Dies with its thread when an idle copy thread times out, and the buffers with it.
  private final ThreadLocal<Chunk> chunks;
  private volatile ReadMetrics metrics;

  /** A cacher that writes with Direct I/O where the tiers take it. */
  public BlockCacher(
      TieredBlockStore store, MountedStores stores, int threads, int queueSize, int chunkSize) {
    this(store, stores, threads, queueSize, chunkSize, new BlockFileOpener(true));
  }

  /**
   * @param chunkSize bytes read from the under store and written per step; rounded up to a multiple
   *     of {@link BlockFileWriter#ALIGNMENT}
   * @param opener opens the block files, deciding on Direct I/O
   */
  public BlockCacher(
      TieredBlockStore store,
      MountedStores stores,
      int threads,
      int queueSize,
      int chunkSize,
      BlockFileOpener opener) {
    this.store = store;
    this.stores = stores;
    this.opener = opener;
    int align = BlockFileWriter.ALIGNMENT;
    this.chunkSize = (Math.max(1, chunkSize) + align - 1) / align * align;
    this.chunks = ThreadLocal.withInitial(() -> new Chunk(this.chunkSize));
    this.pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(Math.max(1, queueSize)),
            DaemonThreads.numbered("block-cacher-"),
            new ThreadPoolExecutor.AbortPolicy());
    pool.allowCoreThreadTimeOut(true);
  }

  /** Counts the under-store reads of copies in {@code readMetrics} from now on. */
  void countReadsIn(ReadMetrics readMetrics) {
    this.metrics = readMetrics;
  }

  /**
   * Asks for the block to be cached in the background.
   *
   * @return whether a copy was queued (false when cached, already queued, or the queue is full)
   */
  public boolean request(long blockId, UfsBlockSource source) {
    if (store.contains(blockId) || copies.containsKey(blockId)) {
      return false;
    }
    return start(blockId, source, null) != null;
  }

  /**
   * Answers {@code waiter} from a copy of the block: the one running, or a new one. False when it
   * cannot (the queue is full, the copy has finished already, or the waiter's range starts far
   * beyond what the copy has written): the caller then serves the waiter on its own, and the waiter
   * hears nothing from here.
   */
  boolean serve(long blockId, UfsBlockSource source, Waiter waiter) {
    Copy running = copies.get(blockId);
    if (running != null) {
      return running.add(waiter);
    }
    return start(blockId, source, waiter) != null;
  }

  /** Starts a copy, with a first waiter or none; null when one runs already or none can. */
  private Copy start(long blockId, UfsBlockSource source, Waiter first) {
    Copy copy = new Copy(blockId, source);
    if (first != null) {
      copy.waiting.add(first);
    }
    Copy existing = copies.putIfAbsent(blockId, copy);
    if (existing != null) {
      return first != null && existing.add(first) ? existing : null;
    }
    try {
      pool.execute(copy);
      return copy;
    } catch (RejectedExecutionException e) {
      copies.remove(blockId, copy);
      LOG.debug("Not copying block {}: the copy queue is full", blockId);
      return null;
    }
  }

  /** Whether a copy of the block is queued or running. */
  boolean copying(long blockId) {
    return copies.containsKey(blockId);
  }

  /** Copies queued or running. */
  public int pending() {
    return copies.size();
  }

  /** The source changed while a block was copied. */
  private static final class ChangedException extends IOException {
    final String now;

    ChangedException(String message, String now) {
      super(message);
      this.now = now;
    }
  }

  /** One copy of a block and the readers waiting for it. */
  private final class Copy implements Runnable {
    private final long blockId;
    private final UfsBlockSource source;
    // Guarded by this.
    private final List<Waiter> waiting = new ArrayList<>();
    private long written;
    private boolean ended;

    /** The block's file opened for reading, once the writer has created it. */
    private FileChannel readable;

    /** Whether the store was shown unchanged after every byte of the block was read. */
    private boolean checkedWhole;

    Copy(long blockId, UfsBlockSource source) {
      this.blockId = blockId;
      this.source = source;
    }

    /** Adds a waiter unless the copy has ended or is too far behind its range. */
    synchronized boolean add(Waiter w) {
      if (ended || w.offset() > written + 2L * chunkSize) {
        return false;
      }
      waiting.add(w);
      return true;
    }

    private synchronized boolean hasWaiters() {
      return !waiting.isEmpty();
    }

    /** Whether a waiting range ends within the first {@code bytes} bytes. */
    private synchronized boolean anyWithin(long bytes) {
      for (Waiter w : waiting) {
        if (w.offset() + w.length() <= bytes) {
          return true;
        }
      }
      return false;
    }

    /** Removes and returns the waiters whose range ends within {@code bytes}; all when ended. */
    private synchronized List<Waiter> take(long bytes, boolean end) {
      List<Waiter> out = new ArrayList<>();
      waiting.removeIf(
          w -> {
            if (end || w.offset() + w.length() <= bytes) {
              out.add(w);
              return true;
            }
            return false;
          });
      if (end) {
        ended = true;
      }
      return out;
    }

    @Override
    public void run() {
      TempBlock temp = null;
      String path = source.getUfsPath();
      try {
        UnderFileSystem ufs = stores.get(path, source.getMountId());
        String expected = source.getUfsFingerprint();
        // The check after the last byte is what keeps versions apart; the one before only
        // spares reading a block of a file that changed already, which a block of one chunk
        // (a small file) is not worth a second status call of the store for.
        if (expected.isEmpty() || source.getBlockLength() > chunkSize) {
          String before = ufs.fingerprint(path);
          if (expected.isEmpty()) {
            expected = before;
          } else if (!before.equals(expected)) {
            throw new ChangedException(
                "Not caching block "
                    + blockId
                    + ": "
                    + path
                    + " changed (fingerprint "
                    + before
                    + " where "
                    + expected
                    + " was expected)",
                before);
          }
        }
        Optional<TempBlock> reserved = store.createTempBlock(blockId, source.getBlockLength());
        if (reserved.isEmpty()) {
          for (Waiter w : take(0, true)) {
            w.readElsewhere();
          }
          return;
        }
        temp = reserved.get();
        BlockChecksums checksums = writeBlock(ufs, temp, expected);
        if (!checkedWhole) {
          checkUnchanged(ufs, expected, true);
        }
        // The bytes are checked: readers need not wait for the commit (a rename and the
        // store's bookkeeping), and those that come meanwhile still join this copy.
        answer(take(source.getBlockLength(), false), temp);
        TempBlock done = temp;
        temp = null;
        if (readable == null && hasWaiters()) {
          readable = FileChannel.open(done.path(), StandardOpenOption.READ);
        }
        BlockMeta committed = null;
        try {
          committed = store.commit(done, done.length(), checksums);
        } finally {
          // Readers that came meanwhile are answered from the file opened before the commit
          // renamed it, or from the committed file; readers that come now find the block in
          // the store.
          List<Waiter> late = take(0, true);
          if (readable == null && !late.isEmpty() && committed != null) {
            readable = FileChannel.open(committed.path(), StandardOpenOption.READ);
          }
          if (readable != null) {
            answer(late, new InFile(readable));
          } else {
            for (Waiter w : late) {
              w.readElsewhere();
            }
          }
        }
      } catch (ChangedException e) {
        LOG.info(e.getMessage());
        failAll(
            ReadStatus.READ_CHANGED,
            changedMessage(path, source.getUfsFingerprint(), e.now),
            e.now);
      } catch (NoSuchFileException | FileNotFoundException e) {
        LOG.debug("Not caching block {}: {} does not exist", blockId, path);
        failAll(
            ReadStatus.READ_NOT_FOUND,
            "Block "
                + blockId
                + ": under-store file "
                + path
                + " does not exist (deleted or renamed outside Strata?)",
            "");
      } catch (Exception e) {
        LOG.warn("Cannot cache block {} from {}: {}", blockId, path, e.toString());
        failAll(ReadStatus.READ_ERROR, "Block " + blockId + ": cannot read " + path + ": " + e, "");
      } finally {
        if (temp != null) {
          store.abort(temp);
        }
        // Nobody may wait for an answer that will not come (an Error got past the catches).
        for (Waiter w : take(0, true)) {
          w.failed(
              ReadStatus.READ_ERROR,
              "Block " + blockId + ": the copy from " + path + " stopped",
              "");
        }
        closeQuietly(readable);
        copies.remove(blockId, this);
      }
    }

    /**
     * Fails the copy when the source's fingerprint is no longer {@code expected}; with {@code
     * whole} (every byte of the block was read before), also notes that it is checked.
     */
    private void checkUnchanged(UnderFileSystem ufs, String expected, boolean whole)
        throws IOException {
      String now = ufs.fingerprint(source.getUfsPath());
      if (!now.equals(expected)) {
        throw new ChangedException(
            "Dropping the copy of block "
                + blockId
                + ": "
                + source.getUfsPath()
                + " changed while it was copied (fingerprint "
                + now
                + " where "
                + expected
                + " was expected)",
            now);
      }
      checkedWhole = whole;
    }

    private void failAll(ReadStatus status, String message, String fingerprint) {
      for (Waiter w : take(0, true)) {
        w.failed(status, message, fingerprint);
      }
    }

    private void answer(List<Waiter> ready, BlockBytes bytes) {
      for (Waiter w : ready) {
        w.ready(bytes);
      }
    }

    /**
     * Answers waiters from the block's file, opened for reading the first time it is needed (a
     * block of one chunk rarely needs it: its readers were answered from memory). Opened before the
     * commit renames the file, and read through that descriptor after.
     */
    private void answer(List<Waiter> ready, TempBlock temp) throws IOException {
      if (ready.isEmpty()) {
        return;
      }
      if (readable == null) {
        readable = FileChannel.open(temp.path(), StandardOpenOption.READ);
      }
      answer(ready, new InFile(readable));
    }

    private BlockChecksums writeBlock(UnderFileSystem ufs, TempBlock temp, String expected)
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
            ReadMetrics m = metrics;
            if (m != null) {
              m.ufsCall();
            }
            int r =
                ufs.read(
                    source.getUfsPath(),
                    source.getBlockStart() + done + filled,
                    chunk.heap,
                    filled,
                    want - filled);
            if (r <= 0) {
              throw new IOException(
                  "under-store file "
                      + source.getUfsPath()
                      + " ends at byte "
                      + (source.getBlockStart() + done + filled)
                      + ", inside block "
                      + temp.blockId());
            }
            filled += r;
          }
          if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException(
                "copy of block " + temp.blockId() + " interrupted: the worker is stopping");
          }
          if (done == 0 && filled == total) {
            // A block of one chunk: its readers get it from memory as soon as the store shows
            // it is still that version, before it is written and committed.
            checkUnchanged(ufs, expected, true);
            answer(take(total, false), new InMemory(chunk.heap));
          }
          chunk.direct.clear();
          chunk.direct.put(chunk.heap, 0, filled).flip();
          out.write(chunk.direct);
          done += filled;
          synchronized (this) {
            written = done;
          }
          // Readers of the block's start are answered before the rest is read, once the
          // source is shown to be the same version after their bytes were read. The last
          // chunk is answered after the writer has closed (and trimmed) the file.
          if (done < total && anyWithin(done)) {
            checkUnchanged(ufs, expected, false);
            answer(take(done, false), temp);
          }
        }
        return out.checksums();
      }
    }
  }

  /** The text a reader gets when a file changed in its under store since it was opened. */
  static String changedMessage(String path, String expected, String now) {
    return path
        + " changed in its under store since it was opened (fingerprint "
        + expected
        + ", now "
        + now
        + "); open it again to read the new version";
  }

  private static void closeQuietly(FileChannel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        // Opened for reading only: nothing is lost.
      }
    }
  }

  /** One copy thread's buffers: under stores read into arrays, Direct I/O needs aligned memory. */
  private static final class Chunk {
    final byte[] heap;
    final ByteBuffer direct;

    Chunk(int size) {
      heap = new byte[size];
      direct =
          ByteBuffer.allocateDirect(size + BlockFileWriter.ALIGNMENT - 1)
              .alignedSlice(BlockFileWriter.ALIGNMENT);
    }
  }

  @Override
  public void close() throws InterruptedException {
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
