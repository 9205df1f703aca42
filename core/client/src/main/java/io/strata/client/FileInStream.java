package io.strata.client;

import io.strata.common.conf.ClientKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Reads one complete Strata file.
 *
 * <p>Two ways to read, with different concurrency guarantees:
 *
 * <ul>
 *   <li>Positioned reads ({@link #read(long, byte[], int, int)}, {@link #readFully}) fetch exactly
 *       the range asked for, never a whole block, and are safe to call from any number of threads
 *       at once on one stream with no lock between them: this is how a FUSE mount shares one stream
 *       per file among its threads.
 *   <li>Sequential reads ({@link #read()}, {@link #read(byte[], int, int)}, {@link #seek}, {@link
 *       #skip}) keep a position. Their state sits behind its own lock, apart from the positioned
 *       path. When successive reads are contiguous the stream reads ahead in chunks that double
 *       from 64 KiB up to {@code strata.client.read.ahead.max}; a read that does not start where
 *       the previous one ended (random access) fetches only what it asked for and resets the
 *       read-ahead.
 * </ul>
 *
 * A worker that fails mid-read is replaced by the next one for the block, or by the under store;
 * the caller sees no error and no byte twice. Reads after {@link #close()} fail.
 */
public final class FileInStream extends InputStream {
  static final int MIN_READ_AHEAD = 64 << 10;

  private final BlockReader reader;
  private final String path;
  private final long length;
  private final int readAheadMax;

  private final ReentrantLock seqLock = new ReentrantLock();
  // Sequential state, guarded by seqLock.
  private long pos;
  private long lastReadEnd = -1;
  private byte[] ahead = new byte[0];
  private long aheadStart;
  private int aheadLen;
  private int nextAhead;

  private volatile boolean closed;
  private final long fileId;

  FileInStream(ClientContext ctx, BlockReader reader, FileInfo file) {
    this.reader = reader;
    this.path = file.getPath();
    this.fileId = file.getFileId();
    this.length = file.getLength();
    this.readAheadMax =
        (int) Math.min(Integer.MAX_VALUE - 8, ctx.conf.getBytes(ClientKeys.READ_AHEAD_MAX));
    this.nextAhead = Math.min(MIN_READ_AHEAD, readAheadMax);
  }

  /** Id of the file (the version) this stream reads. */
  public long fileId() {
    return fileId;
  }

  /** Length of the file in bytes. */
  public long length() {
    return length;
  }

  /**
   * Reads up to {@code len} bytes at {@code position} without moving the stream's position. Returns
   * the number read, which is less than {@code len} only at the end of the file, or -1 when {@code
   * position} is at or past the end. Safe to call concurrently.
   */
  public int read(long position, byte[] buf, int off, int len) throws IOException {
    checkOpen();
    Objects.checkFromIndexSize(off, len, buf.length);
    if (position < 0) {
      throw StrataException.invalidArgument("Negative read position " + position + " in " + path);
    }
    if (len == 0) {
      return 0;
    }
    if (position >= length) {
      return -1;
    }
    int n = (int) Math.min(len, length - position);
    reader.read(position, buf, off, n);
    return n;
  }

  /**
   * Whether a read at {@code position} is served by short-circuit from a block file of a worker on
   * this machine, which this stream has mapped since an earlier read of that block: such a read is
   * a memory copy, so a cache in front of it only adds copies. False at or past the end.
   */
  public boolean readsLocally(long position) {
    return position >= 0 && position < length && !closed && reader.readsLocally(position);
  }

  /**
   * Reads {@code dst.remaining()} bytes at {@code position} when the whole range is in block files
   * of a worker on this machine ({@link #readsLocally}); returns the number read, or -1 (nothing
   * read) when some of it is not local. Into a direct buffer, each byte is copied once (from the
   * mapped block file, or by the kernel from the file). The range must lie in the file. Safe to
   * call concurrently.
   */
  public int readLocally(long position, ByteBuffer dst) throws IOException {
    checkOpen();
    int len = dst.remaining();
    if (position < 0 || position + len > length) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          "Cannot read "
              + len
              + " bytes at "
              + position
              + " of "
              + path
              + ": the file has "
              + length
              + " bytes");
    }
    return reader.readLocally(position, dst) ? len : -1;
  }

  /**
   * Where the bytes from {@code position} lie in a block file of a worker on this machine, up to
   * {@code maxLength} of them and to the end of that block, so that a server can send them straight
   * from that file (sendfile); null when they are not read by short-circuit. The file is immutable
   * and may be evicted at any time: open it, and read the range another way when the open fails.
   * Safe to call concurrently.
   */
  public LocalSegment localSegment(long position, long maxLength) throws IOException {
    checkOpen();
    if (position < 0 || position >= length || maxLength <= 0) {
      return null;
    }
    return reader.localSegment(position, Math.min(maxLength, length - position));
  }

  /** Reads exactly {@code len} bytes at {@code position}, or fails when the file is shorter. */
  public void readFully(long position, byte[] buf, int off, int len) throws IOException {
    checkOpen();
    Objects.checkFromIndexSize(off, len, buf.length);
    if (position < 0 || position + len > length) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          "Cannot read "
              + len
              + " bytes at "
              + position
              + " of "
              + path
              + ": the file has "
              + length
              + " bytes");
    }
    if (len > 0) {
      reader.read(position, buf, off, len);
    }
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    checkOpen();
    Objects.checkFromIndexSize(off, len, b.length);
    if (len == 0) {
      return 0;
    }
    seqLock.lock();
    try {
      if (pos >= length) {
        return -1;
      }
      boolean sequential = pos == lastReadEnd;
      int total = 0;
      while (total < len && pos < length) {
        if (pos >= aheadStart && pos < aheadStart + aheadLen) {
          int k = (int) Math.min(len - total, aheadStart + aheadLen - pos);
          System.arraycopy(ahead, (int) (pos - aheadStart), b, off + total, k);
          pos += k;
          total += k;
          continue;
        }
        int want = (int) Math.min(len - total, length - pos);
        if (!sequential || readAheadMax == 0) {
          nextAhead = Math.min(MIN_READ_AHEAD, readAheadMax);
          reader.read(pos, b, off + total, want);
          pos += want;
          total += want;
          continue;
        }
        int chunk = nextAhead;
        nextAhead = (int) Math.min(readAheadMax, 2L * nextAhead);
        if (want >= chunk) {
          reader.read(pos, b, off + total, want);
          pos += want;
          total += want;
        } else {
          fillAhead((int) Math.min(chunk, length - pos));
        }
      }
      lastReadEnd = pos;
      return total;
    } finally {
      seqLock.unlock();
    }
  }

  private void fillAhead(int n) throws IOException {
    if (ahead.length < n) {
      ahead = new byte[n];
    }
    aheadLen = 0;
    reader.read(pos, ahead, 0, n);
    aheadStart = pos;
    aheadLen = n;
  }

  /** Moves the sequential position; {@code position} may equal the length (end of file). */
  public void seek(long position) throws IOException {
    checkOpen();
    if (position < 0 || position > length) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          "Cannot seek to " + position + " in " + path + ": the file has " + length + " bytes");
    }
    seqLock.lock();
    try {
      pos = position;
    } finally {
      seqLock.unlock();
    }
  }

  /** The sequential position. */
  public long getPos() {
    seqLock.lock();
    try {
      return pos;
    } finally {
      seqLock.unlock();
    }
  }

  @Override
  public long skip(long n) throws IOException {
    checkOpen();
    if (n <= 0) {
      return 0;
    }
    seqLock.lock();
    try {
      long k = Math.min(n, length - pos);
      pos += k;
      return k;
    } finally {
      seqLock.unlock();
    }
  }

  @Override
  public int available() throws IOException {
    checkOpen();
    return (int) Math.min(Integer.MAX_VALUE, length - getPos());
  }

  @Override
  public void close() {
    if (!closed) {
      closed = true;
      reader.close();
    }
  }

  private void checkOpen() throws StrataException {
    if (closed) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, "The stream of " + path + " is closed");
    }
  }
}
