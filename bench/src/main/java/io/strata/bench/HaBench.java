package io.strata.bench;

import io.strata.tests.MultiProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code bench/run ha}: highly available masters, measured on real master processes on 127.0.0.1
 * (no workers: every figure is the masters'). Four parts, each chosen with {@code --rows}:
 *
 * <ol>
 *   <li>{@code failover}: kill -9 of the leader of three masters under a client calling GetStatus
 *       in a loop, to the first successful call ({@link Failover});
 *   <li>{@code writes}: CreateFile + CompleteFile per second from 1 and 16 client threads on one
 *       master and on three ({@link MetadataWrites});
 *   <li>{@code catchup}: a follower whose journal was deleted starting again under a namespace of a
 *       million inodes and a snapshot, to its applied index reaching the leader's ({@link
 *       CatchUp});
 *   <li>{@code memory}: one master holding ten million inodes loaded from a synthetic under store,
 *       with a directory of a million listed in pages: its heap after a full GC and its RSS ({@link
 *       MasterAtScale}).
 * </ol>
 *
 * Every phase has a time limit and stops with a message naming it past the limit. Usage: {@code
 * bench/run ha [--rows failover,writes,catchup,memory] [--failovers 5] [--writes 5000]
 * [--write-threads 1,16] [--catchup-inodes 1000000] [--inodes 10000000] [--list-entries 1000000]
 * [--fanout 1000] [--limit-minutes 30] [--load-minutes 120] [--catchup-limit-seconds 300] [--dir
 * /tmp] [--keep false]}.
 */
final class HaBench {
  private HaBench() {}

