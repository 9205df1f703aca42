package io.strata.tests;

import io.strata.client.master.MasterClient;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The master processes of a {@link MultiProcessCluster}. One master runs as the cluster always ran
 * it (named {@code master}, on 127.0.0.1 unless a test gives a host, folders under the cluster's
 * {@code strata.home}). Several masters form one journal group: master i is named {@code
 * master<i>}, binds, advertises and replicates on its own host (the test's, else 127.0.0.1), on
 * ports of its own, with its journal, metastore and backups under {@code <base>/master<i>/}; every
 * process of the cluster is given all their addresses.
 *
 * <p>Ports and folders stay the same across restarts, so a restarted master rejoins with its state.
 * Not thread-safe: the cluster calls it under its own lock.
 */
final class ClusterMasters {
  /** Starts one JVM of the cluster: its log name, its own -D settings and JVM options. */
  interface Launcher {
    Process launch(String name, Map<String, String> properties, List<String> jvmOptions)
        throws IOException;
  }

  /** Where one master serves and keeps its state. */
  record Master(String name, String host, int rpcPort, int webPort, int journalPort, Path dir) {
    String address() {
      return host + ":" + rpcPort;
    }

    String journalAddress() {
      return host + ":" + journalPort;
    }
  }

  private final List<Master> masters = new ArrayList<>();
  private final Process[] processes;
  private final boolean[] paused;
  private final boolean hostGiven;

  /**
   * @param hosts each master's host address; its size is the number of masters
   * @param hostGiven whether a test chose the hosts (a lone master then binds its host too)
   */
  ClusterMasters(Path base, List<String> hosts, boolean hostGiven) throws IOException {
    boolean several = hosts.size() > 1;
    for (int i = 0; i < hosts.size(); i++) {
      String host = hosts.get(i);
      masters.add(
          new Master(
              several ? "master" + i : "master",
              host,
              freePort(host),
              freePort(host),
              freePort(host),
              several ? base.resolve("master" + i) : null));
    }
    this.processes = new Process[hosts.size()];
    this.paused = new boolean[hosts.size()];
    this.hostGiven = hostGiven;
  }

  static int freePort(String host) throws IOException {
    return TestPorts.free(host);
  }

  int count() {
    return masters.size();
  }

  boolean several() {
    return masters.size() > 1;
  }

  Master master(int i) {
    return masters.get(i);
  }

  List<String> addresses() {
    return masters.stream().map(Master::address).toList();
  }

  /**
   * What every process of the cluster (and its clients) is told about the masters: the first one's
   * host and port, and with several masters every gRPC and journal address.
   */
  Map<String, String> commonProperties() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("strata.master.hostname", masters.get(0).host());
    p.put("strata.master.rpc.port", Integer.toString(masters.get(0).rpcPort()));
    if (several()) {
      p.put("strata.master.addresses", String.join(",", addresses()));
      p.put(
          "strata.master.journal.addresses",
          String.join(",", masters.stream().map(Master::journalAddress).toList()));
    }
    return p;
  }

  /** The settings only master i gets. */
  private Map<String, String> properties(int i) {
    Master m = masters.get(i);
    Map<String, String> p = new LinkedHashMap<>();
    p.put("strata.master.web.port", Integer.toString(m.webPort()));
    if (several() || hostGiven) {
      p.put("strata.master.hostname", m.host());
      p.put("strata.master.bind.host", m.host());
      p.put("strata.master.rpc.port", Integer.toString(m.rpcPort()));
    }
    // A journal port of its own even alone, so that a cluster of a test never meets another
    // process on the default port (a second test JVM, or a local cluster).
    p.put("strata.master.journal.port", Integer.toString(m.journalPort()));
    if (several()) {
      p.put("strata.master.journal.dir", m.dir().resolve("journal").toString());
      p.put("strata.master.metastore.dir", m.dir().resolve("metastore").toString());
      p.put("strata.master.backup.dir", m.dir().resolve("backups").toString());
    }
    return p;
  }

  /** Launches master i; the caller waits for it. */
  Process launch(int i, Launcher launcher) throws IOException {
    if (processes[i] != null && processes[i].isAlive()) {
      throw new IllegalStateException(masters.get(i).name() + " already running");
    }
    processes[i] = launcher.launch(masters.get(i).name(), properties(i), List.of("-Xmx512m"));
    paused[i] = false;
    return processes[i];
  }

  Process process(int i) {
    return processes[i];
  }

  boolean running(int i) {
    return processes[i] != null && processes[i].isAlive();
  }

  /** kill -9 of master i, waiting until it is gone. */
  void kill(int i) throws InterruptedException {
    Process p = processes[i];
    if (p != null && p.isAlive()) {
      p.destroyForcibly();
      p.waitFor();
    }
    paused[i] = false;
  }

  /** SIGSTOP of master i: it holds its ports and answers nothing until resumed. */
  void pause(int i) throws IOException, InterruptedException {
    signal(i, "-STOP");
    paused[i] = true;
  }

  /** SIGCONT of a paused master i. */
  void resume(int i) throws IOException, InterruptedException {
    signal(i, "-CONT");
    paused[i] = false;
  }

  private void signal(int i, String signal) throws IOException, InterruptedException {
    Process p = processes[i];
    if (p == null || !p.isAlive()) {
      throw new IllegalStateException(masters.get(i).name() + " is not running");
    }
    Process kill =
        new ProcessBuilder("kill", signal, Long.toString(p.pid()))
            .redirectErrorStream(true)
            .start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      kill.destroyForcibly();
      throw new IOException("kill " + signal + " " + p.pid() + " failed");
    }
  }

  /**
   * The index of the master that leads, as it says itself in GetQuorumInfo (each master asked with
   * a two-second deadline); -1 while none does.
   */
  int leaderIndex(StrataConfig clientConf) {
    StrataConfig conf = clientConf.with(Map.of("strata.client.rpc.timeout", "2s"));
    try (MasterClient client = new MasterClient(conf)) {
      for (int i = 0; i < masters.size(); i++) {
        if (!running(i) || paused[i]) {
          continue;
        }
        String address = masters.get(i).address();
        try {
          GetQuorumInfoResponse r =
              client.callJournalAt(
                  address, s -> s.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()));
          String leader = r.getLeaderAddress();
          if (!leader.isEmpty() && leader.equals(r.getAnsweredBy())) {
            return i;
          }
        } catch (StrataException e) {
          // Not answering: it is not the leader this call can name.
        }
      }
    }
    return -1;
  }

  /** Waits until a master leads; fails when every master died or the time passed. */
  int awaitLeader(StrataConfig clientConf, Duration timeout) {
    int[] leader = {-1};
    MultiProcessCluster.waitFor(
        "a leading master",
        timeout,
        () -> {
          boolean anyAlive = false;
          for (int i = 0; i < masters.size(); i++) {
            anyAlive |= running(i);
          }
          if (!anyAlive) {
            throw new IllegalStateException("every master died while waiting for a leader");
          }
          leader[0] = leaderIndex(clientConf);
          return leader[0] >= 0;
        },
        null);
    return leader[0];
  }

  /** Every master process, running or not, paused ones resumed so that SIGTERM reaches them. */
  List<Process> forClose() {
    List<Process> all = new ArrayList<>();
    for (int i = 0; i < masters.size(); i++) {
      if (paused[i] && running(i)) {
        try {
          resume(i);
        } catch (IOException e) {
          processes[i].destroyForcibly();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          processes[i].destroyForcibly();
        }
      }
      if (processes[i] != null) {
        all.add(processes[i]);
      }
    }
    return all;
  }
}
