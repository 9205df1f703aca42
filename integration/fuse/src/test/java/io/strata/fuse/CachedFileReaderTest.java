package io.strata.fuse;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.metrics.MetricNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CachedFileReaderTest {
  private static final int PAGE = 64 * 1024;
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
  }

  private ReadAheadPool pool(int threads, int queue) {
    ReadAheadPool p = new ReadAheadPool(threads, queue);
    toClose.add(p);
    return p;
  }

  private static void assertReads(
      CachedFileReader reader, ReadPattern handle, long offset, int size) throws Exception {
    byte[] buf = new byte[size];
    int n = reader.read(offset, buf, 0, size, handle);
    int want = (int) Math.min(size, reader.length() - offset);
    assertEquals(want, n, "bytes read at " + offset);
    assertArrayEquals(
        MemorySource.expected(offset, want), Arrays.copyOf(buf, n), "bytes at " + offset);
  }

  @Test
  void readsOfLocallyMappedBytesGoStraightToTheSourceAndLeaveTheCacheToTheRest() throws Exception {
    long length = 4L << 20;
    MemorySource source = new MemorySource(length);
    source.localFrom = 2L << 20;
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(1, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);

    for (long at = 2L << 20; at < length; at += 128 * 1024) {
      assertReads(reader, handle, at, 128 * 1024);
    }
    assertEquals(2L << 20, source.bytesFetched.get(), "each local byte fetched once, as asked");
    assertEquals(0, cache.cachedBytes(), "no page kept of local bytes");
    assertEquals(0, cache.readAheadBytes(), "no read-ahead of local bytes");
    assertEquals(2L << 20, registry.get("strata.fuse.read.local").counter().count());

    // A read across the boundary is not wholly local: the cache path serves it (exactly the
    // bytes asked, as for any random read), and it does not count as local.
    assertReads(reader, handle, (2L << 20) - 4096, 8192);
    assertEquals((2L << 20) + 8192, source.bytesFetched.get());
    assertEquals(2L << 20, registry.get("strata.fuse.read.local").counter().count());
    // Bytes before the boundary are the cache's as ever: a sequential read keeps its pages.
    ReadPattern other = new ReadPattern(PAGE, 1 << 20);
    assertReads(reader, other, 0, 128 * 1024);
    assertTrue(cache.cachedBytes() >= 128 * 1024);
  }

  @Test
  void aSequentialReadFillsPagesAndReadsAhead() throws Exception {
    long length = 4L << 20;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(1, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);

    assertReads(reader, handle, 0, 128 * 1024);
    assertReads(reader, handle, 128 * 1024, 128 * 1024);
    // The pages of both reads are held whole, and read-ahead fetches pages beyond them.
    assertNotNull(cache.peek(1, 0));
    assertNotNull(cache.peek(1, 1));
    await("read-ahead of page 4")
        .atMost(Duration.ofSeconds(30))
        .until(() -> cache.peek(1, 4) != null);
    assertTrue(cache.readAheadBytes() > 0);

    for (long off = 256 * 1024; off < length; off += 128 * 1024) {
      assertReads(reader, handle, off, 128 * 1024);
    }
    // Every byte came from the source exactly once, most of it ahead of the reads.
    assertEquals(length, source.bytesFetched.get());
    assertEquals(length, cache.sourceBytes());
    assertEquals(length, cache.returnedBytes());
    assertTrue(cache.hits() > 0);
    assertFalse(source.askedPastEnd.get());
  }

  @Test
  void randomReadsOf4kFetchExactly4k() throws Exception {
    long length = 1L << 30;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, 256 * 1024, registry);
    CachedFileReader reader = new CachedFileReader(2, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(cache.pageSize(), 8 << 20);
    Random random = new Random(42);
    long previousEnd = 0;
    int reads = 0;
    for (int i = 0; i < 5000 && reads < 1000; i++) {
      long off = (random.nextLong() & Long.MAX_VALUE) % (length - 4096);
      // A read next to the previous one would be sequential, which is not this test's pattern.
      if (Math.abs(off - previousEnd) <= 2 * ReadPattern.DEFAULT_TOLERANCE) {
        continue;
      }
      assertReads(reader, handle, off, 4096);
      previousEnd = off + 4096;
      reads++;
    }
    assertEquals(1000, reads);
    assertEquals(1000L * 4096, source.bytesFetched.get(), "read amplification must be 1.0");
    assertEquals(cache.returnedBytes(), cache.sourceBytes());
    assertEquals(0, cache.readAheadBytes());
  }

  @Test
  void aRandomReadKeepsTheWholePagesItFetched() throws Exception {
    long length = 8L << 20;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(3, source, cache, pool(1, 4));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);
    // From the middle of page 20 to the middle of page 23: pages 21 and 22 are whole.
    long off = 20L * PAGE + 100;
    int size = 3 * PAGE;
    assertReads(reader, handle, off, size);
    assertEquals(size, source.bytesFetched.get());
    assertNull(cache.peek(3, 20));
    assertNotNull(cache.peek(3, 21));
    assertNotNull(cache.peek(3, 22));
    assertNull(cache.peek(3, 23));
    // Read again: only the bytes of the partial pages are fetched.
    assertReads(reader, new ReadPattern(PAGE, 1 << 20), off, size);
    assertEquals(2L * size - 2 * PAGE, source.bytesFetched.get());
  }

  @Test
  void theLastPartialPageIsRightAndNothingPastTheEndIsAsked() throws Exception {
    long length = 10L * PAGE + 123;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(4, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);
    for (long off = 0; off < length; off += 100_000) {
      assertReads(reader, handle, off, 100_000);
    }
    assertEquals(-1, reader.read(length, new byte[10], 0, 10, handle));
    assertEquals(0, reader.read(5, new byte[10], 0, 0, handle));
    byte[] last = cache.peek(4, 10);
    assertNotNull(last);
    assertEquals(123, last.length);
    // A random read across the end from a fresh handle gets the tail only.
    assertReads(reader, new ReadPattern(PAGE, 1 << 20), length - 50, 4096);
    assertReads(reader, new ReadPattern(PAGE, 1 << 20), length - 5000, 4096);
    assertFalse(source.askedPastEnd.get());
  }

  @Test
  void withTheCacheOffEveryReadGoesToTheSourceExactly() throws Exception {
    long length = 2L << 20;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(0, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(5, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);
    for (long off = 0; off < length; off += 10_000) {
      assertReads(reader, handle, off, 10_000);
    }
    assertReads(reader, handle, 0, 10_000);
    assertEquals(length + 10_000, source.bytesFetched.get());
    assertEquals(0, cache.readAheadBytes());
    assertEquals(0, cache.cachedBytes());
  }

  @Test
  void eightThreadsReadingRandomRangesAllGetTheRightBytes() throws Exception {
    long length = 16L << 20;
    MemorySource source = new MemorySource(length);
    // A cache smaller than the file, so pages are evicted while others are read.
    PageCache cache = new PageCache(4L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(6, source, cache, pool(2, 16));
    ExecutorService threads = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long seed = t;
        Callable<Integer> work =
            () -> {
              Random random = new Random(seed);
              ReadPattern handle = new ReadPattern(PAGE, 2 << 20);
              long next = (random.nextLong() & Long.MAX_VALUE) % length;
              for (int i = 0; i < 120; i++) {
                // Runs of sequential reads broken by jumps, of sizes from 1 byte to 200 KB.
                long off =
                    random.nextInt(4) == 0 ? (random.nextLong() & Long.MAX_VALUE) % length : next;
                int size = 1 + random.nextInt(200_000);
                assertReads(reader, handle, off, size);
                next = Math.min(length - 1, off + size);
              }
              return 120;
            };
        results.add(threads.submit(work));
      }
      for (Future<Integer> r : results) {
        assertEquals(120, r.get());
      }
    } finally {
      threads.shutdownNow();
    }
    // Read-aheads queued by the last reads may still be adding pages; once they are done and
    // the cache's maintenance has run, it holds no more than its capacity.
    await("the page cache back within its capacity")
        .atMost(Duration.ofSeconds(30))
        .until(() -> cache.cachedBytes() <= 4L << 20);
    assertFalse(source.askedPastEnd.get());
  }

  @Test
  void concurrentMissesOfOnePageFetchItOnce() throws Exception {
    MemorySource source = new MemorySource(4L << 20);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    // No read-ahead: only the readers fetch.
    CachedFileReader reader = new CachedFileReader(7, source, cache, pool(0, 1));
    CountDownLatch gate = new CountDownLatch(1);
    source.gate = gate;
    List<Thread> readers = new ArrayList<>();
    List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
    for (int t = 0; t < 4; t++) {
      int at = t * 1000;
      Thread th =
          new Thread(
              () -> {
                try {
                  assertReads(reader, new ReadPattern(PAGE, 0), at, 1000);
                } catch (Throwable e) {
                  errors.add(e);
                }
              });
      readers.add(th);
      th.start();
    }
    // One reader fetches (held at the gate), the other three wait for its page.
    await("every reader waiting")
        .atMost(Duration.ofSeconds(30))
        .until(() -> readers.stream().allMatch(th -> th.getState() == Thread.State.WAITING));
    gate.countDown();
    for (Thread th : readers) {
      th.join();
    }
    assertEquals(List.of(), errors);
    assertEquals(1, source.calls.get());
    assertEquals(PAGE, source.bytesFetched.get());
  }

  @Test
  void invalidateDropsTheFilesPages() throws Exception {
    long length = 1L << 20;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(8, source, cache, pool(1, 16));
    for (long off = 0; off < length; off += PAGE) {
      assertReads(reader, new ReadPattern(PAGE, 0), off, PAGE);
    }
    assertEquals(length, cache.cachedBytes());
    assertReads(reader, new ReadPattern(PAGE, 0), 0, PAGE);
    assertEquals(length, source.bytesFetched.get());

    cache.invalidate(8);
    assertEquals(0, cache.cachedBytes());
    assertReads(reader, new ReadPattern(PAGE, 0), 0, PAGE);
    assertEquals(length + PAGE, source.bytesFetched.get());
  }

  @Test
  void aFailedReadAheadIsDroppedAndTheReadFetchesItself() throws Exception {
    long length = 2L << 20;
    MemorySource source = new MemorySource(length);
    source.failReadAhead = true;
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    CachedFileReader reader = new CachedFileReader(9, source, cache, pool(2, 16));
    ReadPattern handle = new ReadPattern(PAGE, 1 << 20);
    for (long off = 0; off < length; off += 128 * 1024) {
      assertReads(reader, handle, off, 128 * 1024);
    }
    assertEquals(0, cache.readAheadBytes());
    assertEquals(length, cache.returnedBytes());
  }

  @Test
  void aFullReadAheadQueueSkipsReadAheadInsteadOfBlocking() throws Exception {
    long length = 2L << 20;
    MemorySource source = new MemorySource(length);
    PageCache cache = new PageCache(64L << 20, PAGE, registry);
    ReadAheadPool pool = pool(1, 1);
    CachedFileReader reader = new CachedFileReader(10, source, cache, pool);
    // Occupy the only thread and the only queue slot.
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch running = new CountDownLatch(1);
    Runnable hold =
        () -> {
          running.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        };
    assertTrue(pool.trySubmit(hold));
    running.await();
    assertTrue(pool.trySubmit(hold));
    try {
      ReadPattern handle = new ReadPattern(PAGE, 1 << 20);
      for (long off = 0; off < length; off += 128 * 1024) {
        assertReads(reader, handle, off, 128 * 1024);
      }
      assertEquals(0, cache.readAheadBytes());
      assertTrue(registry.get(MetricNames.FUSE_READ_AHEAD_SKIPPED).counter().count() > 0);
    } finally {
      release.countDown();
    }
  }

  @Test
  void closingTheReaderClosesItsSource() throws Exception {
    boolean[] closed = new boolean[1];
    PositionedSource source =
        new PositionedSource() {
          @Override
          public int read(long position, byte[] b, int off, int len) {
            return len;
          }

          @Override
          public long length() {
            return 10;
          }

          @Override
          public void close() {
            closed[0] = true;
          }
        };
    new CachedFileReader(11, source, new PageCache(0, PAGE, registry), pool(0, 1)).close();
    assertTrue(closed[0]);
  }
}
