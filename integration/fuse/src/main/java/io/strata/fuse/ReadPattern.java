package io.strata.fuse;

/**
 * The access pattern of one open handle, which decides whether its reads get read-ahead.
 *
 * <p>A read is sequential when it starts within {@code tolerance} bytes of the furthest end of the
 * handle's previous reads (the kernel splits large reads and may deliver the pieces a little out of
 * order); the first read of a handle is sequential when it starts near offset 0. While reads stay
 * sequential the read-ahead window starts at one page and doubles with each read up to {@code
 * maxWindow}; a read anywhere else is random and resets the window to none.
 *
 * <p>Guarantees: each {@link #onRead} returns a read-ahead range, page aligned, that never reaches
 * past the file's length and never repeats a range this handle was given before, until a random
 * read or {@link #readAheadSkipped} resets it. One handle may be read by several kernel threads at
 * once, so the methods are synchronized; the lock is this handle's alone and is held only for the
 * bookkeeping, never during I/O, so it never makes readers of a file wait for each other's fetches.
 */
public final class ReadPattern {
  /** How far from the expected offset a read may start and still count as sequential. */
  public static final long DEFAULT_TOLERANCE = 256 << 10;

  /**
   * What a read should do.
   *
   * @param sequential whether the read continues the handle's previous reads
   * @param aheadFrom first byte (page aligned) to read ahead
   * @param aheadTo end of the read-ahead (a page boundary or the file's length); nothing is read
   *     ahead when it is not above {@code aheadFrom}
   */
  public record Plan(boolean sequential, long aheadFrom, long aheadTo) {
    /** Whether there is anything to read ahead. */
    public boolean readsAhead() {
      return aheadTo > aheadFrom;
    }
  }

  private final long pageSize;
  private final long maxWindow;
  private final long tolerance;

  // Guarded by this.
  private long expected;
  private long window;
  private long aheadEnd;

  /**
   * @param pageSize the page cache's page size: the first window and the alignment of ranges
   * @param maxWindow largest read-ahead window in bytes; 0 turns read-ahead off
   */
  public ReadPattern(int pageSize, long maxWindow) {
    this(pageSize, maxWindow, DEFAULT_TOLERANCE);
  }

  /** As {@link #ReadPattern(int, long)}, with the tolerance of a sequential read's start. */
  public ReadPattern(int pageSize, long maxWindow, long tolerance) {
    if (pageSize <= 0 || maxWindow < 0 || tolerance < 0) {
      throw new IllegalArgumentException(
          "page size "
              + pageSize
              + ", read-ahead max "
              + maxWindow
              + " and tolerance "
              + tolerance
              + " must not be negative");
    }
    this.pageSize = pageSize;
    this.maxWindow = maxWindow;
    this.tolerance = tolerance;
  }

  /**
   * Records a read of {@code size} bytes at {@code offset} of a file of {@code fileLength} bytes
   * and says whether it is sequential and what to read ahead.
   */
  public synchronized Plan onRead(long offset, int size, long fileLength) {
    long end = offset + Math.max(size, 0);
    boolean sequential = offset >= expected - tolerance && offset <= expected + tolerance;
    if (!sequential) {
      expected = end;
      window = 0;
      aheadEnd = 0;
      return new Plan(false, 0, 0);
    }
    expected = Math.max(expected, end);
    window = window == 0 ? Math.min(pageSize, maxWindow) : Math.min(window * 2, maxWindow);
    if (window == 0) {
      return new Plan(true, 0, 0);
    }
    long from = Math.max(roundUp(expected), aheadEnd);
    long to = Math.min(roundUp(expected + window), fileLength);
    if (to <= from) {
      return new Plan(true, from, from);
    }
    aheadEnd = to;
    return new Plan(true, from, to);
  }

  /**
   * Tells the handle that read-ahead from {@code from} on was not done (the queue was full), so
   * that its next sequential read asks for it again.
   */
  public synchronized void readAheadSkipped(long from) {
    aheadEnd = Math.min(aheadEnd, from);
  }

  /** The current read-ahead window in bytes (0 after a random read). */
  public synchronized long window() {
    return window;
  }

  private long roundUp(long offset) {
    long rem = offset % pageSize;
    return rem == 0 ? offset : offset - rem + pageSize;
  }
}
