package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * `bin/strata local up | status | down` as a user runs it: the launcher script, real background
 * processes, pid files and logs under STRATA_HOME.
 */
class LocalClusterCommandTest {
  @TempDir Path home;

  record Run(int exit, String out) {}

  Run strata(List<String> props, String... args) throws Exception {
    Path script = repoRoot().resolve("bin/strata");
    List<String> cmd = new ArrayList<>();
    cmd.add(script.toString());
    cmd.addAll(props);
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("STRATA_HOME", home.toString());
    Path out = home.resolve("cmd.out");
    pb.redirectOutput(out.toFile());
    Process p = pb.start();
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("strata " + String.join(" ", args) + " hung");
    }
    return new Run(p.exitValue(), Files.readString(out));
  }

  static Path repoRoot() {
    Path p = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    while (p != null && !Files.exists(p.resolve("bin/strata"))) {
      p = p.getParent();
    }
    if (p == null) {
      throw new IllegalStateException(
          "bin/strata not found above " + System.getProperty("user.dir"));
    }
    return p;
  }

  /** The last lines of every log the processes wrote, for the message of a failed start. */
  private String logTails() throws IOException {
    Path logs = home.resolve("logs");
    if (!Files.isDirectory(logs)) {
      return "\n(no logs folder)";
    }
    StringBuilder out = new StringBuilder();
    try (var files = Files.list(logs)) {
      for (Path f : files.sorted().toList()) {
        List<String> lines = Files.readAllLines(f);
        out.append("\n--- ").append(f.getFileName()).append(" ---\n");
        out.append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
      }
    }
    return out.toString();
  }

  static int freePort() throws IOException {
    return TestPorts.free("127.0.0.1");
  }

  @Test
  void localUpServesReadsAndLocalDownStopsEverything() throws Exception {
    List<String> props = new ArrayList<>();
    props.add("-Dstrata.master.rpc.port=" + freePort());
    props.add("-Dstrata.master.web.port=" + freePort());
    props.add("-Dstrata.worker.rpc.port=" + freePort());
    props.add("-Dstrata.worker.data.port=" + freePort());
    props.add("-Dstrata.worker.web.port=" + freePort());
    int proxyPort = freePort();
    props.add("-Dstrata.proxy.port=" + proxyPort);
    props.add("-Dstrata.proxy.web.port=" + freePort());
    Path memTier = Path.of("/dev/shm/strata-localup-" + ProcessHandle.current().pid());
    props.add("-Dstrata.worker.tier.mem.dir=" + memTier);
    props.add("-Dstrata.worker.tier.mem.capacity=64MB");
    props.add("-Dstrata.worker.tier.ssd.capacity=256MB");
    try {
      Run up = strata(props, "local", "up");
      assertEquals(0, up.exit(), up.out() + logTails());
      assertTrue(up.out().contains(home.toString()), "up should say where things are: " + up.out());
      assertTrue(up.out().contains("local down"), "up should say how to stop: " + up.out());

      Files.writeString(home.resolve("underfs/hello.txt"), "hello");
      Run cat = strata(props, "fs", "cat", "/hello.txt");
      assertEquals(0, cat.exit(), cat.out());
      assertTrue(cat.out().contains("hello"), cat.out());

      // The proxy runs with a key for the local user, kept in a file only that user can read.
      Path credentials = home.resolve("conf/proxy-credentials");
      assertEquals(
          "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(credentials)));
      String[] key =
          Files.readAllLines(credentials).stream()
              .filter(l -> !l.startsWith("#") && !l.isBlank())
              .findFirst()
              .orElseThrow()
              .split("\\s+");
      assertEquals(System.getProperty("user.name"), key[2]);
      assertTrue(up.out().contains("access key " + key[0]), up.out());
      Run shown = strata(props, "proxy", "credentials");
      assertEquals(0, shown.exit(), shown.out());
      assertTrue(shown.out().contains(key[0] + " " + key[1] + " " + key[2]), shown.out());
      Files.createDirectories(home.resolve("underfs/data"));
      Files.writeString(home.resolve("underfs/data/hello.txt"), "hello from S3");
      try (S3Client s3 =
          S3Client.builder()
              .endpointOverride(URI.create("http://127.0.0.1:" + proxyPort))
              .region(Region.US_EAST_1)
              .forcePathStyle(true)
              .credentialsProvider(
                  StaticCredentialsProvider.create(AwsBasicCredentials.create(key[0], key[1])))
              .build()) {
        assertEquals(
            "hello from S3",
            s3.getObjectAsBytes(b -> b.bucket("data").key("hello.txt")).asUtf8String());
        assertTrue(s3.listBuckets().buckets().stream().anyMatch(b -> b.name().equals("data")));
      }

      Run again = strata(props, "local", "up");
      assertTrue(again.out().toLowerCase(Locale.ROOT).contains("already running"), again.out());

      Run status = strata(props, "local", "status");
      assertEquals(0, status.exit(), status.out());
      assertTrue(status.out().toLowerCase(Locale.ROOT).contains("running"), status.out());
      assertTrue(status.out().contains("proxy: running (pid"), status.out());
    } finally {
      Run down = strata(props, "local", "down");
      MultiProcessCluster.deleteTree(memTier);
      assertEquals(0, down.exit(), down.out());
    }
    Run status = strata(props, "local", "status");
    assertTrue(
        status.out().toLowerCase(Locale.ROOT).contains("not running")
            || status.out().toLowerCase(Locale.ROOT).contains("stopped"),
        status.out());
    assertTrue(Files.exists(home.resolve("logs/master.log")), "master log missing");
  }
}
