package io.strata.master.journal;

import io.strata.common.DaemonThreads;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this master leads the group and serves, and the start and stop of its leader-only work
 * (run in order on a thread of its own, off Ratis's threads, since starting writes to the journal).
 *
 * <p>A master that takes the lead serves only once its leader work started. When that start fails
 * (an under store that does not answer, say), the master does not sit on the lead while clients
 * bounce off it: it tries again once after {@link #RETRY_DELAY}, and then hands the lead to another
 * master of the group, which may start where this one could not; a master alone in its group keeps
 * trying, waiting longer each time (up to {@link #MAX_RETRY_DELAY}).
 */
final class LeaderRole implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaderRole.class);
  static final Duration RETRY_DELAY = Duration.ofMillis(500);
  static final Duration MAX_RETRY_DELAY = Duration.ofSeconds(30);

  /** Starts tried on this master before the lead is handed to another. */
  private static final int STARTS_BEFORE_HAND_OVER = 2;

  /** What the master does when its role changes. */
  interface Work {
    /** This master leads and has applied every earlier entry: start leader-only work. */
    void start();

    /** This master no longer leads (or its start failed): stop leader-only work. */
    void stop();

    /** Hands the lead to another master; false when there is none to take it. */
    boolean handOver();
  }

  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-role-change"));
  private final String self;
  private volatile Work work;
  private volatile boolean leading;
  private volatile boolean serving;

  /** Completed when this master serves; replaced when it stops leading. Guarded by this. */
  private CompletableFuture<Void> served = new CompletableFuture<>();

  /** Counts role changes, so that a start scheduled for an earlier lead is dropped. */
  private long generation;

  private volatile boolean closed;

  LeaderRole(String self) {
    this.self = self;
  }

  void setWork(Work work) {
    this.work = work;
  }

  boolean leading() {
    return leading;
  }

  /** Leads and serves. */
  boolean serving() {
    return leading && serving;
  }

  /** Waits until this master serves. */
  void awaitServing(Duration timeout) throws TimeoutException, InterruptedException {
    CompletableFuture<Void> f;
    synchronized (this) {
      f = served;
    }
    try {
      f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  /** Ratis says this master leads and has applied every entry of earlier terms. */
  synchronized void gained(Object appliedIndex) {
    if (leading || closed) {
      return;
    }
    LOG.info("This master ({}) leads the journal from index {}", self, appliedIndex);
    leading = true;
    long mine = ++generation;
    thread.execute(() -> start(mine, 1));
  }

  /** The lead moved away from this master (or to nobody), or this master stopped. */
  synchronized void lost(Object leader) {
    if (!leading) {
      return;
    }
    leading = false;
    serving = false;
    generation++;
    if (served.isDone()) {
      served = new CompletableFuture<>();
    }
    LOG.info("This master ({}) no longer leads; the leader is {}", self, leader);
    if (!closed) {
      thread.execute(
          () -> {
            Work w = work;
            if (w != null) {
              w.stop();
            }
          });
    }
  }

  private void start(long mine, int attempt) {
    synchronized (this) {
      if (!leading || generation != mine || closed) {
        return;
      }
    }
    Work w = work;
    try {
      if (w != null) {
        w.start();
      }
      synchronized (this) {
        if (generation == mine && leading) {
          serving = true;
          served.complete(null);
        }
      }
    } catch (RuntimeException e) {
      LOG.error("Starting the leader's work failed (attempt {})", attempt, e);
      try {
        if (w != null) {
          w.stop();
        }
      } catch (RuntimeException stopFailed) {
        LOG.warn("Stopping the leader's work after a failed start failed", stopFailed);
      }
      if (attempt >= STARTS_BEFORE_HAND_OVER && w != null) {
        try {
          if (w.handOver()) {
            LOG.info("Handed the lead to another master after {} failed starts", attempt);
            return;
          }
        } catch (RuntimeException handOverFailed) {
          LOG.warn("Could not hand the lead over: {}", handOverFailed.toString());
        }
      }
      long delay =
          Math.min(MAX_RETRY_DELAY.toMillis(), RETRY_DELAY.toMillis() << Math.min(16, attempt - 1));
      LOG.info("Trying the leader's start again in {} ms", delay);
      // The retry logs its own failure; close() cancels it by shutting the thread down.
      var unused = thread.schedule(() -> start(mine, attempt + 1), delay, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      leading = false;
      serving = false;
      generation++;
    }
    thread.shutdownNow();
  }
}
