package io.strata.fuse;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A file of computed bytes for reader tests: counts what is fetched, records any request that
 * reaches past the end, and can fail or hold the reads of the read-ahead threads.
 */
final class MemorySource implements PositionedSource {
  final AtomicLong bytesFetched = new AtomicLong();
  final AtomicLong calls = new AtomicLong();
  final AtomicBoolean askedPastEnd = new AtomicBoolean();

  /** When set, reads from read-ahead threads fail. */
  volatile boolean failReadAhead;

  /** When set, every read waits for it first. */
  volatile CountDownLatch gate;

  /** Positions from this one on read as local (a mapped block file of a worker here). */
  volatile long localFrom = Long.MAX_VALUE;

  private final long length;

  MemorySource(long length) {
    this.length = length;
  }

  @Override
  public boolean readsLocally(long position) {
    return position >= localFrom;
  }

  /** The byte at {@code position} of every test file. */
  static byte byteAt(long position) {
    long x = position * 0x9E3779B97F4A7C15L;
    return (byte) (x >>> 40 ^ position >>> 12);
  }

  /** The expected bytes of {@code [position, position + len)}. */
  static byte[] expected(long position, int len) {
    byte[] b = new byte[len];
    for (int i = 0; i < len; i++) {
      b[i] = byteAt(position + i);
    }
    return b;
  }

  @Override
  public int read(long position, byte[] b, int off, int len) throws IOException {
    calls.incrementAndGet();
    CountDownLatch g = gate;
    if (g != null) {
      try {
        g.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted");
      }
    }
    if (failReadAhead && Thread.currentThread().getName().startsWith("strata-fuse-readahead")) {
      throw new IOException("read-ahead failure injected at " + position);
    }
    if (position + len > length) {
      askedPastEnd.set(true);
    }
    if (position >= length) {
      return -1;
    }
    int n = (int) Math.min(len, length - position);
    for (int i = 0; i < n; i++) {
      b[off + i] = byteAt(position + i);
    }
    bytesFetched.addAndGet(n);
    return n;
  }

  @Override
  public long length() {
    return length;
  }
}
