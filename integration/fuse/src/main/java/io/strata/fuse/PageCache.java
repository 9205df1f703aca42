package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;

/**
 * The mount's user-space page cache: pages of file data keyed by file id and page index, shared by
 * every open file of one mount, and the meters of the mount's read path.
 *
 * <p>Guarantees: the bytes held never exceed {@code capacityBytes} once Caffeine's pending
 * maintenance has run (pages are weighed by their length, and the last page of a file is held cut
 * at the file's end, so a 20 KiB file costs 20 KiB); frequently and recently used pages are kept
 * first (W-TinyLFU). A capacity of 0 turns the cache off: nothing is held and every read goes to
 * the source. Page sizes are powers of two of at least 4 KiB. Safe for concurrent use; lookups take
 * no lock.
 *
 * <p>Meters (see docs/metrics.md): page hits and misses of reads, bytes held, bytes returned to
 * reads, bytes fetched from the source, bytes fetched by read-ahead and skipped read-aheads.
 */
public final class PageCache {
  /** Smallest page: the kernel's own page. */
  public static final int MIN_PAGE_SIZE = 4096;

  /** Largest page: a page is one array, and fetches of one page should stay short. */
  public static final int MAX_PAGE_SIZE = 64 << 20;

  private record PageKey(long fileId, long index) {}

  private final int pageSize;
  private final int pageShift;
  private final Cache<PageKey, byte[]> pages;
  private final Counter hits;
  private final Counter misses;
  private final Counter returnedBytes;
  private final Counter sourceBytes;
  private final Counter readAheadBytes;
  private final Counter readAheadSkipped;
  private final Counter localBytes;

  /**
   * @param capacityBytes most bytes of pages held; 0 turns the cache off
   * @param pageSize bytes of a page, a power of two from 4 KiB to 64 MiB
   * @param registry where the meters are registered
   * @throws StrataException INVALID_ARGUMENT for a bad size, naming the key to fix
   */
  public PageCache(long capacityBytes, long pageSize, MeterRegistry registry)
      throws StrataException {
    if (pageSize < MIN_PAGE_SIZE || pageSize > MAX_PAGE_SIZE || Long.bitCount(pageSize) != 1) {
      throw StrataException.invalidArgument(
          "FUSE page size must be a power of two from 4KB to"
              + " 64MB (e.g. 256KB), got "
              + pageSize
              + " bytes; set "
              + FuseKeys.PAGE_CACHE_PAGE_SIZE.name());
    }
    if (capacityBytes < 0) {
      throw StrataException.invalidArgument(
          "FUSE page cache size must be >= 0 bytes (0 turns"
              + " it off), got "
              + capacityBytes
              + "; set "
              + FuseKeys.PAGE_CACHE_SIZE.name());
    }
    this.pageSize = (int) pageSize;
    this.pageShift = Long.numberOfTrailingZeros(pageSize);
    this.pages =
        capacityBytes == 0
            ? null
            : Caffeine.newBuilder()
                .maximumWeight(capacityBytes)
                .weigher((PageKey k, byte[] page) -> page.length)
                // Maintenance runs on the calling thread: it is short, and needs no pool thread.
                .executor(Runnable::run)
                .build();
    this.hits =
        Counter.builder(MetricNames.FUSE_PAGE_CACHE_HITS)
            .description("Page lookups of FUSE reads served by the page cache")
            .register(registry);
    this.misses =
        Counter.builder(MetricNames.FUSE_PAGE_CACHE_MISSES)
            .description("Page lookups of FUSE reads the page cache could not serve")
            .register(registry);
    Gauge.builder(MetricNames.FUSE_PAGE_CACHE_USED, this, PageCache::cachedBytes)
        .baseUnit("bytes")
        .description("Bytes held by the FUSE page cache")
        .register(registry);
    this.returnedBytes =
        bytes(registry, MetricNames.FUSE_READ_BYTES, "Bytes returned to FUSE read calls");
    this.sourceBytes =
        bytes(
            registry,
            MetricNames.FUSE_READ_SOURCE_BYTES,
            "Bytes the FUSE mount fetched from workers or under stores, read-ahead included");
    this.readAheadBytes =
        bytes(
            registry,
            MetricNames.FUSE_READ_AHEAD_BYTES,
            "Bytes the FUSE mount fetched by read-ahead");
    this.readAheadSkipped =
        Counter.builder(MetricNames.FUSE_READ_AHEAD_SKIPPED)
            .description("Read-ahead fetches skipped because the read-ahead queue was full")
            .register(registry);
    this.localBytes =
        bytes(
            registry,
            MetricNames.FUSE_READ_LOCAL_BYTES,
            "Bytes read straight from local workers' mapped block files, past the page cache");
  }

