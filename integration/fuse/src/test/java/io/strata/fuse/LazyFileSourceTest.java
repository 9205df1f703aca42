package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LazyFileSourceTest {
  @Test
  void theStreamIsOpenedByTheFirstReadOnlyAndOnce() throws Exception {
    MemorySource file = new MemorySource(10_000);
    AtomicInteger opens = new AtomicInteger();
    LazyFileSource lazy =
        new LazyFileSource(
            "/f",
            7,
            10_000,
            () -> {
              opens.incrementAndGet();
              return new LazyFileSource.Opened(7, file);
            });
    assertEquals(10_000, lazy.length());
    assertFalse(lazy.opened());
    assertEquals(0, opens.get(), "opening costs nothing until a read");
    byte[] b = new byte[100];
    assertEquals(100, lazy.read(500, b, 0, 100));
    assertArrayEquals(MemorySource.expected(500, 100), b);
    lazy.read(0, b, 0, 100);
    assertEquals(1, opens.get());
    lazy.close();
    assertThrows(IOException.class, () -> lazy.read(0, b, 0, 1));
  }

  @Test
  void anotherVersionAtTheFirstReadIsStale() throws Exception {
    MemorySource replaced = new MemorySource(10_000);
    LazyFileSource lazy =
        new LazyFileSource("/f", 7, 10_000, () -> new LazyFileSource.Opened(8, replaced));
    StrataException e =
        assertThrows(StrataException.class, () -> lazy.read(0, new byte[10], 0, 10));
    assertEquals(ErrorCode.STALE, e.code());
    assertTrue(e.getMessage().contains("/f was replaced"), e.getMessage());
    assertFalse(lazy.opened());
  }

  @Test
  void closingAnUnreadSourceOpensNothing() throws Exception {
    AtomicInteger opens = new AtomicInteger();
    LazyFileSource lazy =
        new LazyFileSource(
            "/f",
            7,
            1,
            () -> {
              opens.incrementAndGet();
              return new LazyFileSource.Opened(7, new MemorySource(1));
            });
    lazy.close();
    assertEquals(0, opens.get());
    assertThrows(IOException.class, () -> lazy.read(0, new byte[1], 0, 1));
  }
}
