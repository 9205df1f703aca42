package io.strata.tests;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.client.FileSystem;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three masters on their own loopback addresses (127.0.0.2, .3, .4); the leader is cut off from the
 * other two (and from every client) with nftables rules that the test adds and always removes (see
 * {@link Cut}). The cut-off leader steps down and commits nothing, the other two elect a leader and
 * serve, and once the cut is healed the old leader rejoins as a follower with no entry of its own:
 * every master ends at the same sequence with the same inodes.
 */
class MasterPartitionTest {
  private static final Duration SETTLE = Duration.ofSeconds(90);
  private static final String[] HOSTS = {"127.0.0.2", "127.0.0.3", "127.0.0.4"};
  @TempDir Path dir;

  /**
   * Cuts one master process off the network; undone on close. Loopback connections a process opens
   * leave from 127.0.0.1 whatever address it listens on, so the master is told apart by its
   * process: it is moved into a cgroup of its own and nftables drops every packet its sockets send
   * (and every packet sent to its address); its connections open before the cut are closed (`ss
   * -K`) so that it must open new ones, which the rules catch.
   */
  private static final class Cut implements AutoCloseable {
    private final String name = "strata-cut-" + UUID.randomUUID().toString().substring(0, 8);
    private final long pid;
    private final Path cgroupRoot;
    private final Thread cleanup = new Thread(this::remove);

    Cut(long pid, String address) throws IOException, InterruptedException {
      this.pid = pid;
      this.cgroupRoot = cgroup2Mount();
      Runtime.getRuntime().addShutdownHook(cleanup);
      Files.createDirectories(cgroupRoot.resolve(name));
      Files.writeString(cgroupRoot.resolve(name).resolve("cgroup.procs"), Long.toString(pid));
      run("nft", "add", "table", "inet", name);
      for (String hook : new String[] {"input", "output"}) {
        run(
            "nft",
            "add",
            "chain",
            "inet",
            name,
            hook,
            "{ type filter hook " + hook + " priority 0 ; policy accept ; }");
        run("nft", "add", "rule", "inet", name, hook, "ip", "daddr", address, "drop");
      }
      // nft names cgroups relative to /sys/fs/cgroup, where a host with both cgroup versions
      // mounts version 2 in a subfolder.
      Path relative = Path.of("/sys/fs/cgroup").relativize(cgroupRoot.resolve(name));
      run(
          "nft",
          "add",
          "rule",
          "inet",
          name,
          "output",
          "socket",
          "cgroupv2",
          "level",
          "1",
          "\"" + relative + "\"",
          "drop");
      for (String socket : run("ss", "-tnpH", "state", "established").split("\n")) {
        if (socket.contains("pid=" + pid + ",")) {
          String[] f = socket.trim().split("\\s+");
          String local = f[2];
          String peer = f[3];
          run("ss", "-K", "( sport = :" + port(local) + " and dport = :" + port(peer) + " )");
        }
      }
    }

    private static String port(String hostPort) {
      return hostPort.substring(hostPort.lastIndexOf(':') + 1);
    }

    private static Path cgroup2Mount() throws IOException {
      for (String line : Files.readAllLines(Path.of("/proc/mounts"))) {
        String[] f = line.split(" ");
        if (f.length > 2 && f[2].equals("cgroup2")) {
          return Path.of(f[1]);
        }
      }
      throw new IOException("no cgroup2 file system is mounted; the partition test needs one");
    }

    private static String run(String... cmd) throws IOException, InterruptedException {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", cmd) + " hung");
      // ss -K reports sockets it could not destroy among those it did; only nft must succeed.
      if (cmd[0].equals("nft")) {
        assertEquals(
            0,
            p.exitValue(),
            String.join(" ", cmd)
                + ": "
                + out
                + " (bin/setup installs nftables; the test needs root)");
      }
      return out;
    }

