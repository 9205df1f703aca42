package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The `strata` commands a user runs, against a real cluster. */
class ShellCommandsTest {
  static final long BLOCK = 1 << 20;
  @TempDir static Path dir;
  static MultiProcessCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(2)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .start();
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static MultiProcessCluster.ShellResult ok(String... args) throws Exception {
    MultiProcessCluster.ShellResult r = cluster.shell(args);
    assertEquals(0, r.exitCode(), String.join(" ", args) + " failed: " + r.stderr());
    return r;
  }

  @Test
  void copyATreeInAndOutRoundTrips() throws Exception {
    Path local = dir.resolve("local-src");
    TestTree tree = TestTree.generate(local, 120, BLOCK, 2, 3);
    ok("fs", "mkdir", "-p", "/imports");
    ok("fs", "cp", "-R", "file://" + local, "/imports/tree");
    // Written through: the under store holds the files under their final names.
    for (var e : tree.files().entrySet()) {
      Path stored = cluster.underStoreRoot().resolve("imports/tree").resolve(e.getKey());
      try (var in = Files.newInputStream(stored)) {
        assertEquals(e.getValue().sha256(), TestTree.sha256(in), e.getKey());
      }
    }
    Path back = dir.resolve("local-back");
    ok("fs", "cp", "-R", "/imports/tree", "file://" + back);
    for (var e : tree.files().entrySet()) {
      try (var in = Files.newInputStream(back.resolve(e.getKey()))) {
        assertEquals(e.getValue().sha256(), TestTree.sha256(in), e.getKey());
      }
    }
  }

  @Test
  void mountListAndUnmountASecondStore() throws Exception {
    Path other = dir.resolve("other-store");
    Files.createDirectories(other.resolve("sub"));
    Files.writeString(other.resolve("sub/hello.txt"), "hello from the other store");
    ok("fs", "mount", "/other", "file://" + other);
    assertTrue(ok("fs", "mount").stdout().contains("/other"));
    assertEquals("hello from the other store", ok("fs", "cat", "/other/sub/hello.txt").stdout());
    assertTrue(ok("fs", "ls", "/other/sub").stdout().contains("hello.txt"));
    ok("fs", "unmount", "/other");
    assertTrue(cluster.shell("fs", "stat", "/other/sub/hello.txt").exitCode() != 0);
    assertTrue(Files.exists(other.resolve("sub/hello.txt")), "unmount must not delete data");
  }

  @Test
  void locationFreeAndDuFollowTheCache() throws Exception {
    TestTree.writeRandom(cluster.underStoreRoot().resolve("cached.bin"), 5 * BLOCK, 11);
    MultiProcessCluster.ShellResult cat =
        cluster.shellToFile(dir.resolve("cached.out"), "fs", "cat", "/cached.bin");
    assertEquals(0, cat.exitCode(), cat.stderr());
    assertEquals(5 * BLOCK, Files.size(dir.resolve("cached.out")));
    MultiProcessCluster.waitFor(
        "cached.bin fully cached",
        Duration.ofSeconds(60),
        () -> {
          try {
            return cluster.shell("fs", "du", "/cached.bin").stdout().contains("100%");
          } catch (Exception e) {
            return false;
          }
        },
        null);
    String location = ok("fs", "location", "/cached.bin").stdout();
    assertTrue(location.contains("127.0.0.1"), location);
    ok("fs", "free", "/cached.bin");
    MultiProcessCluster.waitFor(
        "cached.bin freed",
        Duration.ofSeconds(60),
        () -> {
          try {
            String du = cluster.shell("fs", "du", "/cached.bin").stdout();
            return du.contains(" 0%") || du.contains("\t0%");
          } catch (Exception e) {
            return false;
          }
        },
        null);
    assertTrue(
        Files.exists(cluster.underStoreRoot().resolve("cached.bin")),
        "free must not delete the under-store file");
  }

  @Test
  void headTailStatAndReport() throws Exception {
    Files.writeString(cluster.underStoreRoot().resolve("text.txt"), "0123456789abcdef");
    assertEquals("0123", ok("fs", "head", "-c", "4", "/text.txt").stdout());
    assertEquals("cdef", ok("fs", "tail", "-c", "4", "/text.txt").stdout());
    assertTrue(ok("fs", "stat", "/text.txt").stdout().contains("16"));
    String report = ok("fsadmin", "report").stdout();
    assertTrue(report.toLowerCase(Locale.ROOT).contains("live"), report);
    assertTrue(report.contains("MEM") && report.contains("SSD"), report);
  }

  @Test
  void configurationComesFromTheSiteFileAndSystemPropertiesOverrideIt() throws Exception {
    Path conf = dir.resolve("client-conf");
    Files.createDirectories(conf);
    Files.writeString(conf.resolve("strata-site.properties"), "strata.client.rpc.timeout=never\n");
    MultiProcessCluster.ShellResult bad =
        cluster.shell(Map.of("strata.conf.dir", conf.toString()), "fs", "ls", "/");
    assertTrue(
        bad.exitCode() != 0 && bad.stderr().contains("strata.client.rpc.timeout"),
        "the site file was not read: " + bad.stderr());
    MultiProcessCluster.ShellResult good =
        cluster.shell(
            Map.of("strata.conf.dir", conf.toString(), "strata.client.rpc.timeout", "30s"),
            "fs",
            "ls",
            "/");
    assertEquals(0, good.exitCode(), "-D should override the site file: " + good.stderr());
  }
}
