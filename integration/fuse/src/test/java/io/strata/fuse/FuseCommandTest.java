package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import io.strata.shell.ShellContext;
import io.strata.shell.StrataShell;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata fuse mount | status | unmount} run in this JVM against a cluster of master and
 * worker processes; the mounts themselves are FuseMain processes started by the shell, read
 * through /dev/fuse with java.nio. A machine that cannot mount fails this test.
 */
class FuseCommandTest {
  private static final Pattern PID = Pattern.compile("pid: (\\d+)");
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static byte[] content;
  static final Map<String, String> props = new HashMap<>();
  static final Map<String, String> env = new HashMap<>(System.getenv());

  @BeforeAll
  static void start() throws Exception {
    cluster = MultiProcessCluster.builder(dir.resolve("cluster")).workers(1).start();
    Path ufs = cluster.underStoreRoot();
    Files.createDirectories(ufs.resolve("data"));
    TestTree.writeRandom(ufs.resolve("data/part-0.bin"), 3 << 20, 7);
    content = Files.readAllBytes(ufs.resolve("data/part-0.bin"));
    for (String arg : cluster.configArgs(Map.of())) {
      int eq = arg.indexOf('=');
      props.put(arg.substring(2, eq), arg.substring(eq + 1));
    }
    props.put("strata.home", dir.resolve("home").toString());
    String testCp = System.getProperty("surefire.test.class.path");
    env.put("STRATA_FUSE_CLASSPATH", testCp != null && !testCp.isEmpty() ? testCp
        : System.getProperty("java.class.path"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private record Result(int code, String out, String err) {}

  private static Result shell(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (ShellContext ctx = new ShellContext(() -> StrataConfig.load(props),
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), env, props)) {
      code = StrataShell.run(ctx, args);
    }
    return new Result(code, out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8));
  }

  private static long pidOf(Result mount) {
    Matcher m = PID.matcher(mount.out());
    assertTrue(m.find(), mount.out());
    return Long.parseLong(m.group(1));
  }

  @Test
  void mountSurvivesKillOfItsProcessByMountingAgainAndUnmountEndsIt() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Path pidFile = dir.resolve("home/fuse").resolve(
        point.toString().replaceAll("[^A-Za-z0-9._-]", "_").replaceAll("^_+", "") + ".pid");
    Optional<ProcessHandle> second = Optional.empty();
    try {
      Result mount = shell("fuse", "mount", point.toString(), "--path", "/data", "-o",
          "attr_timeout=1");
      assertEquals(0, mount.code(), mount.out() + mount.err());
      long pid = pidOf(mount);
      assertTrue(FuseMount.isMounted(point));
      assertArrayEquals(content, Files.readAllBytes(point.resolve("part-0.bin")));
      assertTrue(shell("fuse", "status").out().contains(point + "  /data  pid " + pid
          + "  mounted"));
      Path log = dir.resolve("home/logs").resolve(
          "fuse-" + pidFile.getFileName().toString().replace(".pid", ".log"));
      assertTrue(Files.readString(log).contains("native memory allocator"), Files.readString(log));

      ProcessHandle first = ProcessHandle.of(pid).orElseThrow();
      first.destroyForcibly();
      first.onExit().get(30, TimeUnit.SECONDS);
      assertTrue(FuseMount.isMounted(point), "a killed mount stays listed until unmounted");
      String status = shell("fuse", "status").out();
      assertTrue(status.contains(point + "  /data  pid " + pid + "  stale (process gone"), status);

      Result again = shell("fuse", "mount", point.toString(), "--path", "/data");
      assertEquals(0, again.code(), again.out() + again.err());
      assertTrue(again.out().contains("Cleaning the stale mount at " + point), again.out());
      long pid2 = pidOf(again);
      second = ProcessHandle.of(pid2);
      assertArrayEquals(content, Files.readAllBytes(point.resolve("part-0.bin")));
      Result busy = shell("fuse", "mount", point.toString(), "--path", "/data");
      assertEquals(1, busy.code());
      assertTrue(busy.err().contains("already mounted by pid " + pid2), busy.err());

      Result unmount = shell("fuse", "unmount", point.toString());
      assertEquals(0, unmount.code(), unmount.out() + unmount.err());
      assertFalse(FuseMount.isMounted(point));
      assertFalse(Files.exists(pidFile));
      assertTrue(second.get().onExit().get(30, TimeUnit.SECONDS) != null);
      assertFalse(second.get().isAlive());
      assertTrue(shell("fuse", "status").out().contains("No Strata FUSE mounts"));
    } finally {
      second.ifPresent(ProcessHandle::destroyForcibly);
      if (FuseMount.isMounted(point)) {
        FuseMount.lazyUnmount(point);
      }
    }
  }

  @Test
  void mountThatCannotStartPrintsTheLogTail() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt-bad"));
    Result r = shell("fuse", "mount", point.toString(), "-o", "no_such_libfuse_option");
    assertEquals(1, r.code(), r.out() + r.err());
    assertTrue(r.err().contains("Cannot mount at " + point), r.err());
    assertTrue(r.err().contains("Last lines of"), r.err());
    assertFalse(FuseMount.isMounted(point));
    assertTrue(List.of(shell("fuse", "status").out()).get(0).contains("No Strata FUSE mounts"));
  }
}
