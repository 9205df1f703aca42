package io.strata.client;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.common.BlockChecksums;
import io.strata.common.BlockFiles;
import io.strata.common.VerifiedChunks;
import io.strata.proto.WorkerAddress;
import java.io.EOFException;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A block file of a worker on this host, read directly (short-circuit). Blocks of at least {@link
 * #MAP_MIN} that fit in one mapping are memory-mapped as well as open: a small read is then a
 * single copy from the page cache into the caller's memory, with no system call, which is what lets
 * short-circuit random reads keep up with reading the local disk; a large read into a direct buffer
 * (at least {@link #CHANNEL_READ_MIN}) goes through the file, one kernel copy without page faults.
 * Smaller and larger blocks are read with positioned channel reads.
 *
 * <p>Thread safety: {@link #read} may be called from many threads at once. The mapping is released
 * deterministically on {@link #close}, but only once the last read in progress has finished (a
 * reference count), because touching an unmapped region would crash the JVM. Block files are
 * immutable and only ever unlinked by the worker, so a mapping stays valid even if the worker
 * evicts the block meanwhile.
 */
final class LocalBlockFile {
  private static final Unmapper UNMAPPER = Unmapper.find();

  /**
   * Smallest block that is mapped. A small block (a small file) is mostly read once, whole: one
   * positioned read costs one system call, where a mapping costs the map, a page fault per page and
   * an unmap that interrupts every core running this process's threads.
   */
  static final long MAP_MIN = 1 << 20;

  /**
   * Smallest read into a direct buffer that goes through the file rather than the mapping: the
   * kernel copies it from its page cache in one call, where a copy from the mapping first faults
   * each page of it into this process (a fault per 16 pages, measured as a tenth of a streaming
   * read's time) and leaves them mapped.
   */
  static final int CHANNEL_READ_MIN = 64 << 10;

  /**
   * Checksums of block files opened lately, by path, up to 16 MB of them (4 bytes a 32 KiB chunk:
   * the checksums of 128 GB of blocks). Why: reading a small file's block by short-circuit opened
   * and read its checksums file each time, which cost a reader of small files over again 15% of its
   * files/s (bench/run verify); a training job reads the same files every epoch. Safe to keep: a
   * block id's bytes never change (new content gets a new data id), so neither do the checksums at
   * its path, while the bytes themselves are still checked against them at every open.
   */
  private static final Cache<Path, BlockChecksums> RECENT_CHECKSUMS =
      Caffeine.newBuilder()
          .maximumWeight(16L << 20)
          .weigher((Path p, BlockChecksums c) -> 64 + 4 * c.chunks())
          .build();

  /** Where a chunk is read to be verified; one per reading thread. */
  private static final ThreadLocal<ByteBuffer> CHUNK =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BlockChecksums.CHUNK));

  private final Path path;
  private final MappedByteBuffer map;
  private final FileChannel channel;

  /**
   * The checksums the worker keeps beside the block file, or null for a block it cached before
   * blocks had them (read unverified). Each chunk a read touches is verified before its bytes are
   * handed on, once for as long as the file stays open: block files are never written in place.
   */
  private final BlockChecksums checksums;

  private final VerifiedChunks verified;

  /** Readers in progress plus one for the owner until {@link #close}. */
  private final AtomicInteger references = new AtomicInteger(1);

  private final AtomicBoolean closed = new AtomicBoolean();

  /** The worker whose tier folder the file was opened in by name, or null (it was asked). */
  private WorkerAddress worker;

  private long workerId;

  private LocalBlockFile(
      Path path, MappedByteBuffer map, FileChannel channel, BlockChecksums checksums) {
    this.path = path;
    this.map = map;
    this.channel = channel;
    this.checksums = checksums;
    this.verified = checksums == null ? null : new VerifiedChunks(checksums.chunks());
  }

  /** Where the block file is. */
  Path path() {
    return path;
  }

  /** Notes that the file was opened in a tier folder of this worker, without asking it. */
  LocalBlockFile openedFor(long id, WorkerAddress address) {
    this.workerId = id;
    this.worker = address;
    return this;
  }

  /** The worker whose folder the file was opened in without asking it; null when it was asked. */
  WorkerAddress worker() {
    return worker;
  }

  long workerId() {
    return workerId;
  }

  /**
   * Opens a block file that must hold at least {@code length} bytes.
   *
   * @param verify whether to verify what is read against the block's checksums
   */
  static LocalBlockFile open(Path path, long length, boolean verify) throws IOException {
    FileChannel ch = FileChannel.open(path, StandardOpenOption.READ);
    try {
      if (ch.size() < length) {
        throw new EOFException(
            "block file " + path + " holds " + ch.size() + " of " + length + " bytes");
      }
      BlockChecksums checksums = verify ? checksumsOf(path, length) : null;
      if (checksums != null && checksums.blockLength() != length) {
        throw new IOException(
            "the checksums of block file "
                + path
                + " are of "
                + checksums.blockLength()
                + " bytes, not "
                + length);
      }
      if (length >= MAP_MIN && length <= Integer.MAX_VALUE) {
        // The channel stays open beside the mapping: large reads into direct buffers use it.
        return new LocalBlockFile(
            path, ch.map(FileChannel.MapMode.READ_ONLY, 0, length), ch, checksums);
      }
      return new LocalBlockFile(path, null, ch, checksums);
    } catch (IOException | RuntimeException e) {
      ch.close();
      throw e;
    }
  }

  /**
   * The checksums of block file {@code path} of {@code length} bytes: those read lately, else read
   * from the worker's checksums file; null when the block has none.
   */
  private static BlockChecksums checksumsOf(Path path, long length) throws IOException {
    BlockChecksums known = RECENT_CHECKSUMS.getIfPresent(path);
    if (known != null && known.blockLength() == length) {
      return known;
    }
    BlockChecksums read = BlockChecksums.read(checksumsOf(path));
    if (read != null && read.blockLength() == length) {
      RECENT_CHECKSUMS.put(path, read);
    }
    return read;
  }

  /** Where the worker keeps the checksums of the block file {@code path} ({@link BlockFiles}). */
  private static Path checksumsOf(Path path) {
    Path blocks = path.getParent();
    Path tier = blocks == null ? null : blocks.getParent();
    if (tier == null) {
      return path.resolveSibling(path.getFileName() + ".checksums");
    }
    return BlockFiles.checksumsDir(tier).resolve(path.getFileName().toString());
  }

  /**
   * Verifies the chunks that {@code len} bytes at {@code offset} fall in, those not verified yet.
   *
   * @return false when the file was closed meanwhile (the caller then reads another way)
   * @throws IOException naming the chunk, when one does not match: the caller reads through the
   *     worker, which finds the same, drops the block and answers from the under store
   */
  boolean verify(long offset, long len) throws IOException {
    if (checksums == null || len <= 0) {
      return true;
    }
    if (!acquire()) {
      return false;
    }
    try {
      checkChunks(offset, len);
      return true;
    } finally {
      release();
    }
  }

  /** Under a reference: verifies the chunks of the range not verified yet. */
  private void checkChunks(long offset, long len) throws IOException {
    checkChunks(offset, len, false);
  }

  /**
   * Under a reference: verifies, by reading them from the file, the chunks of the range not
   * verified yet -- all of them, or with {@code partialOnly} those the range covers only in part: a
   * read checks the chunks it covers whole from the bytes it copied ({@link #checkCopied}), which
   * costs no second read.
   */
  private void checkChunks(long offset, long len, boolean partialOnly) throws IOException {
    if (checksums == null || len <= 0) {
      return;
    }
    int first = checksums.chunkOf(offset);
    int last = checksums.chunkOf(Math.min(checksums.blockLength(), offset + len) - 1);
    for (int c = first; c <= last; c++) {
      if (verified.has(c) || (partialOnly && covers(offset, len, c))) {
        continue;
      }
      if (!checksums.verifyChunk(channel, c, CHUNK.get())) {
        throw mismatch(c);
      }
      verified.add(c);
    }
  }

  /**
   * Verifies the chunks the range covers whole, from {@code copied}: the range's bytes as read,
   * from its position on. A mismatch throws; the caller then discards what it read.
   */
  private void checkCopied(long offset, long len, ByteBuffer copied) throws IOException {
    if (checksums == null || len <= 0) {
      return;
    }
    int first = checksums.chunkOf(offset);
    int last = checksums.chunkOf(Math.min(checksums.blockLength(), offset + len) - 1);
    for (int c = first; c <= last; c++) {
      if (verified.has(c) || !covers(offset, len, c)) {
        continue;
      }
      int at = copied.position() + (int) ((long) c * checksums.chunkSize() - offset);
      ByteBuffer chunk = copied.duplicate().limit(at + checksums.chunkLength(c)).position(at);
      if (!checksums.matches(c, chunk)) {
        throw mismatch(c);
      }
      verified.add(c);
    }
  }

  private boolean covers(long offset, long len, int chunk) {
    long start = (long) chunk * checksums.chunkSize();
    return start >= offset && start + checksums.chunkLength(chunk) <= offset + len;
  }

  private IOException mismatch(int chunk) {
    return new IOException(
        "block file "
            + path
            + " does not match its checksums at chunk "
            + chunk
            + " (bytes from "
            + (long) chunk * checksums.chunkSize()
            + ")");
  }

  /**
   * Copies {@code len} bytes at {@code offset} of the block into {@code buf}; returns false when
   * the file was closed meanwhile (the caller then reads another way).
   *
   * @throws IOException also when a chunk read does not match its checksums ({@link #verify})
   */
  boolean read(long offset, byte[] buf, int off, int len) throws IOException {
    if (!acquire()) {
      return false;
    }
    try {
      checkChunks(offset, len, true);
      if (map != null) {
        map.get((int) offset, buf, off, len);
      } else {
        ByteBuffer target = ByteBuffer.wrap(buf, off, len);
        long pos = offset;
        while (target.hasRemaining()) {
          int n = channel.read(target, pos);
          if (n < 0) {
            throw new EOFException("block file ends at " + pos);
          }
          pos += n;
        }
      }
      checkCopied(offset, len, ByteBuffer.wrap(buf, off, len));
      return true;
    } finally {
      release();
    }
  }

  /**
   * Copies {@code dst.remaining()} bytes at {@code offset} of the block into {@code dst} (one copy
   * when {@code dst} is direct: straight from the mapping, or by the kernel from the file); returns
   * false when the file was closed meanwhile.
   */
  boolean read(long offset, ByteBuffer dst) throws IOException {
    if (!acquire()) {
      return false;
    }
    try {
      int len = dst.remaining();
      checkChunks(offset, len, true);
      ByteBuffer copied = dst.duplicate();
      if (map != null && (len < CHANNEL_READ_MIN || !dst.isDirect())) {
        dst.put(map.slice((int) offset, len));
      } else {
        long pos = offset;
        while (dst.hasRemaining()) {
          int n = channel.read(dst, pos);
          if (n < 0) {
            throw new EOFException("block file ends at " + pos);
          }
          pos += n;
        }
      }
      checkCopied(offset, len, copied);
      return true;
    } finally {
      release();
    }
  }

  private boolean acquire() {
    while (true) {
      int n = references.get();
      if (n == 0) {
        return false;
      }
      if (references.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  private void release() {
    if (references.decrementAndGet() == 0) {
      if (map != null) {
        UNMAPPER.unmap(map);
      }
      try {
        channel.close();
      } catch (IOException e) {
        // Nothing was written; a failed close of a read-only channel loses nothing.
      }
    }
  }

  /** Releases the file once no read is in progress. Idempotent. */
  void close() {
    if (closed.compareAndSet(false, true)) {
      release();
    }
  }

  /**
   * Unmaps a mapping at once. The JDK offers no public call for it before the foreign-memory API
   * (Java 22), and leaving it to the garbage collector would keep address space (and the pages of
   * evicted block files) until some later GC; {@code sun.misc.Unsafe.invokeCleaner} from the
   * jdk.unsupported module is the supported-in-practice way. If it is missing, the mapping is left
   * to the collector.
   */
  private static final class Unmapper {
    private final Object unsafe;
    private final Method invokeCleaner;

    private Unmapper(Object unsafe, Method invokeCleaner) {
      this.unsafe = unsafe;
      this.invokeCleaner = invokeCleaner;
    }

    static Unmapper find() {
      try {
        Class<?> c = Class.forName("sun.misc.Unsafe");
        Field f = c.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        return new Unmapper(f.get(null), c.getMethod("invokeCleaner", ByteBuffer.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        return new Unmapper(null, null);
      }
    }

    void unmap(MappedByteBuffer map) {
      if (invokeCleaner == null) {
        return;
      }
      try {
        invokeCleaner.invoke(unsafe, map);
      } catch (ReflectiveOperationException | RuntimeException e) {
        // Left to the garbage collector.
      }
    }
  }
}
