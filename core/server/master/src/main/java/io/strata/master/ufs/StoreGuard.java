package io.strata.master.ufs;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.strata.common.DaemonThreads;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds the time of every metadata call the master makes to one mount's under store, so that a
 * store that stops answering delays only the calls that need it, for a known time, and says so in
 * one line.
 *
 * <p>Each call runs on one of the mount's own threads (at most {@code threads}; more queue) while
 * its caller waits at most the store kind's timeout, queueing included. A call past its time fails
 * with DEADLINE_EXCEEDED naming the mount, the store, the call and the key to raise; the call
 * itself is interrupted and left to end on its thread. After {@code unavailableAfter} timeouts in a
 * row the store is taken as not answering: for {@code unavailablePeriod} every call fails at once
 * with the same kind of message, instead of stacking callers up behind it. Then one call is let
 * through; it decides whether the store answers again. A call that the store answers, even with an
 * error, counts as answered.
 */
public final class StoreGuard {
  /** One call to the store. */
  @FunctionalInterface
  public interface StoreCall<T> {
    T call() throws IOException;
  }

  /** What {@code fsadmin report} shows of a mount's store. */
  public record Health(
      String mountPath,
      String ufsUri,
      boolean answering,
      int timeoutsInARow,
      long unavailableUntilMs,
      long timeouts,
      long refused,
      int busyThreads) {}

  private final String mountPath;
  private final String ufsUri;
  private final Duration timeout;
  private final String timeoutKey;
  private final int unavailableAfter;
  private final Duration unavailablePeriod;
  private final ThreadPoolExecutor threads;
  private final Counter ok;
  private final Counter errors;
  private final Counter timeouts;
  private final Counter refused;
  private final AtomicInteger busy = new AtomicInteger();
  private final MeterRegistry registry;
  private final Gauge unavailableGauge;

  /** Guarded by this. */
  private int timeoutsInARow;

  /** While in the future, calls fail at once. Guarded by this. */
  private long unavailableUntilMs;

  /** A call let through after the unavailable period; guarded by this. */
  private boolean probing;

  StoreGuard(
      String mountPath,
      String ufsUri,
      Duration timeout,
      String timeoutKey,
      int unavailableAfter,
      Duration unavailablePeriod,
      int threadCount,
      MeterRegistry registry) {
    this.mountPath = mountPath;
    this.ufsUri = ufsUri;
    this.timeout = timeout;
    this.timeoutKey = timeoutKey;
    this.unavailableAfter = Math.max(1, unavailableAfter);
    this.unavailablePeriod = unavailablePeriod;
    this.threads =
        new ThreadPoolExecutor(
            Math.max(1, threadCount),
            Math.max(1, threadCount),
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            DaemonThreads.numbered("master-ufs-" + mountPath + "-"));
    threads.allowCoreThreadTimeOut(true);
    Tags tags = Tags.of(MetricNames.TAG_MOUNT, mountPath);
    this.ok = counter(registry, tags, "ok");
    this.errors = counter(registry, tags, "error");
    this.timeouts = counter(registry, tags, "timeout");
    this.refused = counter(registry, tags, "refused");
    this.registry = registry;
    this.unavailableGauge =
        Gauge.builder(MetricNames.MASTER_UFS_UNAVAILABLE, this, g -> g.answering() ? 0 : 1)
            .tags(tags)
            .description("1 while the mount's store is taken as not answering")
            .register(registry);
  }

  private static Counter counter(MeterRegistry registry, Tags tags, String outcome) {
    return Counter.builder(MetricNames.MASTER_UFS_CALLS)
        .tags(tags)
        .tag(MetricNames.TAG_OUTCOME, outcome)
        .description("Metadata calls of the master to under stores, by mount and outcome")
        .register(registry);
  }

  /**
   * Runs {@code call} ({@code what} of {@code uri}, for messages) within the store's time.
   *
   * @throws StrataException DEADLINE_EXCEEDED when it did not answer in time or is taken as not
   *     answering; anything the store threw, as it threw it
   */
  public <T> T call(String what, String uri, StoreCall<T> call) throws IOException {
    admit(what, uri);
    Future<T> f;
    try {
      f =
          threads.submit(
              () -> {
                busy.incrementAndGet();
                try {
                  return call.call();
                } finally {
                  busy.decrementAndGet();
                }
              });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      throw new StrataException(ErrorCode.UNAVAILABLE, "The master is shutting down", e);
    }
    try {
      T result = f.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      answered();
      ok.increment();
      return result;
    } catch (ExecutionException e) {
      answered();
      errors.increment();
      Throwable cause = e.getCause();
      if (cause instanceof IOException io) {
        throw io;
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IOException(cause);
    } catch (TimeoutException e) {
      f.cancel(true);
      timeouts.increment();
      throw timedOut(what, uri);
    } catch (InterruptedException e) {
      f.cancel(true);
      notProbing();
      Thread.currentThread().interrupt();
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "Interrupted while "
              + what
              + " of "
              + uri
              + " waited for the under store of mount "
              + mountPath,
          e);
    } catch (CancellationException e) {
      notProbing();
      throw new StrataException(ErrorCode.UNAVAILABLE, what + " of " + uri + " was cancelled");
    }
  }

  /** Fails at once while the store is taken as not answering (but for one probing call). */
  private synchronized void admit(String what, String uri) throws StrataException {
    if (unavailableUntilMs == 0) {
      return;
    }
    long now = System.currentTimeMillis();
    if (now >= unavailableUntilMs && !probing) {
      probing = true;
      return;
    }
    refused.increment();
    throw new StrataException(
        ErrorCode.DEADLINE_EXCEEDED,
        "The under store of mount "
            + mountPath
            + " ("
            + ufsUri
            + ") is not answering: it timed out "
            + timeoutsInARow
            + " times in a row, so "
            + what
            + " of "
            + uri
            + " fails at once until "
            + Instant.ofEpochMilli(Math.max(now, unavailableUntilMs))
            + "; raise "
            + timeoutKey
            + " (now "
            + seconds(timeout)
            + ") if the store is only slow");
  }

  private synchronized void answered() {
    timeoutsInARow = 0;
    unavailableUntilMs = 0;
    probing = false;
  }

  private synchronized void notProbing() {
    probing = false;
  }

  private synchronized StrataException timedOut(String what, String uri) {
    timeoutsInARow++;
    probing = false;
    if (timeoutsInARow >= unavailableAfter) {
      unavailableUntilMs = System.currentTimeMillis() + unavailablePeriod.toMillis();
    }
    return new StrataException(
        ErrorCode.DEADLINE_EXCEEDED,
        "The under store of mount "
            + mountPath
            + " ("
            + ufsUri
            + ") did not answer "
            + what
            + " of "
            + uri
            + " within "
            + seconds(timeout)
            + "; raise "
            + timeoutKey
            + " if the store is only slow");
  }

  private static String seconds(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
  }

  /** Whether the store is taken as answering (no unavailable period running). */
  public synchronized boolean answering() {
    return unavailableUntilMs == 0 || System.currentTimeMillis() >= unavailableUntilMs;
  }

  public synchronized Health health() {
    return new Health(
        mountPath,
        ufsUri,
        answering(),
        timeoutsInARow,
        unavailableUntilMs,
        (long) timeouts.count(),
        (long) refused.count(),
        busy.get());
  }

  void close() {
    threads.shutdownNow();
    registry.remove(unavailableGauge);
  }
}
