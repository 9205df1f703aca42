package io.strata.client;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of one {@link FileSystem}: bytes read by short-circuit, from workers over the network
 * and straight from under stores, bytes written, and read retries (a worker that failed mid-read
 * and was replaced by another source). Counts only grow; they are cheap to update from many
 * threads. {@link #bindTo} publishes them to a Micrometer registry under the {@code
 * strata.client.*} names of {@link MetricNames}.
 */
public final class ClientMetrics {
  private final LongAdder shortCircuitBytes = new LongAdder();
  private final LongAdder remoteBytes = new LongAdder();
  private final LongAdder ufsBytes = new LongAdder();
  private final LongAdder retries = new LongAdder();
  private final LongAdder writtenBytes = new LongAdder();
  private final LongAdder cachedOnWriteBytes = new LongAdder();
  private final LongAdder cacheOnWriteFailures = new LongAdder();

  /** Bytes read directly from the block files of a worker on this host. */
  public long shortCircuitBytes() {
    return shortCircuitBytes.sum();
  }

  /** Bytes read from workers over the data channel. */
  public long remoteBytes() {
    return remoteBytes.sum();
  }

  /** Bytes read straight from under stores because no worker could serve them. */
  public long ufsBytes() {
    return ufsBytes.sum();
  }

  /** Times a read moved on to another source after a worker failed. */
  public long retries() {
    return retries.sum();
  }

  /** Bytes written to files through workers. */
  public long writtenBytes() {
    return writtenBytes.sum();
  }

  /** Bytes of written files cached on workers before their close returned (CACHE_THROUGH). */
  public long cachedOnWriteBytes() {
    return cachedOnWriteBytes.sum();
  }

  /** Blocks of written files that a worker could not cache at close (CACHE_THROUGH). */
  public long cacheOnWriteFailures() {
    return cacheOnWriteFailures.sum();
  }

  void addCachedOnWrite(long n) {
    cachedOnWriteBytes.add(n);
  }

  void addCacheOnWriteFailures(long n) {
    cacheOnWriteFailures.add(n);
  }

  void addShortCircuit(long n) {
    shortCircuitBytes.add(n);
  }

  void addRemote(long n) {
    remoteBytes.add(n);
  }

  void addUfs(long n) {
    ufsBytes.add(n);
  }

  void addRetry() {
    retries.increment();
  }

  void addWritten(long n) {
    writtenBytes.add(n);
  }

  /** Publishes the counters to a registry (a process that exposes /metrics calls this once). */
  public void bindTo(MeterRegistry registry) {
    bytes(
        registry,
        MetricNames.CLIENT_READ_SHORT_CIRCUIT_BYTES,
        shortCircuitBytes,
        "Bytes read by short-circuit from block files on this host");
    bytes(
        registry,
        MetricNames.CLIENT_READ_REMOTE_BYTES,
        remoteBytes,
        "Bytes read from workers over the data channel");
    bytes(
        registry,
        MetricNames.CLIENT_READ_UFS_BYTES,
        ufsBytes,
        "Bytes read directly from under stores");
    bytes(
        registry,
        MetricNames.CLIENT_WRITE_BYTES,
        writtenBytes,
        "Bytes written to files through workers");
    bytes(
        registry,
        MetricNames.CLIENT_WRITE_CACHED_BYTES,
        cachedOnWriteBytes,
        "Bytes of written files cached on workers before their close returned");
    FunctionCounter.builder(
            MetricNames.CLIENT_WRITE_CACHE_FAILURES, cacheOnWriteFailures, LongAdder::doubleValue)
        .description("Blocks of written files a worker could not cache at close")
        .register(registry);
    FunctionCounter.builder(MetricNames.CLIENT_READ_RETRIES, retries, LongAdder::doubleValue)
        .description("Reads moved to another source after a worker failed")
        .register(registry);
  }

  private static void bytes(
      MeterRegistry registry, String name, LongAdder counter, String description) {
    FunctionCounter.builder(name, counter, LongAdder::doubleValue)
        .baseUnit("bytes")
        .description(description)
        .register(registry);
  }
}
