package io.strata.fuse;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.shell.ShellRun;
import io.strata.shell.ShellRun.Result;
import io.strata.shell.StrataShell;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 * worker processes; the mounts themselves are FuseMain processes started by the shell, read through
 * /dev/fuse with java.nio. A machine that cannot mount fails this test.
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
    env.put(
        "STRATA_FUSE_CLASSPATH",
        testCp != null && !testCp.isEmpty() ? testCp : System.getProperty("java.class.path"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Result shell(String... args) {
    return ShellRun.run(props, env, props, args);
  }

  private static String sanitized(Path point) {
    return point.toString().replaceAll("[^A-Za-z0-9._-]", "_").replaceAll("^_+", "");
  }

  private static long pidOf(Result mount) {
    Matcher m = PID.matcher(mount.out());
    assertTrue(m.find(), mount.out());
    return Long.parseLong(m.group(1));
  }

  @Test
  void mountSurvivesKillOfItsProcessByMountingAgainAndUnmountEndsIt() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Path pidFile =
        dir.resolve("home/fuse")
            .resolve(
                point.toString().replaceAll("[^A-Za-z0-9._-]", "_").replaceAll("^_+", "") + ".pid");
    Optional<ProcessHandle> second = Optional.empty();
    try {
      Result mount =
          shell("fuse", "mount", point.toString(), "--path", "/data", "-o", "attr_timeout=1");
      assertEquals(0, mount.code(), mount.out() + mount.err());
      long pid = pidOf(mount);
      assertTrue(FuseMount.isMounted(point));
      assertArrayEquals(content, Files.readAllBytes(point.resolve("part-0.bin")));
      assertTrue(
          shell("fuse", "status").out().contains(point + "  /data  pid " + pid + "  mounted"));
      Path log =
          dir.resolve("home/logs")
              .resolve("fuse-" + pidFile.getFileName().toString().replace(".pid", ".log"));
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
  void backgroundMountWritesItsOwnLogAndEmptiesTheOutFileAtStart() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt-log"));
    Path logs = Files.createDirectories(dir.resolve("home/logs"));
    Path log = logs.resolve("fuse-" + sanitized(point) + ".log");
    Path out = logs.resolve("fuse-" + sanitized(point) + ".out");
    Files.writeString(out, "left by an earlier run\n");
    try {
      Result mount = shell("fuse", "mount", point.toString(), "--path", "/data");
      assertEquals(0, mount.code(), mount.out() + mount.err());
      assertTrue(mount.out().contains("  log: " + log), mount.out());
      assertArrayEquals(content, Files.readAllBytes(point.resolve("part-0.bin")));
      // The start line is in the log and not in the .out file: logback in the mount process
      // wrote it through the rotating configuration, not the launcher's redirect of stderr.
      String logText = Files.readString(log);
      assertTrue(
          logText.contains("INFO  [main] io.strata.fuse.FuseMain - Strata FUSE mount" + " starting")
              && logText.contains("native memory allocator"),
          logText);
      String outText = Files.readString(out);
      assertFalse(outText.contains("left by an earlier run"), outText);
      assertFalse(outText.contains("native memory allocator"), outText);
      long pid = pidOf(mount);
      String cmdline = Files.readString(Path.of("/proc", Long.toString(pid), "cmdline"));
      assertTrue(
          cmdline.contains("-Dlogback.configurationFile=strata-fuse-logback-file.xml"), cmdline);
      assertTrue(cmdline.contains("-Dstrata.fuse.log.max.size=67108864"), cmdline);
      assertTrue(cmdline.contains("-Dstrata.fuse.log.max.files=5"), cmdline);

      Result unmount = shell("fuse", "unmount", point.toString());
      assertEquals(0, unmount.code(), unmount.out() + unmount.err());
      assertFalse(FuseMount.isMounted(point));
    } finally {
      if (FuseMount.isMounted(point)) {
        FuseMount.lazyUnmount(point);
      }
    }
  }

  @Test
  void foregroundMountServesUntilUnmountedThenExitsWithZero() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt-fg"));
    List<String> cmd =
        new ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    for (Map.Entry<String, String> e : props.entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    cmd.addAll(
        List.of(
            "-cp",
            env.get("STRATA_FUSE_CLASSPATH"),
            StrataShell.class.getName(),
            "fuse",
            "mount",
            point.toString(),
            "--path",
            "/data",
            "-f"));
    Path output = dir.resolve("foreground-mount.txt");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(output.toFile());
    pb.environment().clear();
    pb.environment().putAll(env);
    Process foreground = pb.start();
    try {
      // Bounded by the mount's own 30 s start timeout plus two JVM starts on a busy machine.
      await("the foreground mount to mount, or its process to exit")
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> FuseMount.isMounted(point) || !foreground.isAlive());
      assertTrue(
          FuseMount.isMounted(point), "not mounted; its output:\n" + Files.readString(output));
      assertArrayEquals(content, Files.readAllBytes(point.resolve("part-0.bin")));
      String status = shell("fuse", "status").out();
      assertTrue(status.contains(point + "  /data  pid ") && status.contains("  mounted"), status);

      Result unmount = shell("fuse", "unmount", point.toString());
      assertEquals(0, unmount.code(), unmount.out() + unmount.err());
      assertTrue(foreground.waitFor(60, TimeUnit.SECONDS), "the foreground mount did not exit");
      assertEquals(0, foreground.exitValue(), Files.readString(output));
      assertFalse(FuseMount.isMounted(point));
      assertTrue(
          Files.readString(output).contains("native memory allocator"),
          "the foreground mount logs to the terminal: " + Files.readString(output));
      assertTrue(shell("fuse", "status").out().contains("No Strata FUSE mounts"));
    } finally {
      foreground.descendants().forEach(ProcessHandle::destroyForcibly);
      foreground.destroyForcibly();
      if (FuseMount.isMounted(point)) {
        FuseMount.lazyUnmount(point);
      }
    }
  }

  /**
   * A mount killed (kill -9) while a file it was writing is still open leaves the file in the under
   * store and the namespace at its previous version, never a mix; the bytes written are in its
   * staged copy, which the next mount at that point names in its log.
   */
  @Test
  void aMountKilledBeforeCloseLeavesThePreviousVersionAndReportsItsStagedCopy() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt-kill"));
    Path ufsFile = cluster.underStoreRoot().resolve("data/part-0.bin");
    Optional<ProcessHandle> second = Optional.empty();
    Process writer = null;
    try {
      Result mount = shell("fuse", "mount", point.toString(), "--path", "/data");
      assertEquals(0, mount.code(), mount.out() + mount.err());
      long pid = pidOf(mount);
      // Writes into the middle of the file and keeps it open, as a job killed with its mount.
      writer =
          new ProcessBuilder(
                  "python3",
                  "-c",
                  "import os,sys,time\n"
                      + "fd = os.open(sys.argv[1], os.O_RDWR)\n"
                      + "os.pwrite(fd, b'CHANGED' * 1000, 100)\n"
                      + "print('written', flush=True)\n"
                      + "time.sleep(120)\n",
                  point.resolve("part-0.bin").toString())
              .redirectErrorStream(true)
              .start();
      java.io.BufferedReader out =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(writer.getInputStream(), StandardCharsets.UTF_8));
      assertEquals("written", out.readLine());
      ProcessHandle.of(pid).orElseThrow().destroyForcibly();
      ProcessHandle.of(pid).orElseThrow().onExit().get(30, TimeUnit.SECONDS);
      writer.destroyForcibly();
      writer.waitFor(30, TimeUnit.SECONDS);

      assertArrayEquals(content, Files.readAllBytes(ufsFile), "the store has the old version");
      Path staging = dir.resolve("home/fuse/staging");
      List<Path> notes;
      try (java.util.stream.Stream<Path> files = Files.walk(staging)) {
        notes = files.filter(p -> p.toString().endsWith(".info")).toList();
      }
      assertEquals(1, notes.size(), "one staged copy left: " + notes);
      assertTrue(
          Files.readString(notes.get(0)).contains("path /data/part-0.bin"),
          Files.readString(notes.get(0)));

      Result again = shell("fuse", "mount", point.toString(), "--path", "/data");
      assertEquals(0, again.code(), again.out() + again.err());
      second = ProcessHandle.of(pidOf(again));
      assertArrayEquals(
          content,
          Files.readAllBytes(point.resolve("part-0.bin")),
          "readers see the previous version");
      Path log = dir.resolve("home/logs").resolve("fuse-" + sanitized(point) + ".log");
      String logText = Files.readString(log);
      assertTrue(
          logText.contains("A staged copy was not written through")
              && logText.contains("path /data/part-0.bin"),
          logText);
      Result unmount = shell("fuse", "unmount", point.toString());
      assertEquals(0, unmount.code(), unmount.out() + unmount.err());
    } finally {
      if (writer != null) {
        writer.destroyForcibly();
      }
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
    // libfuse's complaint goes to stderr, which is the .out file, and is shown as well.
    assertTrue(
        r.err()
                .contains(
                    "Last lines of " + dir.resolve("home/logs/fuse-" + sanitized(point) + ".out"))
            && r.err().contains("no_such_libfuse_option"),
        r.err());
    assertFalse(FuseMount.isMounted(point));
    assertTrue(List.of(shell("fuse", "status").out()).get(0).contains("No Strata FUSE mounts"));
  }
}
