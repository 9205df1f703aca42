package io.strata.fuse;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;

/**
 * What every file reader of one mount shares: the page cache, the read-ahead threads and the
 * largest read-ahead window. One per mount; {@link #close} stops the read-ahead threads.
 */
final class ReadSettings implements AutoCloseable {
  private final PageCache cache;
  private final ReadAheadPool readAhead;
  private final long maxWindow;

  ReadSettings(PageCache cache, ReadAheadPool readAhead, long maxWindow) {
    this.cache = cache;
    this.readAhead = readAhead;
    this.maxWindow = maxWindow;
  }

  /** From {@code strata.fuse.page.cache.*} and {@code strata.fuse.readahead.*}. */
  static ReadSettings from(StrataConfig conf, MeterRegistry registry) throws StrataException {
    return new ReadSettings(
        PageCache.fromConfig(conf, registry),
        ReadAheadPool.fromConfig(conf),
        conf.getBytes(FuseKeys.READ_AHEAD_MAX));
  }

  /** The shared reader of one open file; closing it closes {@code source}. */
  CachedFileReader open(long fileId, PositionedSource source) {
    return new CachedFileReader(fileId, source, cache, readAhead);
  }

  /** The access pattern of a new handle: no read-ahead until it reads sequentially. */
  ReadPattern newPattern() {
    return new ReadPattern(cache.pageSize(), maxWindow);
  }

  /** Drops the cached pages of a file that was removed or replaced. */
  void forget(long fileId) {
    cache.invalidate(fileId);
  }

  @Override
  public void close() {
    readAhead.close();
  }
}
