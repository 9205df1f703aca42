package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
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

  /** A Java class name such as java.net.ConnectException or io.grpc.StatusRuntimeException. */
  static final Pattern JAVA_NAME = Pattern.compile("\\b[a-z]+(\\.[a-z0-9_]+)+\\.[A-Z]\\w*\\b");

  static void assertFails(MultiProcessCluster.ShellResult r, String expected) {
    assertNotEquals(0, r.exitCode(), "should have failed: " + r.stdout());
    assertTrue(r.stderr().contains(expected), "stderr was: " + r.stderr());
    assertTrue(!r.stderr().contains("\tat "), "stack trace shown: " + r.stderr());
  }

  /**
   * Fails as {@link #assertFails}, with one line that names no Java class, exception or gRPC
   * status.
   */
  static void assertFailsInOneLine(MultiProcessCluster.ShellResult r, String expected) {
    assertFails(r, expected);
    String err = r.stderr().strip();
    assertEquals(1, err.lines().count(), "more than one line: " + err);
    assertTrue(err.startsWith("strata: "), err);
    assertFalse(JAVA_NAME.matcher(err).find(), "a Java name shown: " + err);
    for (String raw : List.of("Exception", "UNAVAILABLE", "io exception", "Status{")) {
      assertFalse(err.contains(raw), "'" + raw + "' shown: " + err);
    }
  }

  @Test
  void aMissingPathIsNamed() throws Exception {
    assertFailsInOneLine(cluster.shell("fs", "cat", "/nope"), "Path does not exist: /nope");
    assertFails(cluster.shell("fs", "ls", "/nope/deeper"), "Path does not exist: /nope");
    assertFails(cluster.shell("fs", "stat", "/x"), "Path does not exist: /x");
  }

  @Test
  void anUnreachableMasterSaysWhereItLookedAndHowToSetTheAddress() throws Exception {
    MultiProcessCluster.ShellResult r =
        cluster.shell(
            Map.of("strata.master.rpc.port", "1", "strata.client.master.retry.max.duration", "1s"),
            "fs",
            "ls",
            "/");
    assertFailsInOneLine(r, "127.0.0.1:1");
    assertTrue(r.stderr().contains("strata.master.hostname"), r.stderr());
    assertTrue(r.stderr().contains("strata local up"), r.stderr());
  }

  @Test
  void unreachableMastersAmongSeveralAreListedWithWhatWentWrong() throws Exception {
    MultiProcessCluster.ShellResult r =
        cluster.shell(
            Map.of(
                "strata.master.addresses", "127.0.0.1:1,127.0.0.1:2",
                "strata.client.master.failover.timeout", "1s",
                "strata.client.master.retry.max.duration", "1s"),
            "fs",
            "stat",
            "/");
    assertFailsInOneLine(r, "127.0.0.1:1 [connection refused], 127.0.0.1:2 [connection refused]");
  }

  @Test
  void anS3MountWithoutCredentialsSaysWhichToSetInOneLine() throws Exception {
    assumeFalse(
        System.getenv().keySet().stream()
            .anyMatch(
                k ->
                    k.startsWith("AWS_ACCESS")
                        || k.startsWith("AWS_PROFILE")
                        || k.startsWith("AWS_WEB_IDENTITY")
                        || k.startsWith("AWS_CONTAINER")),
        "this machine has AWS credentials");
    assumeFalse(
        Files.exists(Path.of(System.getProperty("user.home"), ".aws")),
        "this machine has AWS profile files");
    MultiProcessCluster.ShellResult r =
        cluster.shell(
            "fs", "mount", "/s3", "s3://bucket/p", "--option", "s3.endpoint=http://127.0.0.1:9/");
    assertFailsInOneLine(
        r,
        "strata: No credentials for s3://bucket/p: set the mount options"
            + " s3.access.key and s3.secret.key, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY");
    assertTrue(r.stderr().length() < 200, r.stderr());
  }

  @Test
  void anUnderStoreTheMasterCannotReachIsNamedNotTheMaster() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closed = s.getLocalPort();
    }
    MultiProcessCluster.ShellResult r =
        cluster.shell(
            Map.of("strata.client.master.retry.max.duration", "1s"),
            "fs",
            "mount",
            "/h",
            "hdfs://127.0.0.1:" + closed + "/x");
    assertFailsInOneLine(r, "Cannot reach the HDFS namenode at 127.0.0.1:" + closed);
    assertFalse(r.stderr().contains("Strata master"), r.stderr());
  }

  @Test
  void aFileOfThisMachineThatCannotBeWrittenIsNamed() throws Exception {
    assertFailsInOneLine(
        cluster.shell("fs", "cp", "/plain.txt", "local:" + dir.resolve("no-such-folder/copy")),
        dir.resolve("no-such-folder/copy") + ": no such file or directory");
  }

  @Test
  void anUnknownOrBadConfigurationKeyIsNamed() throws Exception {
    assertFails(
        cluster.shell(Map.of("strata.client.rpc.timout", "5s"), "fs", "ls", "/"),
        "strata.client.rpc.timout");
    assertFails(
        cluster.shell(Map.of("strata.client.rpc.timeout", "soon"), "fs", "ls", "/"),
        "strata.client.rpc.timeout");
  }

  @Test
  void mutationsThatCannotBeDoneSayWhy() throws Exception {
    assertFails(cluster.shell("fs", "mkdir", "/plain.txt"), "/plain.txt");
    assertFails(cluster.shell("fs", "rm", "/full"), "/full");
    assertTrue(
        Files.exists(cluster.underStoreRoot().resolve("full/inner/a.txt")),
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
