package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MetadataCacheTest {
  final AtomicLong nanos = new AtomicLong(1);
  final Ticker ticker = nanos::get;
  final Map<String, FileInfo> namespace = new HashMap<>();
  final Map<String, Integer> loads = new HashMap<>();
  final MetadataCache.StatusLoader loader = path -> {
    loads.merge(path, 1, Integer::sum);
    FileInfo info = namespace.get(path);
    if (info == null) {
      throw new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
    }
    return info;
  };

  static FileInfo file(long id, long length) {
    return FileInfo.newBuilder().setFileId(id).setLength(length).setName("f").build();
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  @Test
  void aStatusIsLoadedOnceWithinTheTtlAndAgainAfterIt() throws Exception {
    MetadataCache cache = new MetadataCache(loader, Duration.ofSeconds(1), 100, ticker);
    namespace.put("/a", file(1, 10));
    assertEquals(10, cache.get("/a").getLength());
    namespace.put("/a", file(1, 20));
    advance(Duration.ofMillis(900));
    assertEquals(10, cache.get("/a").getLength(), "fresh entry answered from the cache");
    assertEquals(1, loads.get("/a"));
    advance(Duration.ofMillis(200));
    assertEquals(20, cache.get("/a").getLength(), "expired entry loaded again");
    assertEquals(2, loads.get("/a"));
  }

  @Test
  void aMissingPathIsRememberedForTheTtl() throws Exception {
    MetadataCache cache = new MetadataCache(loader, Duration.ofSeconds(1), 100, ticker);
    for (int i = 0; i < 3; i++) {
      StrataException e = assertThrows(StrataException.class, () -> cache.get("/missing"));
      assertEquals(ErrorCode.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("/missing"), e.getMessage());
    }
    assertEquals(1, loads.get("/missing"));
    namespace.put("/missing", file(2, 5));
    advance(Duration.ofSeconds(2));
    assertEquals(5, cache.get("/missing").getLength());
  }

  @Test
  void otherErrorsAreNotCached() {
    int[] calls = new int[1];
    MetadataCache cache = new MetadataCache(path -> {
      calls[0]++;
      throw new StrataException(ErrorCode.UNAVAILABLE, "master down");
    }, Duration.ofMinutes(1), 100, ticker);
    assertThrows(StrataException.class, () -> cache.get("/a"));
    assertThrows(StrataException.class, () -> cache.get("/a"));
    assertEquals(2, calls[0]);
  }

  @Test
  void aZeroTtlTurnsTheCacheOff() throws Exception {
    MetadataCache cache = new MetadataCache(loader, Duration.ZERO, 100, ticker);
    namespace.put("/a", file(1, 10));
    cache.get("/a");
    cache.get("/a");
    cache.put("/a", file(1, 99));
    assertEquals(10, cache.get("/a").getLength());
    assertEquals(3, loads.get("/a"));
    assertFalse(cache.enabled());
  }

  @Test
  void entriesAreBoundedAndCanBeSetOrForgotten() throws Exception {
    MetadataCache cache = new MetadataCache(loader, Duration.ofMinutes(1), 10, ticker);
    for (int i = 0; i < 100; i++) {
      namespace.put("/f" + i, file(i, i));
      cache.get("/f" + i);
    }
    assertTrue(cache.size() <= 10, "entries " + cache.size());
    cache.put("/listed", file(7, 70));
    assertEquals(70, cache.get("/listed").getLength());
    assertEquals(null, loads.get("/listed"));
    cache.invalidate("/listed");
    assertThrows(StrataException.class, () -> cache.get("/listed"));
  }

  @Test
  void fileVersionsKeepTheKernelCacheOnlyForAnUnchangedFile() {
    FileVersions versions = new FileVersions(100);
    FileInfo v1 = file(1, 10).toBuilder().setModificationTimeMs(1000).build();
    assertFalse(versions.openedUnchanged("/a", v1), "first open");
    assertTrue(versions.openedUnchanged("/a", v1));
    assertFalse(versions.openedUnchanged("/a", v1.toBuilder().setLength(11).build()));
    assertFalse(versions.openedUnchanged("/a", v1.toBuilder().setLength(11)
        .setModificationTimeMs(2000).build()));
    assertFalse(versions.openedUnchanged("/a", v1.toBuilder().setLength(11)
        .setModificationTimeMs(2000).setFileId(2).build()));
    assertTrue(versions.openedUnchanged("/a", v1.toBuilder().setLength(11)
        .setModificationTimeMs(2000).setFileId(2).build()));
    assertFalse(versions.openedUnchanged("/b", v1), "another path");
  }
}
