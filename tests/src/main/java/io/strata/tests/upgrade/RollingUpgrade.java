package io.strata.tests.upgrade;

import io.strata.client.master.MasterClient;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.MultiProcessCluster.ShellResult;
import io.strata.tests.Release;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The steps of docs/rolling-upgrade.md on a {@link MultiProcessCluster}, run with the current
 * release's {@code strata} commands the way an operator runs them, each timed. A step fails with an
 * exception that says what did not happen (a command's non-zero exit, a master that did not catch
 * up).
 */
public final class RollingUpgrade implements AutoCloseable {
  private static final Duration CATCH_UP = Duration.ofSeconds(90);

  private final MultiProcessCluster cluster;
  private final MasterClient master;
  private final Map<String, Double> stepSeconds = new LinkedHashMap<>();
  private final List<String> transcript = new ArrayList<>();

  public RollingUpgrade(MultiProcessCluster cluster) {
    this.cluster = cluster;
    this.master = new MasterClient(cluster.clientConfig());
  }

  /** Runs {@code strata args...}; fails unless it exits 0. Returns what it printed. */
  public String strata(String... args) throws IOException {
    ShellResult r = cluster.shell(args);
    transcript.add("$ strata " + String.join(" ", args) + "\n" + r.stdout() + r.stderr());
    if (r.exitCode() != 0) {
      throw new IllegalStateException(
          "`strata "
              + String.join(" ", args)
              + "` exited "
              + r.exitCode()
              + ": "
              + r.stdout()
              + r.stderr());
    }
    return r.stdout();
  }

  /** Runs {@code strata args...} expecting it to fail; returns its output (stdout + stderr). */
  public ShellResult strataFailing(String... args) throws IOException {
    ShellResult r = cluster.shell(args);
    transcript.add("$ strata " + String.join(" ", args) + "\n" + r.stdout() + r.stderr());
    if (r.exitCode() == 0) {
      throw new IllegalStateException(
          "`strata "
              + String.join(" ", args)
              + "` succeeded where it should have failed: "
              + r.stdout());
    }
    return r;
  }

  /** Every command run, with what it printed. */
  public List<String> transcript() {
    return transcript;
  }

  /** How long each step took, in seconds, in order. */
  public Map<String, Double> stepSeconds() {
    return stepSeconds;
  }

  private void timed(String step, IoStep body) throws Exception {
    long start = System.nanoTime();
    body.run();
    String name = step;
    for (int n = 2; stepSeconds.containsKey(name); n++) {
      name = step + " (" + n + ")";
    }
    stepSeconds.put(name, (System.nanoTime() - start) / 1e9);
  }

  @FunctionalInterface
  private interface IoStep {
    void run() throws Exception;
  }

  /** Step 2: the pre-upgrade backup. */
  public void prepare() throws Exception {
    timed("prepare (backup)", () -> strata("fsadmin", "upgrade", "prepare"));
  }

  /**
   * Steps 3 and 4: every follower, one at a time, then leadership moved to an upgraded master and
   * the old leader upgraded; each master waited for until it has caught up.
   */
  public void upgradeMasters(Release to) throws Exception {
    int leader = cluster.awaitLeader(Duration.ofSeconds(60));
    List<Integer> followers = new ArrayList<>();
    for (int i = 0; i < cluster.masterCount(); i++) {
      if (i != leader) {
        followers.add(i);
      }
    }
    for (int i : followers) {
      restartMaster(i, to);
    }
    if (cluster.masterCount() > 1) {
      elect(followers.get(0));
    }
    restartMaster(leader, to);
  }

  /** Restarts master {@code i} from {@code to} and waits until it has caught up. */
  public void restartMaster(int i, Release to) throws Exception {
    timed(
        "master " + i + " to " + to.release(),
        () -> {
          cluster.restartMaster(i, to);
          awaitCaughtUp();
        });
  }

  /** Moves the leadership to master {@code i} with {@code fsadmin journal quorum elect}. */
  public void elect(int i) throws Exception {
    timed(
        "elect master " + i,
        () -> {
          String target = cluster.masterAddresses().get(i);
          // A transfer fails when the target does not catch up in time on a loaded machine, or
          // loses the election it was handed (DIFFERENT_LEADER: the old leader won again); an
          // operator lets it catch up and runs the command again, and so does the runbook here,
          // a bounded number of times.
          for (int attempt = 1; ; attempt++) {
            if (attempt > 1) {
              Thread.sleep(2_000);
              awaitCaughtUp();
            }
            ShellResult r = cluster.shell("fsadmin", "journal", "quorum", "elect", target);
            transcript.add(
                "$ strata fsadmin journal quorum elect " + target + "\n" + r.stdout() + r.stderr());
            if (r.exitCode() == 0) {
              break;
            }
            if (attempt == 4) {
              throw new IllegalStateException(
                  "`strata fsadmin journal quorum elect "
                      + target
                      + "` failed 4 times; last: "
                      + r.stderr());
            }
          }
          long deadline = System.nanoTime() + CATCH_UP.toNanos();
          while (cluster.awaitLeader(Duration.ofSeconds(30)) != i) {
            if (System.nanoTime() > deadline) {
              throw new IllegalStateException("master " + i + " did not take the lead");
            }
            Thread.sleep(100);
          }
        });
  }

  /** Step 5: every worker, one at a time, each waited for until it is live again. */
  public void upgradeWorkers(Release to, int workers) throws Exception {
    for (int i = 0; i < workers; i++) {
      restartWorker(i, to, workers);
    }
  }

  /** Restarts worker {@code i} (SIGTERM: it drains) from {@code to}; waits until all are live. */
  public void restartWorker(int i, Release to, int workers) throws Exception {
    timed(
        "worker " + i + " to " + to.release(),
        () -> {
          cluster.restartWorker(i, to);
          cluster.waitForLiveWorkers(workers, CATCH_UP);
        });
  }

  /** Step 7. */
  public String finalizeUpgrade() throws Exception {
    String[] out = new String[1];
    timed("finalize", () -> out[0] = strata("fsadmin", "upgrade", "finalize"));
    return out[0];
  }

  /**
   * Waits until every master of the group has applied what the group had committed when the wait
   * began: the restarted one has replayed what it missed. (Not "lag 0 at one instant": while
   * clients write, a follower learns each new commit a heartbeat later.)
   */
  public void awaitCaughtUp() throws InterruptedException {
    long deadline = System.nanoTime() + CATCH_UP.toNanos();
    String last = "no answer";
    long target = -1;
    while (System.nanoTime() < deadline) {
      try {
        GetQuorumInfoResponse q =
            master.callJournal(s -> s.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()));
        if (target < 0) {
          target = q.getCommitIndex();
        }
        boolean all = q.getPeersCount() == cluster.masterCount();
        for (QuorumPeer p : q.getPeersList()) {
          all &= p.getAppliedIndex() >= target;
        }
        if (all) {
          return;
        }
        last = q.getPeersList().toString();
      } catch (StrataException e) {
        last = e.getMessage();
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException(
        "The masters did not all catch up within " + CATCH_UP + ": " + last);
  }

  /** A client configuration of the cluster (for readers and checks). */
  public StrataConfig clientConfig() {
    return cluster.clientConfig();
  }

  @Override
  public void close() {
    master.close();
  }
}