  static void run(Map<String, String> opts) throws Exception {
    Set<String> rows =
        Set.of(opts.getOrDefault("rows", "failover,writes,stall,catchup,memory").split(","));
    int stallCalls = Integer.parseInt(opts.getOrDefault("stall-calls", "5000"));
    int stallers = Integer.parseInt(opts.getOrDefault("stallers", "8"));
    Duration stallTimeout =
        Duration.ofSeconds(Long.parseLong(opts.getOrDefault("stall-timeout-seconds", "10")));
    int failovers = Integer.parseInt(opts.getOrDefault("failovers", "5"));
    int writes = Integer.parseInt(opts.getOrDefault("writes", "5000"));
    int[] threads =
        Arrays.stream(opts.getOrDefault("write-threads", "1,16,64").split(","))
            .mapToInt(Integer::parseInt)
            .toArray();
    long catchupInodes = Long.parseLong(opts.getOrDefault("catchup-inodes", "1000000"));
    long inodes = Long.parseLong(opts.getOrDefault("inodes", "10000000"));
    long listEntries = Long.parseLong(opts.getOrDefault("list-entries", "1000000"));
    int fanout = Integer.parseInt(opts.getOrDefault("fanout", "1000"));
    Duration limit = Duration.ofMinutes(Long.parseLong(opts.getOrDefault("limit-minutes", "30")));
    Duration loadLimit =
        Duration.ofMinutes(Long.parseLong(opts.getOrDefault("load-minutes", "120")));
    Duration catchUpLimit =
        Duration.ofSeconds(Long.parseLong(opts.getOrDefault("catchup-limit-seconds", "300")));
    boolean keep = Boolean.parseBoolean(opts.getOrDefault("keep", "false"));
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-ha");
    // Ended by a signal (Ctrl-C, a timeout), the JVM runs no finally block: stop the masters it
    // started and remove the folder anyway.
    Thread cleanup =
        new Thread(
            () -> {
              ProcessHandle.current().descendants().forEach(ProcessHandle::destroyForcibly);
              if (!keep) {
                try {
                  ReadBench.deleteTree(base);
                } catch (Exception e) {
                  System.err.println("could not delete " + base + ": " + e);
                }
              }
            },
            "ha-bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    String loadBefore = loadAverage();
    Map<Integer, MetadataWrites.Row> oneMaster = new LinkedHashMap<>();
    Map<Integer, MetadataWrites.Row> threeMasters = new LinkedHashMap<>();
    List<Failover.Round> rounds = List.of();
    CatchUp.Result catchUp = null;
    MasterAtScale.Result scale = null;
    StoreStall.Result stall = null;
    try {
      if (rows.contains("writes")) {
        System.err.println("one master: metadata writes");
        try (MultiProcessCluster one = oneMaster(base.resolve("one")).start()) {
          writes(one, threads, writes, limit, oneMaster);
        }
      }
      if (rows.contains("stall")) {
        System.err.println("one master: GetStatus of a local mount while an S3 store is stalled");
        stall =
            StoreStall.run(
                base.resolve("stall"),
                stallCalls,
                stallers,
                stallTimeout,
                Deadline.of("Stalled-store row", limit, "lower --stall-calls"));
      }
      if (rows.contains("writes") || rows.contains("failover") || rows.contains("catchup")) {
        try (MultiProcessCluster three =
            MultiProcessCluster.builder(base.resolve("three")).masters(3).workers(0).start()) {
          if (rows.contains("writes")) {
            System.err.println("three masters: metadata writes");
            writes(three, threads, writes, limit, threeMasters);
          }
          if (rows.contains("failover")) {
            System.err.println("three masters: " + failovers + " fail-overs");
            rounds = Failover.run(three, failovers, limit);
          }
          if (rows.contains("catchup")) {
            System.err.println(
                "three masters: catch-up of a wiped follower under " + catchupInodes + " inodes");
            catchUp = CatchUp.run(three, catchupInodes, limit, catchUpLimit);
          }
        }
      }
      if (rows.contains("memory")) {
        System.err.println(
            "one master, " + String.join(" ", MasterAtScale.JVM) + ": " + inodes + " inodes");
        scale =
            MasterAtScale.run(base.resolve("scale"), inodes, listEntries, fanout, loadLimit, limit);
      }
    } finally {
      if (keep) {
        System.err.println("kept " + base);
      } else {
        ReadBench.deleteTree(base);
      }
      Runtime.getRuntime().removeShutdownHook(cleanup);
    }
    print(rounds, oneMaster, threeMasters, threads, writes, catchUp, scale, stall, loadBefore);
  }

  /**
   * A one-master test cluster without workers. The test cluster leaves a lone master on the default
   * journal (Raft) port, which another cluster on this machine may hold: give it a free one.
   */
  static MultiProcessCluster.Builder oneMaster(Path base) throws java.io.IOException {
    int journalPort;
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      journalPort = s.getLocalPort();
    }
    return MultiProcessCluster.builder(base)
        .masters(1)
        .workers(0)
        .property("strata.master.journal.port", Integer.toString(journalPort));
  }

  private static void writes(
      MultiProcessCluster cluster,
      int[] threads,
      int count,
      Duration limit,
      Map<Integer, MetadataWrites.Row> into)
      throws Exception {
    int most = Arrays.stream(threads).max().orElse(1);
    // A long-running master has compiled its hot paths; a fresh one needs a few thousand calls
    // of each kind before the figures mean anything on two cores.
    MetadataWrites.run(
        cluster,
        "/warm-up",
        most,
        Math.max(count, 5000),
        Deadline.of("Warm-up writes", limit, "raise --limit-minutes"));
    for (int t : threads) {
      MetadataWrites.Row row =
          MetadataWrites.run(
              cluster,
              "/writes-" + t,
              t,
              count,
              Deadline.of(
                  "Writing " + count + " files from " + t + " threads",
                  limit,
                  "lower --writes or raise --limit-minutes"));
      System.err.printf(
          "  %d threads: %.0f files/s; the leader's CreateFile %.2f ms,"
              + " CompleteFile %.2f ms; %s%n",
          t, row.filesPerSecond(), row.createMs(), row.completeMs(), row.cpu().describe());
      into.put(t, row);
    }
  }

