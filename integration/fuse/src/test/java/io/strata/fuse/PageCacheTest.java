package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PageCacheTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  @Test
  void pageSizeMustBeAPowerOfTwoOfAtLeast4k() throws Exception {
    for (long bad : new long[] {0, 512, 4095, 5000, 3 << 20, 128L << 20}) {
      StrataException e =
          assertThrows(
              StrataException.class,
              () -> new PageCache(1 << 20, bad, new SimpleMeterRegistry()),
              "page size " + bad);
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains(FuseKeys.PAGE_CACHE_PAGE_SIZE.name()), e.getMessage());
    }
    assertEquals(4096, new PageCache(1 << 20, 4096, new SimpleMeterRegistry()).pageSize());
  }

  @Test
  void aBadPageSizeInTheConfigurationNamesTheKey() {
    StrataConfig conf = StrataConfig.load(Map.of(FuseKeys.PAGE_CACHE_PAGE_SIZE.name(), "3000"));
    StrataException e =
        assertThrows(StrataException.class, () -> PageCache.fromConfig(conf, registry));
    assertTrue(e.getMessage().contains("strata.fuse.page.cache.page.size"), e.getMessage());
  }

  @Test
  void theDefaultsMakeAnEnabledCache() throws Exception {
    PageCache cache = PageCache.fromConfig(StrataConfig.load(Map.of()), registry);
    assertTrue(cache.enabled());
    assertEquals(256 * 1024, cache.pageSize());
  }

  @Test
  void theBoundInBytesIsRespected() throws Exception {
    PageCache cache = new PageCache(64 * 1024, 4096, registry);
    for (int i = 0; i < 200; i++) {
      cache.put(1, i, new byte[4096]);
    }
    // A short last page weighs its own length.
    cache.put(2, 0, new byte[100]);
    assertTrue(cache.cachedBytes() <= 64 * 1024, "held " + cache.cachedBytes());
    assertTrue(cache.cachedBytes() > 0);
    assertEquals(
        cache.cachedBytes(), registry.get(MetricNames.FUSE_PAGE_CACHE_USED).gauge().value(), 0.0);
  }

  @Test
  void aCapacityOfZeroHoldsNothing() throws Exception {
    PageCache cache = new PageCache(0, 4096, registry);
    assertFalse(cache.enabled());
    cache.put(1, 0, new byte[4096]);
    assertNull(cache.lookup(1, 0));
    assertEquals(0, cache.cachedBytes());
  }

  @Test
  void lookupsCountHitsAndMissesOnTheRegistry() throws Exception {
    PageCache cache = new PageCache(1 << 20, 4096, registry);
    byte[] page = new byte[4096];
    page[7] = 42;
    cache.put(5, 3, page);
    assertArrayEquals(page, cache.lookup(5, 3));
    assertNull(cache.lookup(5, 4));
    assertNull(cache.lookup(6, 3));
    // Read-ahead's peeks are not counted.
    assertNotNull(cache.peek(5, 3));
    assertEquals(1, cache.hits());
    assertEquals(2, cache.misses());
    assertEquals(1.0, registry.get(MetricNames.FUSE_PAGE_CACHE_HITS).counter().count());
    assertEquals(2.0, registry.get(MetricNames.FUSE_PAGE_CACHE_MISSES).counter().count());
  }

  @Test
  void invalidateDropsOnlyThatFilesPages() throws Exception {
    PageCache cache = new PageCache(1 << 20, 4096, registry);
    for (int i = 0; i < 10; i++) {
      cache.put(1, i, new byte[4096]);
      cache.put(2, i, new byte[4096]);
    }
    cache.invalidate(1);
    for (int i = 0; i < 10; i++) {
      assertNull(cache.peek(1, i));
      assertNotNull(cache.peek(2, i));
    }
    assertEquals(10 * 4096, cache.cachedBytes());
  }

  @Test
  void theMetersHaveTheirPrometheusNames() throws Exception {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    PageCache cache = new PageCache(1 << 20, 4096, prometheus);
    cache.recordSource(4096);
    String scrape = prometheus.scrape();
    for (String name :
        new String[] {
          "strata_fuse_page_cache_hits_total",
          "strata_fuse_page_cache_misses_total",
          "strata_fuse_page_cache_used_bytes",
          "strata_fuse_read_bytes_total",
          "strata_fuse_read_source_bytes_total 4096.0",
          "strata_fuse_readahead_bytes_total",
          "strata_fuse_readahead_skipped_total"
        }) {
      assertTrue(scrape.contains("\n" + name), name + " missing from " + scrape);
    }
  }

  @Test
  void pageOfMapsOffsetsToPages() throws Exception {
    PageCache cache = new PageCache(1 << 20, 8192, registry);
    assertEquals(0, cache.pageOf(0));
    assertEquals(0, cache.pageOf(8191));
    assertEquals(1, cache.pageOf(8192));
    assertEquals((1L << 40) / 8192, cache.pageOf(1L << 40));
  }
}
