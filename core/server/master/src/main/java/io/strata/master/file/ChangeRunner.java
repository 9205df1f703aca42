package io.strata.master.file;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.grpc.Context;
import io.grpc.Deadline;
import io.strata.common.error.StrataException;
import io.strata.master.journal.CallIdentity;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs changes (and reads that must load metadata first): inline on the calling thread when they
 * need no store call and no wait, else on the lane of the mount of their path ({@link MountLanes});
 * see {@link Change}. The caller gets a future, completed when the change's entries are applied and
 * its locks released; a gRPC handler thread therefore never waits for a store, a lock or a commit.
 *
 * <p>A client's retry of a call that is still being made (its answer was late, or lost with a
 * connection) gets the outcome of the call in progress, and so does a retry shortly after it
 * finished; the journal's call history answers later ones ({@code RetriedCallReplay}). Nothing is
 * made twice.
 */
final class ChangeRunner {
  /** A change's body, run inline first and again on the lane if it must wait. */
  @FunctionalInterface
  interface Body<T> {
    /** Runs the change; the future completes when it is applied (or at once if it stages none). */
    CompletableFuture<T> run(Change c) throws IOException;
  }

  /** How long a finished call's outcome answers a retry of it. */
  private static final Duration RECENT = Duration.ofSeconds(30);

  private final Change.Env env;
  private final MountTable mounts;
  private final MountLanes lanes;
  private final ConcurrentHashMap<CallIdentity, CompletableFuture<?>> inFlight =
      new ConcurrentHashMap<>();
  private final Cache<CallIdentity, CompletableFuture<?>> recent =
      Caffeine.newBuilder().expireAfterWrite(RECENT).maximumSize(20_000).build();

  ChangeRunner(Change.Env env, MountTable mounts, MountLanes lanes) {
    this.env = env;
    this.mounts = mounts;
    this.lanes = lanes;
  }

  /**
   * Runs a change of {@code path} (which picks the lane) made by the call being served on this
   * thread, if any.
   */
  @SuppressWarnings("unchecked")
  <T> CompletableFuture<T> run(String path, Body<T> body) {
    CallIdentity caller = CallIdentity.current();
    long deadline = deadlineNanos();
    if (caller == null) {
      return start(path, body, null, false, deadline);
    }
    boolean retried = CallIdentity.currentAttempt() > 1;
    CompletableFuture<?> earlier = inFlight.get(caller);
    if (earlier == null) {
      earlier = recent.getIfPresent(caller);
    }
    if (earlier != null) {
      return (CompletableFuture<T>) earlier;
    }
    CompletableFuture<T> mine = new CompletableFuture<>();
    CompletableFuture<?> raced = inFlight.putIfAbsent(caller, mine);
    if (raced != null) {
      return (CompletableFuture<T>) raced;
    }
    // The callback hands the outcome on to mine, which the callers wait for.
    var unused =
        start(path, body, caller, retried, deadline)
            .whenComplete(
                (v, e) -> {
                  recent.put(caller, mine);
                  inFlight.remove(caller, mine);
                  if (e != null) {
                    mine.completeExceptionally(e);
                  } else {
                    mine.complete(v);
                  }
                });
    return mine;
  }

  /** A change for a caller that may wait (a background task's thread): never inline. */
  Change blocking() {
    return new Change(env, null, false, false, Long.MAX_VALUE);
  }

  private <T> CompletableFuture<T> start(
      String path, Body<T> body, CallIdentity caller, boolean retried, long deadline) {
    Change inline = new Change(env, caller, retried, true, deadline);
    try {
      return inline.finish(body.run(inline));
    } catch (Change.NeedsLane e) {
      inline.releaseLocks();
    } catch (IOException | RuntimeException e) {
      inline.releaseLocks();
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    try {
      lanes
          .lane(mounts.resolve(path).mount())
          .execute(
              () -> {
                if (System.nanoTime() > deadline) {
                  result.completeExceptionally(
                      StrataException.unavailable(
                          "The call on "
                              + path
                              + " waited past its deadline for its mount's lane (is the mount's store slow?)",
                          null));
                  return;
                }
                Change c = new Change(env, caller, retried, false, deadline);
                try {
                  // The callback hands the outcome on to result, which the caller waits for.
                  var unused =
                      c.finish(body.run(c))
                          .whenComplete(
                              (v, e) -> {
                                if (e != null) {
                                  result.completeExceptionally(e);
                                } else {
                                  result.complete(v);
                                }
                              });
                } catch (IOException | RuntimeException e) {
                  c.releaseLocks();
                  result.completeExceptionally(e);
                }
              });
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(
          StrataException.unavailable("The master is shutting down; retry on its restart", e));
    }
    return result;
  }

  /** The deadline of the call being served, as {@link System#nanoTime}; MAX_VALUE if none. */
  private static long deadlineNanos() {
    Deadline d = Context.current().getDeadline();
    if (d == null) {
      return Long.MAX_VALUE;
    }
    return System.nanoTime() + d.timeRemaining(TimeUnit.NANOSECONDS);
  }
}
