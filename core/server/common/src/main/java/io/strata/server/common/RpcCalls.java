package io.strata.server.common;

import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.strata.common.error.GrpcErrors;
import io.strata.common.metrics.MetricNames;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the body of a unary RPC: times it into the process's RPC latency metric, completes the
 * observer with its result, and turns any failure into the gRPC status that
 * {@link GrpcErrors} assigns, so that every service reports errors the same way.
 */
public final class RpcCalls {
  private static final Logger LOG = LoggerFactory.getLogger(RpcCalls.class);

  private final MeterRegistry registry;
  private final String latencyMetric;
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

  /** @param latencyMetric the process's RPC latency metric, such as MASTER_RPC_LATENCY */
  public RpcCalls(MeterRegistry registry, String latencyMetric) {
    this.registry = registry;
    this.latencyMetric = latencyMetric;
  }

  /** The body of an RPC; may throw anything. */
  @FunctionalInterface
  public interface Body<T> {
    T call() throws Exception;
  }

  public <T> void unary(String method, StreamObserver<T> observer, Body<T> body) {
    long start = System.nanoTime();
    T result;
    try {
      result = body.call();
    } catch (Throwable t) {
      timer(method).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
      if (t instanceof Error && !(t instanceof AssertionError)) {
        LOG.error("RPC {} failed with an error", method, t);
      } else if (!(t instanceof io.strata.common.error.StrataException)) {
        LOG.warn("RPC {} failed: {}", method, t.toString(), t);
      }
      observer.onError(GrpcErrors.toStatus(t));
      return;
    }
    timer(method).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    observer.onNext(result);
    observer.onCompleted();
  }

  /** The latency timer of one method, for streaming RPCs that time themselves. */
  public Timer timer(String method) {
    return timers.computeIfAbsent(method, m -> Timer.builder(latencyMetric)
        .description("Latency of RPCs served by this process")
        .tag(MetricNames.TAG_METHOD, m)
        .publishPercentiles(0.5, 0.99)
        .register(registry));
  }
}
