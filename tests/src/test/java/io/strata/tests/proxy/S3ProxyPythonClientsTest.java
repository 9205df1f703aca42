package io.strata.tests.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The S3 proxy with real Python clients: boto3 (a script that runs every operation the proxy
 * supports and checks each answer) and the AWS CLI's {@code aws s3} commands. Both come from the
 * virtual environment that {@code bin/setup} makes in .venv/proxy-clients, with the pinned versions
 * of tests/src/test/resources/proxy/requirements.txt; without it the test fails.
 */
class S3ProxyPythonClientsTest {
  private static final long CLIENT_TIMEOUT_SECONDS = 120;

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;
  static Path venv;

  @BeforeAll
  static void start() throws Exception {
    venv = repositoryRoot().resolve(".venv/proxy-clients");
    if (!Files.isExecutable(venv.resolve("bin/python"))
        || !Files.isExecutable(venv.resolve("bin/aws"))) {
      fail(
          "The Python S3 clients are not installed in "
              + venv
              + ": run bin/setup, which"
              + " installs them (boto3, the AWS CLI) into that virtual environment");
    }
    cluster = S3ProxyTestCluster.start(dir.resolve("cluster"), Map.of(), List.of());
    s3 = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void boto3RunsEverySupportedOperationAndItsChecksPass() throws Exception {
    Path script =
        Path.of(S3ProxyPythonClientsTest.class.getResource("/proxy/boto3_script.py").toURI());
    Result r =
        run(
            List.of(
                venv.resolve("bin/python").toString(),
                script.toString(),
                cluster.endpoint.toString(),
                S3ProxyTestCluster.ACCESS_KEY,
                S3ProxyTestCluster.SECRET_KEY,
                "boto3-bucket",
                cluster.cluster.underStoreRoot().toString()),
            Map.of(),
            dir);
    assertEquals(0, r.exitCode, "the boto3 script failed:\n" + r.output);
    assertTrue(r.output.contains("all checks passed"), r.output);
    long checks = r.output.lines().filter(l -> l.startsWith("ok ")).count();
    assertTrue(checks > 200, "only " + checks + " checks ran:\n" + r.output);
  }

  @Test
  void awsCliCopiesListsSyncsMovesPresignsAndRemoves() throws Exception {
    Path work = Files.createDirectories(dir.resolve("cli"));
    byte[] big = new byte[20 << 20];
    new Random(7).nextBytes(big);
    Files.write(work.resolve("big.bin"), big);

    aws(work, "s3", "mb", "s3://cli-bucket");
    // 20 MiB is past the CLI's multipart threshold (8 MiB): three parts of 8, 8 and 4 MiB.
    aws(work, "s3", "cp", "big.bin", "s3://cli-bucket/in/big.bin");
    HeadObjectResponse head = s3.headObject(b -> b.bucket("cli-bucket").key("in/big.bin"));
    assertEquals(big.length, head.contentLength());
    assertTrue(head.eTag().endsWith("-3\""), "not a multipart upload of 3 parts: " + head.eTag());
    assertArrayEquals(
        big, Files.readAllBytes(cluster.cluster.underStoreRoot().resolve("cli-bucket/in/big.bin")));
    aws(work, "s3", "cp", "s3://cli-bucket/in/big.bin", "down.bin");
    assertArrayEquals(big, Files.readAllBytes(work.resolve("down.bin")));

    Path folder = Files.createDirectories(work.resolve("folder/sub dir"));
    Files.writeString(work.resolve("folder/a.txt"), "alpha");
    Files.writeString(folder.resolve("b.txt"), "beta");
    Files.writeString(folder.resolve("c ü.txt"), "gamma");
    String synced = aws(work, "s3", "sync", "folder", "s3://cli-bucket/synced");
    assertEquals(3, synced.lines().filter(l -> l.startsWith("upload:")).count(), synced);
    assertEquals(
        List.of("in/big.bin", "synced/a.txt", "synced/sub dir/b.txt", "synced/sub dir/c ü.txt"),
        keys("cli-bucket"));

    String listing = aws(work, "s3", "ls", "s3://cli-bucket/synced/");
    assertTrue(listing.contains("PRE sub dir/"), listing);
    assertTrue(listing.lines().anyMatch(l -> l.matches(".*\\s5 a\\.txt")), listing);
    String recursive = aws(work, "s3", "ls", "--recursive", "s3://cli-bucket");
    assertTrue(
        recursive.lines().anyMatch(l -> l.matches(".*\\s" + big.length + " in/big\\.bin")),
        recursive);
    assertEquals(4, recursive.lines().count(), recursive);

    // A second sync sends only what changed, and --delete removes what is gone.
    Files.writeString(work.resolve("folder/a.txt"), "alpha, changed");
    Files.delete(folder.resolve("b.txt"));
    synced = aws(work, "s3", "sync", "--delete", "folder", "s3://cli-bucket/synced");
    assertEquals(
        List.of(
            "delete: s3://cli-bucket/synced/sub dir/b.txt",
            "upload: folder/a.txt to s3://cli-bucket/synced/a.txt"),
        synced.lines().sorted().toList(),
        synced);
    assertEquals(
        "alpha, changed",
        Files.readString(cluster.cluster.underStoreRoot().resolve("cli-bucket/synced/a.txt")));
    aws(work, "s3", "sync", "s3://cli-bucket/synced", "back");
    assertEquals("alpha, changed", Files.readString(work.resolve("back/a.txt")));
    assertEquals("gamma", Files.readString(work.resolve("back/sub dir/c ü.txt")));
    assertFalse(Files.exists(work.resolve("back/sub dir/b.txt")));

    // A CRC32C of the CLI's choosing, and a presigned URL that it makes.
    Files.writeString(work.resolve("small.txt"), "checked by CRC32C");
    aws(
        work,
        "s3",
        "cp",
        "--checksum-algorithm",
        "CRC32C",
        "small.txt",
        "s3://cli-bucket/in/small.txt");
    CRC32C crc = new CRC32C();
    crc.update("checked by CRC32C".getBytes(StandardCharsets.UTF_8));
    assertEquals(
        Base64.getEncoder()
            .encodeToString(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array()),
        s3.headObject(
                b -> b.bucket("cli-bucket").key("in/small.txt").checksumMode(ChecksumMode.ENABLED))
            .checksumCRC32C());
    String url = aws(work, "s3", "presign", "s3://cli-bucket/in/small.txt").trim();
    HttpResponse<String> presigned =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, presigned.statusCode(), presigned.body());
    assertEquals("checked by CRC32C", presigned.body());
    aws(work, "s3", "mv", "s3://cli-bucket/in/small.txt", "s3://cli-bucket/in/moved.txt");
    assertEquals(
        List.of("in/big.bin", "in/moved.txt", "synced/a.txt", "synced/sub dir/c ü.txt"),
        keys("cli-bucket"));

    aws(work, "s3", "rm", "s3://cli-bucket/in/big.bin");
    aws(work, "s3", "rm", "s3://cli-bucket/in/moved.txt");
    assertEquals(List.of("synced/a.txt", "synced/sub dir/c ü.txt"), keys("cli-bucket"));
    aws(work, "s3", "rm", "--recursive", "s3://cli-bucket/synced");
    assertEquals(List.of(), keys("cli-bucket"));
    aws(work, "s3", "rb", "s3://cli-bucket");
    assertFalse(Files.exists(cluster.cluster.underStoreRoot().resolve("cli-bucket")));
  }

