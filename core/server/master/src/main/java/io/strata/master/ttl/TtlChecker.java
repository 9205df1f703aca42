package io.strata.master.ttl;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.master.metastore.TtlIndex;
import io.strata.proto.TtlAction;
import io.strata.proto.journal.InodeEntry;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acts on the files and directories whose time to live has passed. Runs on the leading master only
 * (the master starts it when it takes the lead and closes it when it gives the lead up). Each round
 * reads the metastore's {@link TtlIndex} for the inodes whose time ended, so a round costs what
 * expired and never a walk of the namespace, and has each one freed or deleted as its action says,
 * through a {@link Target} that acts only if the inode is still as the round saw it.
 *
 * <p>A round reads the index in batches of {@value #BATCH}, each starting after the last, so it
 * ends even when actions fail: an inode whose action failed stays in the index and is tried again
 * next round. Every action is logged at INFO and counted in {@code strata_master_ttl_actions_total}
 * by action.
 */
public final class TtlChecker implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(TtlChecker.class);

  /** Expired inodes read from the index at a time. */
  static final int BATCH = 1000;

  /** What happens to an inode whose time to live passed: the namespace, in a master. */
  public interface Target {
    /**
     * Queues removal of the cached blocks of every file at or below {@code expired} and removes its
     * time to live (so that it is freed once), if the inode is still exactly as {@code expired}
     * shows it.
     *
     * @return the path freed, or empty when the inode changed or went meanwhile (nothing done)
     */
    Optional<String> free(InodeEntry expired) throws IOException;

    /**
     * Deletes {@code expired} with everything below it, from Strata and its under store, as a
     * client's recursive delete would, if the inode is still exactly as {@code expired} shows it.
     *
     * @return the path deleted, or empty when the inode changed or went meanwhile
     */
    Optional<String> delete(InodeEntry expired) throws IOException;
  }

  private final InodeStore store;
  private final Target target;
  private final Counter freed;
  private final Counter deleted;
  private final ScheduledExecutorService rounds =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-ttl-check"));
  private final AtomicLong roundsDone = new AtomicLong();
  private volatile boolean closed;

  public TtlChecker(InodeStore store, Target target, MeterRegistry registry) {
    this.store = store;
    this.target = target;
    this.freed = counter(registry, "free");
    this.deleted = counter(registry, "delete");
  }

  private static Counter counter(MeterRegistry registry, String action) {
    return Counter.builder(MetricNames.MASTER_TTL_ACTIONS)
        .tag(MetricNames.TAG_ACTION, action)
        .description("Files and directories acted on because their time to live passed")
        .register(registry);
  }

  /** Runs a round every {@code interval}, the first after one interval. */
  public void start(Duration interval) {
    long ms = Math.max(1, interval.toMillis());
    // A round logs its own failure; the rounds run until the executor shuts down.
    var unused = rounds.scheduleWithFixedDelay(this::scheduledRound, ms, ms, TimeUnit.MILLISECONDS);
  }

  private void scheduledRound() {
    try {
      check(System.currentTimeMillis());
    } catch (RuntimeException e) {
      LOG.warn(
          "Checking for expired times to live failed: {}; trying again next round",
          e.toString(),
          e);
    } finally {
      roundsDone.incrementAndGet();
    }
  }

  /**
   * How many scheduled rounds have finished, with or without acting: what "nothing happened for a
   * while" means for whoever watches the checker.
   */
  public long roundsDone() {
    return roundsDone.get();
  }

  /**
   * The action due on an inode at {@code nowMs}: its action once its time to live has passed; empty
   * when it has none, it has not passed, or the inode is null. An action this release does not know
   * (written by a newer one) counts as free, which loses nothing.
   */
  public static Optional<TtlAction> due(InodeEntry n, long nowMs) {
    if (n == null) {
      return Optional.empty();
    }
    long expiry = TtlIndex.expiryMs(n);
    if (expiry < 0 || expiry > nowMs) {
      return Optional.empty();
    }
    return Optional.of(
        n.getTtlAction() == TtlAction.TTL_ACTION_DELETE
            ? TtlAction.TTL_ACTION_DELETE
            : TtlAction.TTL_ACTION_FREE);
  }

  /**
   * One round: acts on every inode whose time to live passed at or before {@code nowMs}. Returns
   * the number of inodes acted on.
   */
  public int check(long nowMs) {
    int acted = 0;
    TtlIndex.Expiry after = null;
    while (!closed) {
      List<TtlIndex.Expiry> batch = store.expiredBy(nowMs, after, BATCH);
      for (TtlIndex.Expiry e : batch) {
        if (closed) {
          break;
        }
        if (act(store.peek(e.inodeId()), nowMs)) {
          acted++;
        }
        after = e;
      }
      if (batch.size() < BATCH) {
        break;
      }
    }
    return acted;
  }

  private boolean act(InodeEntry n, long nowMs) {
    Optional<TtlAction> action = due(n, nowMs);
    if (action.isEmpty()) {
      // Deleted with a directory acted on earlier in the round, or changed since the index
      // was read.
      return false;
    }
    boolean delete = action.get() == TtlAction.TTL_ACTION_DELETE;
    try {
      Optional<String> path = delete ? target.delete(n) : target.free(n);
      if (path.isEmpty()) {
        return false;
      }
      LOG.info(
          "Time to live of {} ({} ms after its modification) passed: {}",
          path.get(),
          n.getTtlMs(),
          delete ? "deleted it" : "freed its cached blocks");
      (delete ? deleted : freed).increment();
      return true;
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cannot {} inode {} ({}), whose time to live passed: {}; trying again next round",
          delete ? "delete" : "free",
          n.getId(),
          n.getName(),
          e.getMessage());
      return false;
    }
  }

  /**
   * Stops the rounds. A round under way stops after the inode it is acting on: it is not
   * interrupted, since an interrupt during a journal write would close the journal's file under the
   * master.
   */
  @Override
  public void close() {
    closed = true;
    rounds.shutdown();
    try {
      if (!rounds.awaitTermination(10, TimeUnit.SECONDS)) {
        rounds.shutdownNow();
      }
    } catch (InterruptedException e) {
      rounds.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
