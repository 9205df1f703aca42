package io.strata.server.common;

import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;

/**
 * The metrics registry of a long-running Strata process (master, worker, proxy, FUSE mount), with
 * the meters every such process publishes beside its own: the JVM's heap, non-heap and
 * direct/mapped buffer use, and the process's resident memory, CPU time and open files as the
 * operating system counts them. The resident memory is what shows a slow creep toward OOM that the
 * JVM's own figures miss: native memory of RocksDB, Netty, libfuse and the allocator.
 */
public final class ProcessMetricsRegistry {
  private ProcessMetricsRegistry() {}

  /** A new Prometheus registry holding the process-wide meters. */
  public static PrometheusMeterRegistry create() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new JvmMemoryMetrics().bindTo(registry);
    // The Prometheus client's own collector: it reads /proc/self, under the names Prometheus
    // users know from every other process (process_resident_memory_bytes, ...). Micrometer has
    // no resident-memory meter.
    ProcessMetrics.builder().register(registry.getPrometheusRegistry());
    return registry;
  }
}