  private static List<String> keys(String bucket) {
    return s3.listObjectsV2Paginator(b -> b.bucket(bucket)).contents().stream()
        .map(S3Object::key)
        .toList();
  }

  /** Runs the AWS CLI in {@code work} against the proxy as the test user; its output. */
  private static String aws(Path work, String... args) throws IOException, InterruptedException {
    Path config = work.resolve("aws-config");
    if (!Files.exists(config)) {
      // The CLI v1 presigns with Signature Version 2 unless told otherwise.
      Files.writeString(
          config,
          "[default]\nregion = us-east-1\ns3 =\n"
              + "  addressing_style = path\n  signature_version = s3v4\n");
    }
    Map<String, String> env = new HashMap<>();
    env.put("AWS_CONFIG_FILE", config.toString());
    env.put("AWS_SHARED_CREDENTIALS_FILE", work.resolve("no-credentials").toString());
    env.put("AWS_ACCESS_KEY_ID", S3ProxyTestCluster.ACCESS_KEY);
    env.put("AWS_SECRET_ACCESS_KEY", S3ProxyTestCluster.SECRET_KEY);
    env.put("AWS_ENDPOINT_URL", cluster.endpoint.toString());
    List<String> command = new ArrayList<>(List.of(venv.resolve("bin/aws").toString()));
    command.addAll(Arrays.asList(args));
    if (args[0].equals("s3") && (args[1].equals("cp") || args[1].equals("sync"))) {
      command.add("--no-progress");
    }
    Result r = run(command, env, work);
    assertEquals(0, r.exitCode, "aws " + String.join(" ", args) + " failed:\n" + r.output);
    return r.output;
  }

  private record Result(int exitCode, String output) {}

  private static Result run(List<String> command, Map<String, String> env, Path workDir)
      throws IOException, InterruptedException {
    Path output = Files.createTempFile(dir, "client", ".out");
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .directory(workDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    pb.environment().put("PYTHONUNBUFFERED", "1");
    pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    pb.environment().putAll(env);
    Process p = pb.start();
    if (!p.waitFor(CLIENT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      fail(
          String.join(" ", command)
              + " did not finish in "
              + CLIENT_TIMEOUT_SECONDS
              + " s:\n"
              + Files.readString(output, StandardCharsets.UTF_8));
    }
    return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
  }

  /** The repository's root: the first folder up from here with bin/setup. */
  private static Path repositoryRoot() throws URISyntaxException {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin/setup"))) {
        return p;
      }
    }
    Path classes =
        Path.of(
            S3ProxyPythonClientsTest.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
    for (Path p = classes; p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin/setup"))) {
        return p;
      }
    }
    throw new IllegalStateException("No bin/setup above " + Path.of("").toAbsolutePath());
  }
}
