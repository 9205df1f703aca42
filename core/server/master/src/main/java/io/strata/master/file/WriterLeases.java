package io.strata.master.file;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leading master's leases on incomplete files, as HDFS keeps leases on files under
 * construction: a writer that created a file with a lease renews it while it writes, and a file
 * whose lease lapses (its writer died, or gave up without deleting it) is removed, so that it never
 * stays "being written" for good.
 *
 * <p>Leases are the leader's memory only; the journal records which incomplete files are leased
 * ({@code InodeEntry.leased}). A new leader finds them with one walk of the metastore and gives
 * each the whole timeout again, so a writer that renews through a fail-over never loses its file. A
 * file is removed only while it is still incomplete and exactly as the check saw it.
 */
public final class WriterLeases implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WriterLeases.class);

  private final InodeStore store;
  private final Namespace namespace;
  private final long timeoutNanos;
  private final Counter recovered;

  /** File id to the nanoTime its lease lapses. */
  private final Map<Long, Long> deadlines = new ConcurrentHashMap<>();

  private final ScheduledExecutorService rounds =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("master-lease-check"));
  private final ExecutorService scan =
      Executors.newSingleThreadExecutor(DaemonThreads.named("master-lease-scan"));
  private volatile boolean closed;

  public WriterLeases(
      InodeStore store, Namespace namespace, Duration timeout, MeterRegistry registry) {
    this.store = store;
    this.namespace = namespace;
    this.timeoutNanos = timeout.toNanos();
    this.recovered =
        Counter.builder(MetricNames.MASTER_LEASES_RECOVERED)
            .description("Incomplete files removed because their writer's lease lapsed")
            .register(registry);
  }

  /**
   * Finds the leased files of the journal (in the background) and checks leases every quarter of
   * the timeout, at most every 5 s.
   */
  public void start() {
    var unusedScan = scan.submit(this::adoptJournaled);
    long ms = Math.max(100, Math.min(5_000, TimeUnit.NANOSECONDS.toMillis(timeoutNanos) / 4));
    var unused = rounds.scheduleWithFixedDelay(this::scheduledRound, ms, ms, TimeUnit.MILLISECONDS);
  }

  /** Starts the lease of a file just created with one. */
  public void grant(long fileId) {
    deadlines.put(fileId, System.nanoTime() + timeoutNanos);
  }

  /**
   * Renews the leases of {@code fileIds}; returns those that hold none (complete, gone, or removed
   * already). A leased incomplete file the walk has not reached yet is taken on here.
   */
  public List<Long> renew(List<Long> fileIds) {
    List<Long> lapsed = new ArrayList<>();
    long until = System.nanoTime() + timeoutNanos;
    for (long id : fileIds) {
      if (deadlines.replace(id, until) != null) {
        continue;
      }
      InodeEntry n = store.peek(id);
      if (n != null && !n.getComplete() && n.getLeased()) {
        deadlines.put(id, until);
      } else {
        lapsed.add(id);
      }
    }
    return lapsed;
  }

  /** How many files hold a lease now. */
  public int held() {
    return deadlines.size();
  }

  /** Every incomplete leased inode of the store gets a whole timeout from now. */
  private void adoptJournaled() {
    long start = System.nanoTime();
    long[] found = {0};
    try {
      store.forEachInode(
          n -> {
            if (!closed && !n.getDirectory() && !n.getComplete() && n.getLeased()) {
              deadlines.putIfAbsent(n.getId(), start + timeoutNanos);
              found[0]++;
            }
          });
      if (found[0] > 0) {
        LOG.info(
            "{} incomplete files hold writers' leases; each is removed unless its writer renews"
                + " within {} s",
            found[0],
            TimeUnit.NANOSECONDS.toSeconds(timeoutNanos));
      }
    } catch (RuntimeException e) {
      LOG.warn("Cannot walk the metastore for leased files: {}", e.toString(), e);
    }
  }

  private void scheduledRound() {
    try {
      check(System.nanoTime());
    } catch (RuntimeException e) {
      LOG.warn("Checking writers' leases failed: {}; trying again next round", e.toString(), e);
    }
  }

  /** Removes the files whose lease lapsed by {@code nowNanos}; returns how many. */
  int check(long nowNanos) {
    int removed = 0;
    for (Map.Entry<Long, Long> e : deadlines.entrySet()) {
      if (closed) {
        break;
      }
      if (e.getValue() - nowNanos > 0) {
        continue;
      }
      long id = e.getKey();
      InodeEntry n = store.peek(id);
      if (n == null || n.getComplete() || !n.getLeased()) {
        deadlines.remove(id, e.getValue());
        continue;
      }
      String path = namespace.pathOf(id);
      try {
        boolean gone =
            path == null
                || Namespace.join(
                    namespace.delete(path, new Namespace.Delete(false, id, false, n)));
        if (gone) {
          deadlines.remove(id, e.getValue());
          if (path != null) {
            recovered.increment();
            removed++;
            LOG.info(
                "Removed {}: incomplete, and its writer renewed no lease on it for {} s (the"
                    + " writer died or gave up)",
                path,
                TimeUnit.NANOSECONDS.toSeconds(timeoutNanos));
          }
        }
        // Not gone: it changed since it was read; the next round looks again.
      } catch (IOException | RuntimeException failed) {
        LOG.warn(
            "Cannot remove {}, whose writer's lease lapsed: {}; trying again next round",
            path,
            failed.toString());
      }
    }
    return removed;
  }

  @Override
  public void close() {
    closed = true;
    rounds.shutdownNow();
    scan.shutdownNow();
    deadlines.clear();
  }
}
