package io.strata.worker.data;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.WorkerCacheStats;
import java.util.concurrent.atomic.LongAdder;

/**
 * Cumulative counts of the data channel's cache hits and misses and of the bytes served from each
 * source. The same counts feed the published metrics and the statistics in heartbeats, so the two
 * never disagree.
 */
public final class ReadMetrics {
  private final LongAdder hits = new LongAdder();
  private final LongAdder misses = new LongAdder();
  private final LongAdder cacheBytes = new LongAdder();
  private final LongAdder ufsBytes = new LongAdder();
  private final LongAdder ufsCalls = new LongAdder();

  public ReadMetrics(MeterRegistry registry) {
    FunctionCounter.builder(MetricNames.WORKER_CACHE_HITS, hits, LongAdder::doubleValue)
        .description("Block reads served from a tier")
        .register(registry);
    FunctionCounter.builder(MetricNames.WORKER_CACHE_MISSES, misses, LongAdder::doubleValue)
        .description("Block reads that went to the under store")
        .register(registry);
    FunctionCounter.builder(MetricNames.WORKER_READ_CACHE_BYTES, cacheBytes, LongAdder::doubleValue)
        .baseUnit("bytes")
        .description("Bytes served from the worker's tiers")
        .register(registry);
    FunctionCounter.builder(MetricNames.WORKER_READ_UFS_BYTES, ufsBytes, LongAdder::doubleValue)
        .baseUnit("bytes")
        .description("Bytes served from under stores")
        .register(registry);
    FunctionCounter.builder(MetricNames.WORKER_READ_UFS_CALLS, ufsCalls, LongAdder::doubleValue)
        .description(
            "Under-store reads made for client reads and the copies of blocks they" + " missed")
        .register(registry);
  }

  void hit() {
    hits.increment();
  }

  void miss() {
    misses.increment();
  }

  void cacheBytes(long n) {
    cacheBytes.add(n);
  }

  void ufsBytes(long n) {
    ufsBytes.add(n);
  }

  /**
   * Reads that clients on this machine made from the worker's block files directly, reported in
   * batches: each block opened counts as a hit, and the bytes as served from the cache.
   */
  public void localReads(int blocks, long bytes) {
    hits.add(blocks);
    cacheBytes.add(bytes);
  }

  /** One read call to an under store, for a client or a copy of a block it missed. */
  void ufsCall() {
    ufsCalls.increment();
  }

  /** The counts so far, with the store's evictions, as reported to the master. */
  public WorkerCacheStats snapshot(long blocksEvicted) {
    return WorkerCacheStats.newBuilder()
        .setHits(hits.sum())
        .setMisses(misses.sum())
        .setBytesFromCache(cacheBytes.sum())
        .setBytesFromUfs(ufsBytes.sum())
        .setBlocksEvicted(blocksEvicted)
        .build();
  }
}
