package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.conf.StrataConfig;
import io.strata.master.MasterServer;
import io.strata.shell.ShellRun.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sync, load and mount-listing commands against a real master in this JVM. */
class ShellSyncTest {
  private static final String NL = System.lineSeparator();

  @TempDir Path dir;
  private MasterServer master;
  private Path ufs;
  private final Map<String, String> conf = new HashMap<>();

  @BeforeEach
  void setUp() throws Exception {
    ufs = dir.resolve("ufs");
    Files.createDirectories(ufs);
    Map<String, String> m = new HashMap<>();
    m.put("strata.home", dir.resolve("master").toString());
    m.put("strata.master.rpc.port", "0");
    m.put("strata.master.web.port", "0");
    m.put("strata.master.root.ufs", "file://" + ufs);
    m.put("strata.master.rpc.threads", "4");
    master = new MasterServer(StrataConfig.load(m));
    master.start();
    conf.put("strata.conf.dir", dir.resolve("conf").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", Integer.toString(master.rpcPort()));
    conf.put("strata.client.master.retry.max.duration", "5s");
  }

  @AfterEach
  void tearDown() throws Exception {
    master.close();
  }

  private Result run(String... args) {
    return ShellRun.run(conf, args);
  }

  private void write(String relative, int bytes) throws Exception {
    Path p = ufs.resolve(relative);
    Files.createDirectories(p.getParent());
    Files.write(p, new byte[bytes]);
  }

  private static List<String> paths(Result r) {
    return r.out().lines().map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
  }

  @Test
  void lsRecursiveWithSyncSeesFilesAddedInTheStore() throws Exception {
    write("data/a/1.bin", 1);
    assertEquals(List.of("/data/a/", "/data/a/1.bin"), paths(run("fs", "ls", "-R", "/data")));
    write("data/a/2.bin", 2);
    write("data/b/3.bin", 3);
    assertEquals(
        List.of("/data/a/", "/data/a/1.bin"),
        paths(run("fs", "ls", "-R", "/data")),
        "without --sync the namespace stays as loaded");
    Result synced = run("fs", "ls", "-R", "--sync", "/data");
    assertEquals(0, synced.code(), synced.err());
    assertEquals(
        List.of("/data/a/", "/data/a/1.bin", "/data/a/2.bin", "/data/b/", "/data/b/3.bin"),
        paths(synced));

    write("data/a/1.bin", 1000);
    assertTrue(run("fs", "stat", "/data/a/1.bin").out().contains("Size:        1 (1B)" + NL));
    Result stat = run("fs", "stat", "--sync", "/data/a/1.bin");
    assertTrue(stat.out().contains("Size:        1000 (1000B)" + NL), stat.out());
    Result ls = run("fs", "ls", "--sync", "/data/a/2.bin");
    assertEquals(List.of("/data/a/2.bin"), paths(ls));
  }

  @Test
  void loadMetadataOnlyPrintsTheTotals() throws Exception {
    for (int d = 0; d < 3; d++) {
      for (int f = 0; f < 40; f++) {
        write("set/d" + d + "/f" + f, 10);
      }
    }
    Result r = run("fs", "load", "--metadata-only", "/set");
    assertEquals(0, r.code(), r.err());
    assertEquals(1, r.out().lines().count(), r.out());
    assertTrue(
        Pattern.matches(
            "Loaded metadata of /set: 120 files, 4 directories, 1\\.2KiB in"
                + " \\d+\\.\\ds \\(\\d+ files/s\\)"
                + NL,
            r.out()),
        r.out());
    for (String line : r.err().lines().toList()) {
      assertTrue(
          Pattern.matches("Loading /set: \\d+ files, \\d+ directories, \\d+ files/s", line), line);
    }
    Result count = run("fs", "count", "/set");
    assertTrue(count.out().contains("           4          120"), count.out());

    write("set/d9/new", 5);
    Result again = run("fs", "load", "--metadata-only", "--sync", "/set");
    assertTrue(
        again.out().startsWith("Loaded metadata of /set: 121 files, 5 directories"), again.out());
  }

  @Test
  void loadMetadataOnlyOfAMissingPathExitsWithOne() {
    Result missing = run("fs", "load", "--metadata-only", "/nowhere");
    assertEquals(1, missing.code());
    assertEquals("", missing.out());
    assertEquals("strata: Path does not exist: /nowhere" + NL, missing.err());
  }

  @Test
  void mountListingMasksSecretValues() throws Exception {
    Path store = dir.resolve("store");
    Files.createDirectories(store);
    Result m =
        run(
            "fs",
            "mount",
            "/s",
            "options://" + store,
            "--option",
            "s3.secret.key=abc",
            "--option",
            "s3.access.key=AKID",
            "--option",
            "region=eu",
            "--option",
            "sync.interval=30s");
    assertEquals(0, m.code(), m.err());
    Result list = run("fs", "mount");
    assertEquals(
        "/s  options://"
            + store
            + "  rw  region=eu,s3.access.key=AKID,"
            + "s3.secret.key=******,sync.interval=30s",
        list.out().lines().toList().get(1));
    assertFalse(list.out().contains("abc"));
    Result bad = run("fs", "mount", "/b", "file://" + store, "--option", "sync.interval=soon");
    assertEquals(1, bad.code());
    assertTrue(
        bad.err().contains("bad option sync.interval: 'soon' is not a sync interval"), bad.err());
  }
}
