package io.strata.bench;

import io.strata.bench.synthetic.SyntheticTree;
import io.strata.client.FileSystem;
import io.strata.tests.MultiProcessCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * Catch-up of a follower that lost its journal: the three masters hold a large namespace (a
 * synthetic tree loaded with LoadMetadata) and a snapshot (the Checkpoint call, after which the
 * leader purges its log); one follower is killed, its journal folder deleted, and it is started
 * again. The figure is the time from its start until its applied index reaches the leader's. A
 * master that starts with an empty journal asks the leader, after about 5 s of getting nothing it
 * can use, to hand its lead to the third master, which then sends it what it has: its snapshot, or
 * its whole log when it has taken none (the Checkpoint call snapshots the leader only). The time of
 * that hand-over is part of the figure and reported beside it, and the restarted master's log says
 * which of the two it was sent.
 */
final class CatchUp {
  private CatchUp() {}

  /**
   * @param load the load of the namespace on three masters
   * @param checkpointSeconds the Checkpoint call
   * @param webSeconds start of the wiped master to its web endpoint serving
   * @param handOverSeconds start to another master leading (-1 when the lead stayed)
   * @param firstAppliedSeconds start to its first applied entry
   * @param seconds start to its applied index reaching the leader's, or to the wait's limit
   * @param caughtUp whether it caught up within the limit
   * @param applied its applied index at the end; {@code leaderApplied} the leader's
   * @param askedHandOver whether its log says it asked the leader to hand over
   * @param snapshotSent whether its log says it was sent a snapshot (else it got the log)
   * @param inconsistencies appendEntries it refused for a missing previous entry
   */
  record Result(
      SyntheticNamespace.Loaded load,
      long inodes,
      double checkpointSeconds,
      double webSeconds,
      double handOverSeconds,
      double firstAppliedSeconds,
      double seconds,
      boolean caughtUp,
      long applied,
      long leaderApplied,
      boolean askedHandOver,
      boolean snapshotSent,
      long inconsistencies) {}

  /**
   * @param limit of loading the namespace and of the set-up around the restart
   * @param catchUpLimit of the wait for the restarted master; past it the result says it did not
   *     catch up (and how far it got) instead of failing the benchmark
   */
  static Result run(MultiProcessCluster cluster, long inodes, Duration limit, Duration catchUpLimit)
      throws Exception {
    MasterQuorum quorum = new MasterQuorum(cluster);
    SyntheticTree tree = new SyntheticTree(inodes, 1000, 0);
    Deadline loadLimit =
        Deadline.of(
            "Catch-up: loading " + inodes + " inodes on three masters",
            limit,
            "lower --catchup-inodes or raise --limit-minutes");
    SyntheticNamespace.Loaded load;
    long count;
    double checkpointSeconds;
    try (FileSystem fs =
        FileSystem.connect(
            cluster.clientConfig(Map.of("strata.client.list.timeout", limit.toSeconds() + "s")))) {
      load = SyntheticNamespace.mountAndLoad(fs, "/catchup", tree, loadLimit);
      long start = System.nanoTime();
      fs.checkpoint();
      checkpointSeconds = (System.nanoTime() - start) / 1e9;
      count = fs.masterInfo().inodeCount();
    }
    Deadline deadline =
        Deadline.of(
            "Catch-up of a wiped follower",
            limit,
            "see its log under the benchmark's folder; raise --limit-minutes");
    int leader = cluster.awaitLeader(deadline.left());
    // Every master applied the namespace before one loses it.
    for (int i = 0; i < quorum.size(); i++) {
      quorum.awaitCaughtUp(i, deadline);
    }
    int wiped = (leader + 1) % quorum.size();
    cluster.killMaster(wiped);
    Path journal = cluster.masterJournalDir(wiped);
    ReadBench.deleteTree(journal);
    System.err.printf(
        "catch-up: master %d killed and its journal %s deleted; leader is master"
            + " %d at index %d%n",
        wiped, journal, leader, quorum.applied(leader));

    Path logFile = cluster.logsDir().resolve("master" + wiped + ".log");
    long logBefore = Files.exists(logFile) ? Files.size(logFile) : 0;
    long start = System.nanoTime();
    cluster.restartMaster(wiped);
    double web = (System.nanoTime() - start) / 1e9;
    double handOver = -1;
    double firstApplied = -1;
    long waitEnd = start + catchUpLimit.toNanos();
    long mine;
    long theirs;
    while (true) {
      long now = System.nanoTime();
      int leading = quorum.leaderByGauge(wiped);
      if (handOver < 0 && leading >= 0 && leading != leader) {
        handOver = (now - start) / 1e9;
      }
      mine = quorum.applied(wiped);
      if (firstApplied < 0 && mine > 0) {
        firstApplied = (now - start) / 1e9;
      }
      theirs = leading >= 0 ? quorum.applied(leading) : -1;
      if ((mine > 0 && theirs > 0 && mine >= theirs) || now > waitEnd) {
        break;
      }
      Thread.sleep(100);
    }
    boolean caughtUp = mine > 0 && theirs > 0 && mine >= theirs;
    double seconds = (System.nanoTime() - start) / 1e9;
    if (!caughtUp) {
      System.err.printf(
          "catch-up: master %d did not catch up within %d s: applied %d, the"
              + " leader %d; see %s%n",
          wiped, catchUpLimit.toSeconds(), mine, theirs, logFile);
    }
    String log = logSince(logFile, logBefore);
    return new Result(
        load,
        count,
        checkpointSeconds,
        web,
        handOver,
        firstApplied,
        seconds,
        caughtUp,
        mine,
        theirs,
        log.contains("asking the leader to hand its lead"),
        log.toLowerCase(java.util.Locale.ROOT).contains("installsnapshot")
            || log.contains("install the entire snapshot"),
        log.lines().filter(l -> l.contains("Failed appendEntries, previous log entry")).count());
  }

  /** What a log file holds past {@code offset}: what the restarted master wrote. */
  private static String logSince(Path log, long offset) throws Exception {
    if (!Files.exists(log)) {
      return "";
    }
    try (var in = Files.newInputStream(log)) {
      in.skipNBytes(Math.min(offset, Files.size(log)));
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }
}
