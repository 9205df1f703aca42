package io.strata.server.common;

import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.strata.common.error.GrpcErrors;
import io.strata.common.metrics.MetricNames;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the body of a unary RPC: times it into the process's RPC latency metric, completes the
 * observer with its result, and turns any failure into the gRPC status that {@link GrpcErrors}
 * assigns, so that every service reports errors the same way.
 */
public final class RpcCalls {
  private static final Logger LOG = LoggerFactory.getLogger(RpcCalls.class);

  private final MeterRegistry registry;
  private final String latencyMetric;
  private final ConcurrentHashMap<String, Timer> timers = new ConcurrentHashMap<>();

  /**
   * @param latencyMetric the process's RPC latency metric, such as MASTER_RPC_LATENCY
   */
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
      failed(method, observer, start, t);
      return;
    }
    timer(method).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    observer.onNext(result);
    observer.onCompleted();
  }

  /**
   * Runs the body of a unary RPC whose answer comes later: the thread that called this is free once
   * the body returns its future, and the answer (or the failure's status) is sent when the future
   * completes, on the thread that completes it.
   */
  public <T> void unaryAsync(
      String method, StreamObserver<T> observer, Body<CompletableFuture<T>> body) {
    long start = System.nanoTime();
    CompletableFuture<T> answer;
    try {
      answer = body.call();
    } catch (Throwable t) {
      failed(method, observer, start, t);
      return;
    }
    // The callback answers the RPC, failure included: nothing waits for its stage.
    var unused =
        answer.whenComplete(
            (result, error) -> {
              if (error != null) {
                failed(method, observer, start, unwrap(error));
                return;
              }
              timer(method).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
              try {
                observer.onNext(result);
                observer.onCompleted();
              } catch (RuntimeException e) {
                // The caller went away meanwhile (cancelled): nobody to answer.
                LOG.debug("RPC {} could not be answered: {}", method, e.toString());
              }
            });
  }

  private void failed(String method, StreamObserver<?> observer, long start, Throwable t) {
    timer(method).record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    if (t instanceof Error && !(t instanceof AssertionError)) {
      LOG.error("RPC {} failed with an error", method, t);
    } else if (!(t instanceof io.strata.common.error.StrataException)) {
      LOG.warn("RPC {} failed: {}", method, t.toString(), t);
    }
    try {
      observer.onError(GrpcErrors.toStatus(t));
    } catch (RuntimeException e) {
      LOG.debug("RPC {} could not be answered: {}", method, e.toString());
    }
  }

  /** The failure inside the wrappers a future's stages put around it. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The latency timer of one method, for streaming RPCs that time themselves. */
  public Timer timer(String method) {
    return timers.computeIfAbsent(
        method,
        m ->
            Timer.builder(latencyMetric)
                .description("Latency of RPCs served by this process")
                .tag(MetricNames.TAG_METHOD, m)
                .publishPercentiles(0.5, 0.99)
                .register(registry));
  }
}
