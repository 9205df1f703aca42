package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input through the command line gets a clear error on stderr and a non-zero exit. */
class ShellErrorsTest {
  @TempDir static Path dir;
  static MultiProcessCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = MultiProcessCluster.builder(dir).workers(1).start();
    Files.createDirectories(cluster.underStoreRoot().resolve("full/inner"));
    Files.writeString(cluster.underStoreRoot().resolve("full/inner/a.txt"), "a");
    Files.writeString(cluster.underStoreRoot().resolve("plain.txt"), "plain");
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  static void assertFails(MultiProcessCluster.ShellResult r, String expected) {
    assertNotEquals(0, r.exitCode(), "should have failed: " + r.stdout());
    assertTrue(r.stderr().contains(expected), "stderr was: " + r.stderr());
    assertTrue(!r.stderr().contains("\tat io.strata"), "stack trace shown: " + r.stderr());
  }

  @Test
  void aMissingPathIsNamed() throws Exception {
    assertFails(cluster.shell("fs", "cat", "/nope"), "Path does not exist: /nope");
    assertFails(cluster.shell("fs", "ls", "/nope/deeper"), "Path does not exist: /nope");
    assertFails(cluster.shell("fs", "stat", "/x"), "Path does not exist: /x");
  }

  @Test
  void anUnreachableMasterSaysWhereItLookedAndHowToSetTheAddress() throws Exception {
    MultiProcessCluster.ShellResult r = cluster.shell(Map.of("strata.master.rpc.port", "1",
        "strata.client.master.retry.max.duration", "1s"), "fs", "ls", "/");
    assertFails(r, "127.0.0.1:1");
    assertTrue(r.stderr().contains("strata.master.hostname"), r.stderr());
  }

  @Test
  void anUnknownOrBadConfigurationKeyIsNamed() throws Exception {
    assertFails(cluster.shell(Map.of("strata.client.rpc.timout", "5s"), "fs", "ls", "/"),
        "strata.client.rpc.timout");
    assertFails(cluster.shell(Map.of("strata.client.rpc.timeout", "soon"), "fs", "ls", "/"),
        "strata.client.rpc.timeout");
  }

  @Test
  void mutationsThatCannotBeDoneSayWhy() throws Exception {
    assertFails(cluster.shell("fs", "mkdir", "/plain.txt"), "/plain.txt");
    assertFails(cluster.shell("fs", "rm", "/full"), "/full");
    assertTrue(Files.exists(cluster.underStoreRoot().resolve("full/inner/a.txt")),
        "a refused rm deleted data");
    assertFails(cluster.shell("fs", "mv", "/plain.txt", "/full"), "/full");
    assertFails(cluster.shell("fs", "cat", "/full"), "/full");
    assertFails(cluster.shell("fs", "mount", "/m", "nosuch://x/y"), "nosuch");
  }

  @Test
  void aRecursiveRemoveAndAMoveWork() throws Exception {
    Files.createDirectories(cluster.underStoreRoot().resolve("gone/sub"));
    Files.writeString(cluster.underStoreRoot().resolve("gone/sub/f"), "f");
    assertEquals(0, cluster.shell("fs", "rm", "-R", "/gone").exitCode());
    assertTrue(!Files.exists(cluster.underStoreRoot().resolve("gone")));
    Files.writeString(cluster.underStoreRoot().resolve("m1.txt"), "m");
    assertEquals(0, cluster.shell("fs", "mv", "/m1.txt", "/m2.txt").exitCode());
    assertEquals("m", Files.readString(cluster.underStoreRoot().resolve("m2.txt")));
    assertFails(cluster.shell("fs", "stat", "/m1.txt"), "Path does not exist: /m1.txt");
  }
}