  private static void print(
      List<Failover.Round> rounds,
      Map<Integer, MetadataWrites.Row> one,
      Map<Integer, MetadataWrites.Row> three,
      int[] threads,
      int writes,
      CatchUp.Result catchUp,
      MasterAtScale.Result scale,
      StoreStall.Result stall,
      String loadBefore) {
    Table t = new Table("figure", "one master", "three masters", "three/one", "target");
    if (!rounds.isEmpty()) {
      double[] took = rounds.stream().mapToDouble(Failover.Round::seconds).sorted().toArray();
      double[] elected =
          rounds.stream().mapToDouble(Failover.Round::electedSeconds).sorted().toArray();
      double median = median(took);
      double max = took[took.length - 1];
      t.row(
          "fail-over: kill -9 of the leader to the first successful GetStatus, median of "
              + took.length
              + " (s)",
          "-",
          Table.f2(median),
          "",
          verdict(median < 5, "< 5 s"));
      t.row(
          "fail-over, max of " + took.length + " (s)",
          "-",
          Table.f2(max),
          "",
          verdict(max < 5, "< 5 s"));
      t.row(
          "  of which to a new leader (its leader gauge), median / max (s)",
          "-",
          Table.f2(median(elected)) + " / " + Table.f2(elected[elected.length - 1]),
          "",
          "");
    }
    for (int th : threads) {
      Double a = one.containsKey(th) ? one.get(th).filesPerSecond() : null;
      Double b = three.containsKey(th) ? three.get(th).filesPerSecond() : null;
      if (a == null && b == null) {
        continue;
      }
      t.row(
          "files made (CreateFile + CompleteFile)/s, "
              + th
              + " thread"
              + (th == 1 ? "" : "s")
              + ", "
              + writes
              + " files",
          a == null ? "-" : Table.f1(a),
          b == null ? "-" : Table.f1(b),
          a == null || b == null ? "" : Table.f2(b / a),
          a == null || b == null ? "" : verdict(b / a >= 0.5, ">= 0.5x"));
    }
    if (stall != null) {
      t.row(
          "GetStatus of a local mount, calls one by one, p50 / p99 (ms): no stall",
          Table.f2(stall.baseP50()) + " / " + Table.f2(stall.baseP99()),
          "-",
          "",
          "");
      t.row(
          "  the same while another mount's S3 store is stalled ("
              + stall.calls()
              + " calls over twice its timeout)",
          Table.f2(stall.stallP50()) + " / " + Table.f2(stall.stallP99()),
          "-",
          Table.f2(stall.stallP99() / stall.baseP99()) + " (p99)",
          verdict(stall.stallP99() <= 2 * stall.baseP99(), "p99 <= 2x"));
    }
    if (catchUp != null) {
      t.row(
          "metadata load of "
              + count(catchUp.load().files() + catchUp.load().directories())
              + " synthetic inodes (inodes/s)",
          "-",
          count(catchUp.load().inodesPerSecond()),
          "",
          "");
      t.row(
          "catch-up of a wiped follower, " + count(catchUp.inodes()) + " inodes (s)",
          "-",
          catchUp.caughtUp()
              ? Table.f1(catchUp.seconds())
              : "not in "
                  + Math.round(catchUp.seconds())
                  + " s: applied "
                  + catchUp.applied()
                  + " of "
                  + catchUp.leaderApplied(),
          "",
          verdict(catchUp.caughtUp() && catchUp.seconds() < 60, "< 60 s"));
      t.row(
          "  of which JVM start to serving /health (s)",
          "-",
          Table.f1(catchUp.webSeconds()),
          "",
          "");
      t.row(
          "  of which until the leader handed over its lead (s)",
          "-",
          catchUp.handOverSeconds() < 0 ? "no hand-over" : Table.f1(catchUp.handOverSeconds()),
          "",
          "");
      t.row(
          "  of which until its first applied entry (s)",
          "-",
          catchUp.firstAppliedSeconds() < 0 ? "none" : Table.f1(catchUp.firstAppliedSeconds()),
          "",
          "");
    }
    if (scale != null) {
      long heapLimit = 2L << 30;
      t.row(
          "metadata load of "
              + count(
                  scale.tree().files()
                      + scale.tree().directories()
                      + scale.flat().files()
                      + scale.flat().directories())
              + " synthetic inodes (inodes/s)",
          count(scale.loadInodesPerSecond()),
          "-",
          "",
          "");
      t.row(
          "listing a directory of " + count(scale.listed()) + " in pages (s; entries/s)",
          Table.f1(scale.listSeconds()) + "; " + count(scale.listed() / scale.listSeconds()),
          "-",
          "",
          "");
      t.row(
          "heap used after a full GC, " + count(scale.inodes()) + " inodes (MiB)",
          mib(scale.heapBytes()),
          "-",
          "",
          verdict(scale.heapBytes() < heapLimit, "within -Xmx2g"));
      t.row(
          "  the same after a checkpoint purged "
              + mib(scale.logBytes())
              + " MiB of log"
              + " (MiB)",
          mib(scale.heapAfterCheckpointBytes()),
          "-",
          "",
          "");
      t.row(
          "RSS after the GC / peak RSS / heap committed (MiB)",
          mib(scale.rssBytes())
              + " / "
              + mib(scale.rssPeakBytes())
              + " / "
              + mib(scale.heapCommittedBytes()),
          "-",
          "",
          "");
    }
    System.out.printf(
        "HA masters benchmark: masters on 127.0.0.1, no workers; test-cluster"
            + " masters with -Xmx512m -XX:+UseSerialGC, the memory rows' master with %s; %d cores;"
            + " load average %s at the start, %s at the end%n%n",
        String.join(" ", MasterAtScale.JVM),
        Runtime.getRuntime().availableProcessors(),
        loadBefore,
        loadAverage());
    System.out.print(t.render());
    if (!rounds.isEmpty()) {
      List<String> each = new ArrayList<>();
      for (Failover.Round r : rounds) {
        each.add(Table.f2(r.seconds()) + " (leader " + Table.f2(r.electedSeconds()) + ")");
      }
      System.out.printf(
          "%nfail-over rounds, kill to first success (to a new leader): %s;"
              + " calls that failed outright: %d%n",
          String.join(", ", each), rounds.stream().mapToLong(Failover.Round::failedCalls).sum());
    }
    for (int th : threads) {
      List<String> where = new ArrayList<>();
      for (var e : List.of(Map.entry("one master", one), Map.entry("three masters", three))) {
        MetadataWrites.Row r = e.getValue().get(th);
        if (r != null) {
          where.add(
              String.format(
                  "%s CreateFile %.2f ms, CompleteFile %.2f ms (%s)",
                  e.getKey(), r.createMs(), r.completeMs(), r.cpu().describe()));
        }
      }
      if (!where.isEmpty()) {
        System.out.printf(
            "the leader's mean time per call at %d thread%s (its own timer, lock"
                + " wait and journal commit included): %s%n",
            th, th == 1 ? "" : "s", String.join("; ", where));
      }
    }
    if (stall != null) {
      System.out.printf(
          "stalled store: %d client threads calling mkdir on /s3 meanwhile: %d of"
              + " their calls timed out (after the store's timeout), %d were refused at once%n",
          stall.stallers(), stall.stalledTimeouts(), stall.stalledRefused());
    }
    if (catchUp != null) {
      System.out.printf(
          "catch-up: Checkpoint call %.1f s; the wiped follower %s the leader to"
              + " hand over its lead, was sent %s, and refused %d appendEntries for a missing"
              + " previous entry%n",
          catchUp.checkpointSeconds(),
          catchUp.askedHandOver() ? "asked" : "did not ask",
          catchUp.snapshotSent()
              ? "a snapshot"
              : "the new leader's log (no installSnapshot in" + " its log)",
          catchUp.inconsistencies());
    }
  }

  private static double median(double[] sorted) {
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static String verdict(boolean met, String what) {
    return (met ? "met" : "missed") + " (" + what + ")";
  }

  private static String count(double v) {
    return String.format("%,.0f", v);
  }

  private static String mib(long bytes) {
    return String.format("%,.0f", bytes / 1048576.0);
  }

  /** The 1-, 5- and 15-minute load averages of the machine. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (java.io.IOException e) {
      return "unknown";
    }
  }
}
