package io.strata.shell.admin;

import io.strata.client.FileSystem;
import io.strata.client.MasterInfo;
import io.strata.client.PersistStatus;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.MountHealth;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code strata fsadmin report}: the master, each worker, capacity and use per tier over live
 * workers, and cache hits, misses, hit ratio and bytes served from cache and from under stores
 * (cumulative counters the workers report since they started), and whether each mount's under store
 * answers the master or has its calls failing at once after timeouts.
 */
@Command(
    name = "report",
    mixinStandardHelpOptions = true,
    description = "Report on the master, the workers, capacity and the cache.")
final class ReportCommand implements Callable<Integer> {
  private static final List<String> TIER_ORDER = List.of("MEM", "SSD", "HDD");

  private final ShellContext ctx;

  ReportCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    FileSystem fs = ctx.fs();
    PrintStream out = ctx.out();
    MasterInfo m = fs.masterInfo();
    List<WorkerInfo> workers = fs.getWorkers();
    out.printf(
        "Master %s: release %s, started %s, %d inodes, journal sequence %d"
            + " (last checkpoint %d)%n",
        fs.masterAddress(),
        m.release(),
        m.startTimeMs() > 0 ? Format.time(m.startTimeMs()) : "-",
        m.inodeCount(),
        m.journalSequence(),
        m.lastCheckpointSequence());
    long live = workers.stream().filter(w -> w.getState() == WorkerState.WORKER_LIVE).count();
    out.printf("%nWorkers: %d live, %d lost%n", live, workers.size() - live);
    if (!workers.isEmpty()) {
      int idWidth =
          workers.stream().mapToInt(w -> Long.toString(w.getWorkerId()).length()).max().orElse(2);
      String row = "  %" + Math.max(2, idWidth) + "s  %-22s  %-5s  %8s  %-19s  %s%n";
      out.printf(row, "ID", "ADDRESS (DATA PORT)", "STATE", "BLOCKS", "LAST HEARTBEAT", "RELEASE");
      for (WorkerInfo w :
          workers.stream().sorted(Comparator.comparingLong(WorkerInfo::getWorkerId)).toList()) {
        out.printf(
            row,
            w.getWorkerId(),
            w.getAddress().getHost() + ":" + w.getAddress().getDataPort(),
            w.getState() == WorkerState.WORKER_LIVE
                ? "live"
                : w.getState() == WorkerState.WORKER_DRAINING ? "draining" : "lost",
            w.getBlockCount(),
            w.getLastHeartbeatMs() > 0 ? Format.time(w.getLastHeartbeatMs()) : "-",
            w.getRelease().isEmpty() ? "-" : w.getRelease());
      }
    }
    printTiers(out, workers);
    printCache(out, workers);
    printPersists(out, fs);
    printMounts(out, fs.mountHealth());
    return 0;
  }

  /** Each mount's under store as the master sees it: answering, or failing at once. */
  private static void printMounts(PrintStream out, List<MountHealth> mounts) {
    if (mounts.isEmpty()) {
      return;
    }
    out.printf("%nUnder stores (as the master's calls find them):%n");
    int pathWidth =
        Math.max(5, mounts.stream().mapToInt(m -> m.getPath().length()).max().orElse(5));
    String row = "  %-" + pathWidth + "s  %s  %s%n";
    out.printf(row, "MOUNT", "STATE", "STORE");
    for (MountHealth m : mounts) {
      String state =
          m.getAnswering()
              ? "answering"
              : "NOT ANSWERING: calls fail at once until "
                  + Format.time(m.getUnavailableUntilMs())
                  + " ("
                  + m.getTimeoutsInARow()
                  + " timeouts in a row)";
      if (m.getTimeouts() > 0 || m.getRefused() > 0) {
        state +=
            "; "
                + m.getTimeouts()
                + " timed out, "
                + m.getRefused()
                + " refused since"
                + " the master started";
      }
      out.printf(row, m.getPath(), state, m.getUfsUri());
    }
  }

  private static void printTiers(PrintStream out, List<WorkerInfo> workers) {
    Map<String, long[]> tiers =
        new TreeMap<>(
            Comparator.comparingInt(
                    (String t) -> TIER_ORDER.contains(t) ? TIER_ORDER.indexOf(t) : 99)
                .thenComparing(t -> t));
    for (WorkerInfo w : workers) {
      if (w.getState() != WorkerState.WORKER_LIVE) {
        continue;
      }
      for (TierUsage t : w.getTiersList()) {
        long[] sum = tiers.computeIfAbsent(t.getAlias(), a -> new long[2]);
        sum[0] += t.getCapacityBytes();
        sum[1] += t.getUsedBytes();
      }
    }
    out.printf("%nCapacity of live workers:%n");
    if (tiers.isEmpty()) {
      out.printf("  none%n");
      return;
    }
    out.printf("  %-5s  %12s  %12s  %5s%n", "TIER", "CAPACITY", "USED", "USE");
    long capacity = 0;
    long used = 0;
    for (Map.Entry<String, long[]> e : tiers.entrySet()) {
      long[] s = e.getValue();
      capacity += s[0];
      used += s[1];
      out.printf(
          "  %-5s  %12s  %12s  %5s%n",
          e.getKey(), Format.human(s[0]), Format.human(s[1]), Format.percent(s[1], s[0]));
    }
    out.printf(
        "  %-5s  %12s  %12s  %5s%n",
        "total", Format.human(capacity), Format.human(used), Format.percent(used, capacity));
  }

  /**
   * The files written with ASYNC_THROUGH that wait for the leader's persist scheduler. A master of
   * an earlier release has none, and the section says so.
   */
  private static void printPersists(PrintStream out, FileSystem fs) throws StrataException {
    out.printf("%nPersist backlog (ASYNC_THROUGH files not yet in their under store):%n");
    PersistStatus p;
    try {
      p = fs.persistStatus();
    } catch (StrataException e) {
      if (e.code() != ErrorCode.UNIMPLEMENTED) {
        throw e;
      }
      out.printf("  none: the master is of a release without ASYNC_THROUGH%n");
      return;
    }
    out.printf(
        "  %d files (%s), the oldest waiting %s; %d persisting now%n",
        p.backlogFiles(),
        Format.human(p.backlogBytes()),
        Format.duration(p.oldestAgeMs()),
        p.running());
    out.printf(
        "  since this leader took over: %d persisted, %d failed attempts%s%n",
        p.persistedFiles(),
        p.failedAttempts(),
        p.lastFailure().isEmpty() ? "" : " (last: " + p.lastFailure() + ")");
  }

  private static void printCache(PrintStream out, List<WorkerInfo> workers) {
    long hits = 0;
    long misses = 0;
    long fromCache = 0;
    long fromUfs = 0;
    long evicted = 0;
    long corrupt = 0;
    long scrubbed = 0;
    for (WorkerInfo w : workers) {
      WorkerCacheStats s = w.getCacheStats();
      hits += s.getHits();
      misses += s.getMisses();
      fromCache += s.getBytesFromCache();
      fromUfs += s.getBytesFromUfs();
      evicted += s.getBlocksEvicted();
      corrupt += s.getBlocksCorrupt();
      scrubbed += s.getBytesScrubbed();
    }
    out.printf("%nCache (all workers, since each started):%n");
    out.printf(
        "  hits %d, misses %d, hit ratio %s%n", hits, misses, Format.ratio(hits, hits + misses));
    out.printf(
        "  bytes from cache %s, from under stores %s, blocks evicted %d%n",
        Format.human(fromCache), Format.human(fromUfs), evicted);
    out.printf(
        "  blocks found not matching their checksums and dropped %d, verified by the scrubbers %s%n",
        corrupt, Format.human(scrubbed));
  }
}