  /** The mount's cache from {@code strata.fuse.page.cache.size} and {@code .page.size}. */
  public static PageCache fromConfig(StrataConfig conf, MeterRegistry registry)
      throws StrataException {
    return new PageCache(
        conf.getBytes(FuseKeys.PAGE_CACHE_SIZE),
        conf.getBytes(FuseKeys.PAGE_CACHE_PAGE_SIZE),
        registry);
  }

  private static Counter bytes(MeterRegistry registry, String name, String description) {
    return Counter.builder(name).baseUnit("bytes").description(description).register(registry);
  }

  /** Bytes of a page. */
  public int pageSize() {
    return pageSize;
  }

  /** Index of the page holding byte {@code offset}. */
  long pageOf(long offset) {
    return offset >>> pageShift;
  }

  /** Whether pages are held at all (false with a capacity of 0). */
  public boolean enabled() {
    return pages != null;
  }

  /** A page of a read, counted as a hit or a miss; null when not held. */
  byte[] lookup(long fileId, long index) {
    byte[] page = peek(fileId, index);
    (page == null ? misses : hits).increment();
    return page;
  }

  /** A page, without counting the lookup (for read-ahead); null when not held. */
  byte[] peek(long fileId, long index) {
    return pages == null ? null : pages.getIfPresent(new PageKey(fileId, index));
  }

  /** Holds a page: {@code pageSize} bytes, or fewer for the last page of a file. */
  void put(long fileId, long index, byte[] page) {
    if (pages != null) {
      pages.put(new PageKey(fileId, index), page);
    }
  }

  /** Drops every page of a file (its content changed, or it is gone). */
  public void invalidate(long fileId) {
    if (pages != null) {
      pages.asMap().keySet().removeIf(k -> k.fileId() == fileId);
    }
  }

  /** Bytes held now, after pending evictions have run. */
  public long cachedBytes() {
    if (pages == null) {
      return 0;
    }
    pages.cleanUp();
    return pages.policy().eviction().orElseThrow().weightedSize().orElse(0);
  }

  /** Page lookups of reads served from the cache, since the cache was made. */
  public long hits() {
    return (long) hits.count();
  }

  /** Page lookups of reads the cache could not serve. */
  public long misses() {
    return (long) misses.count();
  }

  /** Bytes fetched from the source, read-ahead included. */
  public long sourceBytes() {
    return (long) sourceBytes.count();
  }

  /** Bytes returned to reads. */
  public long returnedBytes() {
    return (long) returnedBytes.count();
  }

  /** Bytes fetched by read-ahead. */
  public long readAheadBytes() {
    return (long) readAheadBytes.count();
  }

  void recordReturned(long n) {
    returnedBytes.increment(n);
  }

  void recordSource(long n) {
    sourceBytes.increment(n);
  }

  void recordReadAhead(long n) {
    readAheadBytes.increment(n);
  }

  void recordLocal(long n) {
    localBytes.increment(n);
  }

  void recordReadAheadSkipped() {
    readAheadSkipped.increment();
  }
}
