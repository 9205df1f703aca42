package io.strata.underfs.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.underfs.UnderFileSystem;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;

class S3ErrorsTest {
  static final String BUCKET = "errors";

  @TempDir static Path data;
  static S3TestServer server;

  @BeforeAll
  static void start() throws Exception {
    server = new S3TestServer(data);
    server.createBucket(BUCKET);
    server.raw().putObject(b -> b.bucket(BUCKET).key("k"), RequestBody.fromString("v"));
  }

  @AfterAll
  static void stop() throws Exception {
    server.close();
  }

  static StrataException assertStrata(ErrorCode code, Executable call) {
    StrataException e = assertThrows(StrataException.class, call);
    assertEquals(code, e.code(), e.getMessage());
    return e;
  }

  @Test
  void wrongCredentialsArePermissionDeniedNamingTheKeysToCheck() throws Exception {
    try (UnderFileSystem ufs =
        new S3UnderFileSystemProvider()
            .open("s3://" + BUCKET, server.options(S3Options.SECRET_KEY, "not-the-secret"))) {
      byte[] buf = new byte[10];
      for (Executable call :
          new Executable[] {
            () -> ufs.getStatus("s3://" + BUCKET + "/k"),
            () -> ufs.read("s3://" + BUCKET + "/k", 0, buf, 0, 10),
            () -> ufs.list("s3://" + BUCKET)
          }) {
        StrataException e = assertStrata(ErrorCode.PERMISSION_DENIED, call);
        assertTrue(
            e.getMessage()
                .startsWith("Access denied by S3 at " + server.endpoint() + " for s3://" + BUCKET),
            e.getMessage());
        assertTrue(
            e.getMessage()
                .contains(
                    "check the access and secret keys (mount options "
                        + "s3.access.key / s3.secret.key, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)"),
            e.getMessage());
      }
    }
  }

  /** Whether this machine has AWS credentials of its own, which the store would find. */
  static boolean credentialsAround() {
    return System.getenv().keySet().stream()
            .anyMatch(
                k -> k.startsWith("AWS_") && !k.equals("AWS_CA_BUNDLE") && !k.equals("AWS_REGION"))
        || System.getProperty("aws.accessKeyId") != null
        || java.nio.file.Files.exists(Path.of(System.getProperty("user.home"), ".aws"));
  }

  @Test
  void noCredentialsAnywhereSaysWhichSettingsToGiveInOneLine() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse(
        credentialsAround(), "this machine has AWS credentials");
    Map<String, String> options = server.options();
    options.remove(S3Options.ACCESS_KEY);
    options.remove(S3Options.SECRET_KEY);
    try (UnderFileSystem ufs =
        new S3UnderFileSystemProvider().open("s3://" + BUCKET + "/p", options)) {
      StrataException e =
          assertStrata(ErrorCode.PERMISSION_DENIED, () -> ufs.getStatus("s3://" + BUCKET + "/p"));
      assertEquals(
          "No credentials for s3://"
              + BUCKET
              + "/p: set the mount options"
              + " s3.access.key and s3.secret.key, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY for"
              + " the master and workers",
          e.getMessage());
    }
  }

  @Test
  void aMissingBucketIsNotFoundSayingToCreateIt() throws Exception {
    try (UnderFileSystem ufs =
        new S3UnderFileSystemProvider().open("s3://no-such-bucket/p", server.options())) {
      byte[] buf = new byte[10];
      for (Executable call :
          new Executable[] {
            () -> ufs.getStatus("s3://no-such-bucket/p/k"),
            () -> ufs.getStatus("s3://no-such-bucket"),
            () -> ufs.read("s3://no-such-bucket/p/k", 0, buf, 0, 10),
            () -> ufs.list("s3://no-such-bucket/p"),
            () -> ufs.mkdirs("s3://no-such-bucket/p", true)
          }) {
        StrataException e = assertStrata(ErrorCode.NOT_FOUND, call);
        assertTrue(
            e.getMessage()
                .startsWith(
                    "S3 bucket 'no-such-bucket' does not exist at "
                        + server.endpoint()
                        + ": create it or fix the mount URI"),
            e.getMessage());
      }
    }
  }

  @Test
  void aStoppedServerIsUnavailableSayingToCheckTheEndpoint() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    String endpoint = "http://127.0.0.1:" + closedPort;
    try (UnderFileSystem ufs =
        new S3UnderFileSystemProvider()
            .open(
                "s3://" + BUCKET,
                server.options(S3Options.ENDPOINT, endpoint, S3Options.RETRY_MAX_ATTEMPTS, "2"))) {
      StrataException e =
          assertStrata(ErrorCode.UNAVAILABLE, () -> ufs.getStatus("s3://" + BUCKET + "/k"));
      assertTrue(
          e.getMessage()
              .startsWith(
                  "Cannot reach S3 at "
                      + endpoint
                      + ": check s3.endpoint and that the server is running"),
          e.getMessage());
      assertTrue(e.getMessage().contains("s3://" + BUCKET + "/k"), e.getMessage());
    }
  }

  @Test
  void anUnknownOptionIsRefusedNamingItAndTheValidOnes() {
    S3UnderFileSystemProvider provider = new S3UnderFileSystemProvider();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> provider.open("s3://b", Map.of("s3.endpont", "http://x")));
    assertTrue(e.getMessage().contains("'s3.endpont'"), e.getMessage());
    for (S3Options.Option o : S3Options.all()) {
      assertTrue(e.getMessage().contains(o.name()), e.getMessage());
    }
  }

  @Test
  void aBadOptionValueIsRefusedNamingTheOption() {
    Map<String, String> bad =
        Map.of(
            S3Options.PATH_STYLE, "yes",
            S3Options.PART_SIZE, "1MB",
            S3Options.MULTIPART_THRESHOLD, "big",
            S3Options.CLEANUP_AGE, "soon",
            S3Options.MAX_CONNECTIONS, "0",
            S3Options.RETRY_MAX_ATTEMPTS, "-1",
            S3Options.ENDPOINT, "ftp://127.0.0.1");
    for (Map.Entry<String, String> option : bad.entrySet()) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> S3Options.parse(Map.of(option.getKey(), option.getValue())));
      assertTrue(
          e.getMessage().contains(option.getKey()) && e.getMessage().contains(S3Options.ENDPOINT),
          e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> S3Options.parse(Map.of(S3Options.ACCESS_KEY, "only-the-id")));
    assertThrows(
        IllegalArgumentException.class,
        () -> new S3UnderFileSystemProvider().open("s3:///no-bucket", Map.of()));
  }

  @Test
  void optionsTakeTheirDefaults() {
    S3Options o = S3Options.parse(Map.of());
    assertEquals(64L << 20, o.partSize());
    assertEquals(64L << 20, o.multipartThreshold());
    assertEquals(java.time.Duration.ofHours(24), o.cleanupAge());
    assertEquals(64, o.maxConnections());
    assertEquals(5, o.retryMaxAttempts());
    assertEquals(null, o.endpoint());
    assertEquals(false, o.pathStyle());
    for (S3Options.Option option : S3Options.all()) {
      assertTrue(option.description().endsWith("."), option.name());
    }
  }
}
