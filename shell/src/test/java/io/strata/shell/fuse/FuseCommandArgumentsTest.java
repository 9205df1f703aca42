package io.strata.shell.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.ProcMounts;
import io.strata.common.conf.StrataConfig;
import io.strata.shell.ShellContext;
import io.strata.shell.ShellRun;
import io.strata.shell.ShellRun.Result;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** `strata fuse` argument handling and records, without mounting anything. */
class FuseCommandArgumentsTest {
  @TempDir Path dir;
  private final Map<String, String> env =
      new HashMap<>(Map.of("STRATA_FUSE_CLASSPATH", "/nonexistent.jar", "STRATA_TCMALLOC", "0"));

  private Result run(String... args) {
    Map<String, String> props =
        Map.of(
            "strata.home",
            dir.resolve("home").toString(),
            "strata.conf.dir",
            dir.resolve("conf").toString());
    return ShellRun.run(props, env, props, args);
  }

  @Test
  void mountSettingsAreCheckedBeforeAnythingStarts() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Result typo =
        run("fuse", "mount", point.toString(), "--conf", "strata.fuse.metadata.cache.sise=10");
    assertEquals(2, typo.code());
    assertTrue(
        typo.err().contains("Unknown configuration key 'strata.fuse.metadata.cache.sise'")
            && typo.err().contains("strata.fuse.metadata.cache.size"),
        typo.err());
    Result worker =
        run("fuse", "mount", point.toString(), "--conf", "strata.worker.tier.mem.capacity=1GB");
    assertEquals(2, worker.code());
    assertTrue(
        worker.err().contains("a mount does not read this key (it configures workers)"),
        worker.err());
    Result value = run("fuse", "mount", point.toString(), "--conf=strata.fuse.attr.timeout=soon");
    assertEquals(2, value.code());
    assertTrue(
        value
            .err()
            .contains("Bad value 'soon' for configuration key" + " 'strata.fuse.attr.timeout'"),
        value.err());
    Result shape = run("fuse", "mount", point.toString(), "--conf", "strata.fuse.attr.timeout");
    assertEquals(2, shape.code());
    assertTrue(shape.err().contains("--conf takes KEY=VALUE"), shape.err());
    assertTrue(Files.notExists(dir.resolve("home/fuse")), "nothing was recorded or started");
  }

  @Test
  void mountSettingsReachTheMountProcessAfterTheShellsOwnAndApplyToTheLauncher() {
    Map<String, String> props =
        Map.of(
            "strata.home",
            dir.resolve("home").toString(),
            "strata.fuse.heap.size",
            "1GB",
            "strata.fuse.attr.timeout",
            "5s");
    try (ShellContext ctx =
        new ShellContext(
            () -> StrataConfig.load(props),
            new PrintStream(OutputStream.nullOutputStream()),
            new PrintStream(OutputStream.nullOutputStream()),
            env,
            props)) {
      java.util.List<String> cmd =
          new FuseLauncher(ctx)
              .foregroundCommand(
                  dir.resolve("mnt"),
                  "/",
                  java.util.List.of(),
                  FuseLauncher.parseSettings(
                      java.util.List.of(
                          "strata.fuse.attr.timeout=30s",
                          "strata.fuse.heap.size=256MB",
                          "strata.client.short.circuit.enabled=false")));
      int shell = cmd.indexOf("-Dstrata.fuse.attr.timeout=5s");
      int own = cmd.indexOf("-Dstrata.fuse.attr.timeout=30s");
      assertTrue(shell >= 0 && own > shell, "the mount's own setting comes last: " + cmd);
      assertTrue(cmd.contains("-Dstrata.client.short.circuit.enabled=false"), cmd.toString());
      assertTrue(cmd.contains("-Xmx256m"), "the launcher's heap follows --conf: " + cmd);
      assertTrue(cmd.contains("-XX:TieredStopAtLevel=1"), cmd.toString());
    }
  }

  @Test
  void mountWithoutMountPointIsAUsageError() {
    Result r = run("fuse", "mount");
    assertEquals(2, r.code());
    assertTrue(r.err().contains("MOUNTPOINT"), r.err());
  }

  @Test
  void mountPointThatIsNotAFolderIsAUsageError() throws Exception {
    Path file = Files.writeString(dir.resolve("plain-file"), "x");
    Result r = run("fuse", "mount", file.toString());
    assertEquals(2, r.code());
    assertTrue(r.err().contains("Mount point is not a folder: " + file), r.err());
    Result missing = run("fuse", "mount", dir.resolve("missing").toString());
    assertEquals(2, missing.code());
    assertTrue(missing.err().contains("not a folder"), missing.err());
    assertTrue(Files.notExists(dir.resolve("home/fuse/" + MountRecord.sanitize(file) + ".pid")));
  }

  @Test
  void mountWithoutTheFuseClasspathSaysToUseTheLauncher() throws Exception {
    env.remove("STRATA_FUSE_CLASSPATH");
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Result r = run("fuse", "mount", point.toString());
    assertEquals(2, r.code());
    assertTrue(r.err().contains("STRATA_FUSE_CLASSPATH is not set"), r.err());
  }

  @Test
  void badNamespacePathIsRejected() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Result r = run("fuse", "mount", point.toString(), "--path", "relative/path");
    assertEquals(1, r.code(), r.err());
  }

  @Test
  void unmountOfAFolderThatIsNotMountedNamesIt() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Result r = run("fuse", "unmount", point.toString());
    assertEquals(1, r.code());
    assertTrue(r.err().contains("Nothing is mounted at " + point), r.err());
    assertEquals(2, run("fuse", "unmount").code());
  }

  @Test
  void statusListsRecordsAndTheirState() throws Exception {
    Result none = run("fuse", "status");
    assertEquals(0, none.code());
    assertTrue(none.out().contains("No Strata FUSE mounts"), none.out());
    Path point = Files.createDirectories(dir.resolve("mnt"));
    Path recordDir = dir.resolve("home/fuse");
    // A pid that is not a mount process: the record's process counts as gone.
    new MountRecord(
            MountRecord.fileFor(recordDir, point),
            ProcessHandle.current().pid(),
            point,
            "/data",
            dir.resolve("x.log"))
        .write();
    Result r = run("fuse", "status");
    assertEquals(0, r.code());
    assertTrue(
        r.out().contains(point + "  /data  pid " + ProcessHandle.current().pid() + "  not mounted"),
        r.out());
  }

  @Test
  void statesReadAsDocumented() {
    assertEquals("mounted", FuseLauncher.state(true, true));
    assertTrue(FuseLauncher.state(true, false).startsWith("stale (process gone"));
    assertEquals("not mounted", FuseLauncher.state(false, false));
  }

  @Test
  void mountPointsBecomeFileNamesAndProcMountsEscapesAreRead() {
    assertEquals("mnt_data_set", MountRecord.sanitize(Path.of("/mnt/data set")));
    assertEquals("/tmp/with space\\x", ProcMounts.unescape("/tmp/with\\040space\\134x"));
    assertEquals("/tmp/a\\9", ProcMounts.unescape("/tmp/a\\9"));
  }
}
