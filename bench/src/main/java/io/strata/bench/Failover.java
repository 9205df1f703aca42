package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.tests.MultiProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Fail-over of the leading master under a client's metadata calls: a client configured with every
 * master's address ({@code strata.master.addresses}) calls GetStatus in a loop (a call every 5 ms);
 * the leader is killed with kill -9; the figure is the time from the kill to the first call that
 * succeeds on another master. Beside it, the time until a surviving master's leader gauge turns 1
 * (the election), so the rest is the client finding the new leader. After each round the killed
 * master starts again and catches up before the next kill.
 */
final class Failover {
  private static final long PROBE_GAP_MS = 5;

  /**
   * One kill.
   *
   * @param seconds kill to the first successful call on another master
   * @param electedSeconds kill to a surviving master's leader gauge reading 1 (-1 unseen)
   * @param failedCalls calls that failed outright (budget spent) during the round
   */
  record Round(double seconds, double electedSeconds, long failedCalls) {}

  private Failover() {}

  static List<Round> run(MultiProcessCluster cluster, int rounds, Duration limit) throws Exception {
    MasterQuorum quorum = new MasterQuorum(cluster);
    List<Round> done = new ArrayList<>();
    try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      fs.createDirectory("/failover", false, true);
      Prober prober = new Prober(fs);
      Thread thread = new Thread(prober, "failover-prober");
      thread.setDaemon(true);
      thread.start();
      try {
        for (int r = 0; r < rounds; r++) {
          Deadline deadline =
              Deadline.of(
                  "Fail-over round " + (r + 1),
                  limit,
                  "see the masters' logs under the benchmark's folder; raise --limit-minutes");
          done.add(round(cluster, quorum, prober, deadline));
          Round last = done.get(done.size() - 1);
          System.err.printf(
              "fail-over %d: first successful call %.2f s after the kill, a"
                  + " leader after %.2f s%n",
              r + 1, last.seconds(), last.electedSeconds());
        }
      } finally {
        prober.stop();
        thread.join(10_000);
      }
    }
    return done;
  }

  private static Round round(
      MultiProcessCluster cluster, MasterQuorum quorum, Prober prober, Deadline deadline)
      throws Exception {
    int leader = cluster.awaitLeader(deadline.left());
    String killed = cluster.masterAddresses().get(leader);
    // The client must be calling the leader, so that the kill interrupts it.
    prober.awaitSuccessOn(killed, deadline);
    long failedBefore = prober.failures();
    long killNanos = System.nanoTime();
    prober.arm(killed, killNanos);
    cluster.killMaster(leader);
    long electedNanos = 0;
    long firstNanos;
    while ((firstNanos = prober.firstSuccess()) == 0 || electedNanos == 0) {
      if (electedNanos == 0 && quorum.leaderByGauge(leader) >= 0) {
        electedNanos = System.nanoTime();
      }
      if (firstNanos != 0 && electedNanos == 0) {
        // Served already: the gauge was up before this poll saw it.
        electedNanos = firstNanos;
      }
      deadline.pause(
          10,
          "waiting for a call to succeed after the leader "
              + killed
              + " was killed ("
              + prober.lastError()
              + ")");
    }
    Round round =
        new Round(
            (firstNanos - killNanos) / 1e9,
            (electedNanos - killNanos) / 1e9,
            prober.failures() - failedBefore);
    cluster.restartMaster(leader);
    quorum.awaitCaughtUp(leader, deadline);
    return round;
  }

  /** Calls GetStatus in a loop and notes the first success after a kill. */
  private static final class Prober implements Runnable {
    private final FileSystem fs;
    private volatile boolean stopped;
    private String armedAgainst;
    private long armedNanos;
    private long firstSuccessNanos;
    private String lastSuccessOn = "";
    private long failures;
    private String lastError = "no error";

    Prober(FileSystem fs) {
      this.fs = fs;
    }

    @Override
    public void run() {
      while (!stopped) {
        try {
          fs.getStatus("/failover");
          succeeded(System.nanoTime(), fs.masterAddress());
        } catch (StrataException e) {
          failed(e);
        }
        try {
          Thread.sleep(PROBE_GAP_MS);
        } catch (InterruptedException e) {
          return;
        }
      }
    }

    private synchronized void succeeded(long nanos, String on) {
      lastSuccessOn = on;
      // A call the killed master answered just before it died does not count.
      if (armedAgainst != null
          && firstSuccessNanos == 0
          && nanos > armedNanos
          && !on.equals(armedAgainst)) {
        firstSuccessNanos = nanos;
      }
      notifyAll();
    }

    private synchronized void failed(StrataException e) {
      failures++;
      lastError = e.getMessage();
    }

    synchronized void arm(String killedAddress, long killNanos) {
      armedAgainst = killedAddress;
      armedNanos = killNanos;
      firstSuccessNanos = 0;
    }

    synchronized long firstSuccess() {
      return firstSuccessNanos;
    }

    synchronized long failures() {
      return failures;
    }

    synchronized String lastError() {
      return lastError;
    }

    synchronized void awaitSuccessOn(String address, Deadline deadline)
        throws InterruptedException {
      lastSuccessOn = "";
      while (!lastSuccessOn.equals(address)) {
        deadline.check(
            "waiting for the client to call the leader "
                + address
                + " (last error: "
                + lastError
                + ")");
        wait(100);
      }
    }

    void stop() {
      stopped = true;
    }
  }
}
