package io.strata.tests.proxy;

import io.strata.tests.MultiProcessCluster;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;

/**
 * A cluster of separate processes -- master, worker and S3 proxy -- with a credentials file of
 * two users: the user running the tests (who owns the namespace) and "alice", a user with no
 * rights of her own. Shared by the proxy's end-to-end tests of one class.
 */
final class S3ProxyTestCluster implements AutoCloseable {
  static final String ACCESS_KEY = "AKSTRATATESTKEY00001";
  static final String SECRET_KEY = "c2VjcmV0LWtleS1vZi10aGUtdGVzdC11c2VyLTAwMQ";
  static final String ALICE_KEY = "AKSTRATATESTALICE001";
  static final String ALICE_SECRET = "YWxpY2Utc2VjcmV0LWtleS1mb3ItdGhlLXByb3h5MQ";

  final MultiProcessCluster cluster;
  final URI endpoint;

  private S3ProxyTestCluster(MultiProcessCluster cluster) {
    this.cluster = cluster;
    this.endpoint = URI.create("http://127.0.0.1:" + cluster.proxyPort());
  }

  static S3ProxyTestCluster start(Path dir, Map<String, String> proxyProperties,
      List<String> proxyJvmOptions) throws IOException {
    MultiProcessCluster c = MultiProcessCluster.builder(dir).workers(1)
        .property("strata.worker.tier.mem.capacity", "256MB")
        .property("strata.worker.tier.ssd.capacity", "4GB").start();
    try {
      Path credentials = dir.resolve("conf/proxy-credentials");
      Files.writeString(credentials, "# test keys\n"
          + ACCESS_KEY + " " + SECRET_KEY + " " + System.getProperty("user.name") + "\n"
          + ALICE_KEY + " " + ALICE_SECRET + " alice\n");
      Files.setPosixFilePermissions(credentials, PosixFilePermissions.fromString("rw-------"));
      c.startProxy(proxyProperties, proxyJvmOptions);
      return new S3ProxyTestCluster(c);
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** A path-style client of the test user, with the SDK's default checksums. */
  S3Client client() {
    return client(ACCESS_KEY, SECRET_KEY, false, false);
  }

  S3Client client(String accessKey, String secret, boolean virtualHost, boolean chunkedSigning) {
    return S3Client.builder().endpointOverride(virtualHost
            ? URI.create("http://s3.localhost:" + cluster.proxyPort()) : endpoint)
        .region(Region.US_EAST_1)
        .forcePathStyle(!virtualHost)
        .serviceConfiguration(S3Configuration.builder()
            .chunkedEncodingEnabled(chunkedSigning).build())
        .credentialsProvider(StaticCredentialsProvider.create(
            AwsBasicCredentials.create(accessKey, secret)))
        .build();
  }

  @Override
  public void close() {
    cluster.close();
  }
}
