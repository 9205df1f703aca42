package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * `bin/strata local up --masters 3` as a user runs it: three masters that elect a leader, the
 * client file that lets later commands find all of them, `local status` and `fsadmin journal quorum
 * info` naming the leader, a backup, and a single master started from that backup. (Several masters
 * started from one backup do not elect a leader yet: the restored snapshot has term 0, which
 * Ratis's vote takes for an empty log.)
 */
class LocalMastersCommandTest {
  @TempDir Path home;
  @TempDir Path restoredHome;

  record Run(int exit, String out) {}

  private Run strata(Path strataHome, List<String> props, String... args) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(LocalClusterCommandTest.repoRoot().resolve("bin/strata").toString());
    cmd.addAll(props);
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("STRATA_HOME", strataHome.toString());
    Path out = strataHome.resolve("cmd.out");
    pb.redirectOutput(out.toFile());
    Process p = pb.start();
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("strata " + String.join(" ", args) + " hung");
    }
    return new Run(p.exitValue(), Files.readString(out));
  }

  /** A port p such that p, p + 10 and p + 20 are free (master i takes the port + 10 x i). */
  private static int freeStride() throws IOException {
    Random random = new Random();
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = 20000 + random.nextInt(30000);
      if (free(port) && free(port + 10) && free(port + 20)) {
        return port;
      }
    }
    throw new IllegalStateException("no free ports p, p+10, p+20 found");
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static List<String> props(Path memTier) throws IOException {
    List<String> props = new ArrayList<>();
    int rpc = freeStride();
    props.add("-Dstrata.master.rpc.port=" + rpc);
    props.add("-Dstrata.master.web.port=" + freeStride());
    props.add("-Dstrata.master.journal.port=" + freeStride());
    props.add("-Dstrata.worker.rpc.port=" + LocalClusterCommandTest.freePort());
    props.add("-Dstrata.worker.data.port=" + LocalClusterCommandTest.freePort());
    props.add("-Dstrata.worker.web.port=" + LocalClusterCommandTest.freePort());
    props.add("-Dstrata.worker.tier.mem.dir=" + memTier);
    props.add("-Dstrata.worker.tier.mem.capacity=64MB");
    props.add("-Dstrata.worker.tier.ssd.capacity=256MB");
    return props;
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void threeLocalMastersElectALeaderAndServeLaterCommands() throws Exception {
    Path memTier = Path.of("/dev/shm/strata-localmasters-" + ProcessHandle.current().pid());
    List<String> props = props(memTier);
    int rpc = Integer.parseInt(props.get(0).substring(props.get(0).indexOf('=') + 1));
    List<String> addresses =
        List.of("127.0.0.1:" + rpc, "127.0.0.1:" + (rpc + 10), "127.0.0.1:" + (rpc + 20));
    String backup;
    try {
      Run up = strata(home, props, "local", "up", "--masters", "3", "--no-proxy");
      assertEquals(0, up.exit(), up.out());
      for (int i = 1; i <= 3; i++) {
        assertTrue(
            up.out().contains("  master-" + i + ":     " + addresses.get(i - 1) + " (gRPC)"),
            up.out());
        assertTrue(Files.isDirectory(home.resolve("master-" + i + "/journal")), "master-" + i);
      }
      assertEquals(
          1,
          Pattern.compile(", leader$", Pattern.MULTILINE).matcher(up.out()).results().count(),
          up.out());
      Path clientConf = home.resolve("run/client.properties");
      assertTrue(
          Files.readString(clientConf)
              .contains("strata.master.addresses=" + String.join(",", addresses)),
          Files.readString(clientConf));

      Files.writeString(home.resolve("underfs/hello.txt"), "hello");
      Run cat = strata(home, props, "fs", "cat", "/hello.txt");
      assertEquals(0, cat.exit(), cat.out());
      assertTrue(cat.out().contains("hello"), cat.out());

      Run status = strata(home, props, "local", "status");
      assertEquals(0, status.exit(), status.out());
      Matcher leaderLine =
          Pattern.compile(
                  "(?m)^master-(\\d): running \\(pid \\d+\\), " + "127\\.0\\.0\\.1:(\\d+), leader$")
              .matcher(status.out());
      assertTrue(leaderLine.find(), status.out());
      String leader = "127.0.0.1:" + leaderLine.group(2);
      assertEquals(
          2,
          Pattern.compile("(?m)^master-\\d: running \\(pid \\d+\\), .*, follower$")
              .matcher(status.out())
              .results()
              .count(),
          status.out());

      Run info = strata(home, props, "fsadmin", "journal", "quorum", "info");
      assertEquals(0, info.exit(), info.out());
      assertTrue(info.out().contains(", leader " + leader + "\n"), info.out());
      for (String a : addresses) {
        assertTrue(
            Pattern.compile(
                    "(?m)^  "
                        + Pattern.quote(a)
                        + " +127\\.0\\.0\\.1:\\d+ +(leader|follower) +\\d+ +\\d+$")
                .matcher(info.out())
                .find(),
            a + " in " + info.out());
      }

      // A mount lives only in the namespace, so only a restored backup can bring it back.
      Path extra = Files.createDirectories(home.resolve("extra-store"));
      Run mounted = strata(home, props, "fs", "mount", "/extra", "file://" + extra);
      assertEquals(0, mounted.exit(), mounted.out());
      Run written = strata(home, props, "fsadmin", "backup");
      assertEquals(0, written.exit(), written.out());
      Matcher where = Pattern.compile("Backup written to (\\S+)").matcher(written.out());
      assertTrue(where.find(), written.out());
      backup = where.group(1);
      assertTrue(backup.startsWith(home.resolve("backups") + "/backup-"), backup);
      assertTrue(Files.isRegularFile(Path.of(backup, "HEADER")), backup);
    } finally {
      Run down = strata(home, props, "local", "down");
      assertEquals(0, down.exit(), down.out());
      MultiProcessCluster.deleteTree(memTier);
    }
    assertFalse(Files.exists(home.resolve("run/client.properties")));
    assertFalse(Files.exists(home.resolve("run/master-1.pid")));

    // One master of a new home starts from the backup: the mount made before is there.
    try {
      Run up = strata(restoredHome, props, "local", "up", "--no-proxy", "--restore", backup);
      assertEquals(0, up.exit(), up.out());
      Run mounts = strata(restoredHome, props, "fs", "mount");
      assertEquals(0, mounts.exit(), mounts.out());
      assertTrue(
          mounts.out().contains("/extra  file://" + home.resolve("extra-store")), mounts.out());
    } finally {
      strata(restoredHome, props, "local", "down");
      MultiProcessCluster.deleteTree(memTier);
    }
  }
}