    private void remove() {
      try {
        new ProcessBuilder("nft", "delete", "table", "inet", name)
            .redirectErrorStream(true)
            .start()
            .waitFor(30, TimeUnit.SECONDS);
        if (ProcessHandle.of(pid).isPresent()) {
          Files.writeString(cgroupRoot.resolve("cgroup.procs"), Long.toString(pid));
        }
        Files.deleteIfExists(cgroupRoot.resolve(name));
      } catch (IOException e) {
        // Already gone: nothing left to remove.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public void close() {
      remove();
      try {
        Runtime.getRuntime().removeShutdownHook(cleanup);
      } catch (IllegalStateException e) {
        // Shutting down: the hook runs anyway.
      }
    }
  }

  private static FileSystemMasterGrpc.FileSystemMasterBlockingStub stub(ManagedChannel c) {
    return FileSystemMasterGrpc.newBlockingStub(c).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static GetMasterInfoResponse info(String address) {
    ManagedChannel c = NettyChannelBuilder.forTarget(address).usePlaintext().build();
    try {
      return stub(c).getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
    } finally {
      c.shutdownNow();
    }
  }

  @Test
  void aCutOffLeaderStepsDownAndRejoinsAsAFollowerWithNothingOfItsOwn() throws Exception {
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(dir.resolve("cluster"))
                .masterHosts(HOSTS)
                .workers(1)
                .property("strata.client.master.failover.timeout", "90s")
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      fs.createDirectory("/before/cut", true, false);
      int old = cluster.awaitLeader(SETTLE);
      String oldAddress = cluster.masterAddresses().get(old);
      Path oldLog = cluster.logsDir().resolve("master" + old + ".log");
      int stepDownsBefore = count(oldLog, "no longer leads");
      try (Cut cut = new Cut(cluster.masterPid(old), HOSTS[old])) {
        // The other two elect a leader, and clients find it.
        await("a leader among the other two")
            .atMost(SETTLE)
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(200))
            .until(cluster::leaderIndex, now -> now >= 0 && now != old);
        fs.createDirectory("/during/cut", true, false);
        // The cut-off leader steps down on its own (it hears no majority).
        await("the cut-off leader to step down")
            .atMost(SETTLE)
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(200))
            .until(() -> count(oldLog, "no longer leads") != stepDownsBefore);
      }
      // Healed: a write sent straight to the old leader is refused (it follows now).
      ManagedChannel direct = NettyChannelBuilder.forTarget(oldAddress).usePlaintext().build();
      try {
        // A write the old leader takes fails the test at once (assertThrows).
        await("the old leader to refuse a write as not the leader")
            .atMost(SETTLE)
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(200))
            .until(
                () ->
                    assertThrows(
                        StatusRuntimeException.class,
                        () ->
                            stub(direct)
                                .createDirectory(
                                    CreateDirectoryRequest.newBuilder()
                                        .setPath("/written/on/the/old/leader")
                                        .setRecursive(true)
                                        .build())),
                refused ->
                    refused.getStatus().getCode() == io.grpc.Status.Code.UNAVAILABLE
                        && refused.getStatus().getDescription() != null
                        && refused.getStatus().getDescription().contains("not the leader"));
      } finally {
        direct.shutdownNow();
      }
      assertNotEquals(old, cluster.awaitLeader(SETTLE));
      assertTrue(fs.exists("/during/cut"));
      assertFalse(fs.exists("/written/on/the/old/leader"));
      // Same journal everywhere: the old leader kept no divergent entry.
      await("the masters to hold the same journal")
          .atMost(SETTLE)
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () -> {
                List<Long> sequences = new ArrayList<>();
                List<Long> inodes = new ArrayList<>();
                for (String a : cluster.masterAddresses()) {
                  GetMasterInfoResponse i = info(a);
                  sequences.add(i.getJournalSequence());
                  inodes.add(i.getInodeCount());
                }
                assertTrue(
                    sequences.stream().distinct().count() == 1
                        && inodes.stream().distinct().count() == 1,
                    "masters differ: sequences " + sequences + ", inodes " + inodes);
              });
    }
  }

  private static int count(Path log, String text) throws IOException {
    if (!Files.exists(log)) {
      return 0;
    }
    String all = Files.readString(log, StandardCharsets.ISO_8859_1);
    int n = 0;
    for (int i = all.indexOf(text); i >= 0; i = all.indexOf(text, i + 1)) {
      n++;
    }
    return n;
  }
}
