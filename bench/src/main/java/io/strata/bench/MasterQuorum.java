package io.strata.bench;

import io.strata.tests.MultiProcessCluster;

/**
 * The masters of a cluster as the HA benchmark watches them: each master's own view of its journal,
 * read from its web port's /metrics (so a master is asked about itself, and a master that does not
 * answer reads as -1). Cheap enough to poll every few tens of milliseconds.
 */
final class MasterQuorum {
  static final String APPLIED = "strata_master_journal_applied_index";
  static final String LEADER = "strata_master_journal_leader";

  private final MultiProcessCluster cluster;

  MasterQuorum(MultiProcessCluster cluster) {
    this.cluster = cluster;
  }

  int size() {
    return cluster.masterCount();
  }

  private String scrape(int i) {
    return MultiProcessCluster.scrapePort(cluster.masterWebPort(i));
  }

  /** Master i's last applied journal index; -1 when it does not answer. */
  long applied(int i) {
    String s = scrape(i);
    return s.isEmpty() ? -1 : (long) MultiProcessCluster.metric(s, APPLIED);
  }

  /** The master whose leader gauge is 1, skipping {@code except}; -1 when none says so. */
  int leaderByGauge(int except) {
    for (int i = 0; i < size(); i++) {
      if (i != except && MultiProcessCluster.metric(scrape(i), LEADER) == 1) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Waits until master i has applied every entry the leader has applied, read again on every poll
   * (a new leader appends an entry of its own); returns the index it reached.
   */
  long awaitCaughtUp(int i, Deadline deadline) throws InterruptedException {
    while (true) {
      int leader = leaderByGauge(-1);
      long mine = applied(i);
      if (leader >= 0 && mine >= 0) {
        long theirs = applied(leader);
        if (theirs >= 0 && mine >= theirs) {
          return mine;
        }
      }
      deadline.pause(
          100, "waiting for master " + i + " to apply the leader's journal (at " + mine + ")");
    }
  }
}
