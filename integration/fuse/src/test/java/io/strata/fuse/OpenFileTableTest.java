package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.io.Closeable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class OpenFileTableTest {
  static final class Reader implements Closeable {
    final AtomicInteger closes = new AtomicInteger();

    @Override
    public void close() {
      closes.incrementAndGet();
    }
  }

  @Test
  void handlesOfOneFileShareOneReaderClosedByTheLastRelease() throws Exception {
    OpenFileTable<Reader> table = new OpenFileTable<>();
    AtomicInteger opened = new AtomicInteger();
    Reader a =
        table.acquire(
            7,
            () -> {
              opened.incrementAndGet();
              return new Reader();
            });
    Reader b =
        table.acquire(
            7,
            () -> {
              opened.incrementAndGet();
              return new Reader();
            });
    assertSame(a, b);
    assertEquals(1, opened.get());
    assertEquals(2, table.references(7));
    table.release(7);
    assertEquals(0, a.closes.get());
    assertSame(a, table.reader(7));
    table.release(7);
    assertEquals(1, a.closes.get());
    assertNull(table.reader(7));
    assertEquals(0, table.size());
    table.release(7);
    assertEquals(1, a.closes.get(), "an extra release closed the reader again");
  }

  @Test
  void concurrentOpensOfOneFileEndWithOneReaderAndCloseTheLosers() throws Exception {
    OpenFileTable<Reader> table = new OpenFileTable<>();
    List<Reader> created = new ArrayList<>();
    int threads = 8;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<Reader>> got = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        got.add(
            pool.submit(
                () -> {
                  start.await();
                  return table.acquire(
                      1,
                      () -> {
                        Reader r = new Reader();
                        synchronized (created) {
                          created.add(r);
                        }
                        return r;
                      });
                }));
      }
      start.countDown();
      Reader shared = got.get(0).get(60, TimeUnit.SECONDS);
      for (Future<Reader> f : got) {
        assertSame(shared, f.get(60, TimeUnit.SECONDS));
      }
      assertEquals(threads, table.references(1));
      for (Reader r : created) {
        assertEquals(r == shared ? 0 : 1, r.closes.get());
      }
      for (int i = 0; i < threads; i++) {
        table.release(1);
      }
      assertEquals(1, shared.closes.get());
    } finally {
      pool.shutdownNow();
    }
  }
}
