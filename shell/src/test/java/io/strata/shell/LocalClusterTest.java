package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.shell.local.LocalCluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `strata local` with stand-in master and worker programs started as real processes. */
class LocalClusterTest {
  private static final LocalCluster.Role FAKE_MASTER =
      new LocalCluster.Role(
          "master",
          FakeMasterMain.class.getName(),
          "STRATA_MASTER_CLASSPATH",
          "NO_SUCH_OPTS",
          "-Xmx64m");
  private static final LocalCluster.Role FAKE_WORKER =
      new LocalCluster.Role(
          "worker",
          FakeWorkerMain.class.getName(),
          "STRATA_WORKER_CLASSPATH",
          "NO_SUCH_OPTS",
          "-Xmx32m");

  @TempDir Path dir;
  private final Map<String, String> props = new HashMap<>();
  private final Map<String, String> env = new HashMap<>();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void setUp() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    props.put("strata.home", dir.toString());
    props.put("strata.conf.dir", dir.resolve("conf").toString());
    props.put("strata.master.rpc.port", Integer.toString(port));
    // `local up` refuses ports in use, and a cluster on the default ones may be running here.
    for (String key :
        new String[] {
          "strata.master.web.port",
          "strata.master.journal.port",
          "strata.worker.rpc.port",
          "strata.worker.data.port",
          "strata.worker.web.port"
        }) {
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        props.put(key, Integer.toString(s.getLocalPort()));
      }
    }
    props.put("strata.client.local.stop.timeout", "20s");
    String cp =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    env.put("STRATA_MASTER_CLASSPATH", cp);
    env.put("STRATA_WORKER_CLASSPATH", cp);
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("STRATA_TCMALLOC", "0");
  }

  private ShellContext context() {
    return new ShellContext(
        () -> StrataConfig.load(props),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        env,
        props);
  }

  private String takeOut() {
    String s = out.toString(StandardCharsets.UTF_8);
    out.reset();
    return s;
  }

  @Test
  void aPortInUseIsNamedBeforeAnythingStarts() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
        ShellContext ctx = context()) {
      props.put("strata.worker.data.port", Integer.toString(taken.getLocalPort()));
      StrataException e =
          assertThrows(
              StrataException.class, () -> new LocalCluster(ctx, FAKE_MASTER, FAKE_WORKER).up());
      assertEquals(
          "Port "
              + taken.getLocalPort()
              + " (strata.worker.data.port) of the worker is"
              + " in use by another process, such as a cluster of another STRATA_HOME: stop it, or"
              + " give this cluster other ports (STRATA_WORKER_DATA_PORT=... or"
              + " -Dstrata.worker.data.port=...)",
          e.getMessage());
      assertFalse(Files.exists(dir.resolve("run/master.pid")), "the master was started");
    }
  }

  @Test
  void upStartsBothAndDownStopsThem() throws Exception {
    try (ShellContext ctx = context()) {
      LocalCluster cluster = new LocalCluster(ctx, FAKE_MASTER, FAKE_WORKER);
      Path masterPid = dir.resolve("run/master.pid");
      Path workerPid = dir.resolve("run/worker.pid");
      try {
        assertEquals(0, cluster.up());
        String up = takeOut();
        assertTrue(up.contains("Strata is running locally."), up);
        assertTrue(
            up.contains(
                "  master:       127.0.0.1:" + props.get("strata.master.rpc.port") + " (gRPC)"),
            up);
        assertTrue(
            up.contains(
                "  worker:       127.0.0.1 rpc port "
                    + props.get("strata.worker.rpc.port")
                    + ", data port "
                    + props.get("strata.worker.data.port")),
            up);
        assertTrue(up.contains("  logs:         " + dir.resolve("logs")), up);
        assertTrue(up.contains("Stop with: bin/strata local down"), up);
        long mpid = Long.parseLong(Files.readString(masterPid).trim());
        assertTrue(ProcessHandle.of(mpid).map(ProcessHandle::isAlive).orElse(false));
        // The pass-through of -Dstrata.* reached the child: it serves on the test's port.
        assertTrue(
            Files.readString(Path.of("/proc", Long.toString(mpid), "cmdline"))
                .contains("-Dstrata.master.rpc.port=" + props.get("strata.master.rpc.port")));

        assertEquals(0, cluster.up());
        assertTrue(takeOut().startsWith("Strata is already running locally (master pid " + mpid));
        cluster.status();
        String status = takeOut();
        assertTrue(status.contains("master: running (pid " + mpid + ")"), status);
        assertTrue(status.contains("worker: running (pid"), status);
      } finally {
        cluster.down();
      }
      String down = takeOut();
      assertTrue(down.contains("Stopped the worker (pid"), down);
      assertTrue(down.contains("Stopped the master (pid"), down);
      assertFalse(Files.exists(masterPid));
      assertFalse(Files.exists(workerPid));
      cluster.status();
      assertEquals(
          "master: not running"
              + System.lineSeparator()
              + "worker: not running"
              + System.lineSeparator(),
          takeOut());
      cluster.down();
      assertEquals("Strata is not running locally." + System.lineSeparator(), takeOut());
    }
  }

  @Test
  void upFailsWithThePathOfTheLogWhenTheMasterExits() throws Exception {
    LocalCluster.Role failing =
        new LocalCluster.Role(
            "master",
            FailingMain.class.getName(),
            "STRATA_MASTER_CLASSPATH",
            "NO_SUCH_OPTS",
            "-Xmx32m");
    try (ShellContext ctx = context()) {
      LocalCluster cluster = new LocalCluster(ctx, failing, FAKE_WORKER);
      StrataException e = assertThrows(StrataException.class, cluster::up);
      assertTrue(
          e.getMessage()
              .startsWith(
                  "The master exited during start-up (exit code 3)."
                      + " See "
                      + dir.resolve("logs/master.log")),
          e.getMessage());
      assertFalse(Files.exists(dir.resolve("run/master.pid")));
      assertTrue(Files.readString(dir.resolve("logs/master.out")).contains("port in use"));
    }
  }

  @Test
  void upOutsideTheLauncherIsAUsageError() {
    env.remove("STRATA_MASTER_CLASSPATH");
    try (ShellContext ctx = context()) {
      assertEquals(2, StrataShell.run(ctx, "local", "up"));
    }
    assertEquals(
        "strata: STRATA_MASTER_CLASSPATH is not set: run `strata local up` through the"
            + " launcher bin/strata, which sets it"
            + System.lineSeparator(),
        err.toString(StandardCharsets.UTF_8));
  }
}
