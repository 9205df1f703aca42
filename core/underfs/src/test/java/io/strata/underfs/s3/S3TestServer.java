package io.strata.underfs.s3;

import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.gaul.s3proxy.BlobStores;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A real S3 server for tests: S3Proxy in this JVM on 127.0.0.1 and a free port, storing objects in
 * a folder, checking AWS V2 or V4 signatures against one test identity. It also hands out a plain
 * SDK client, to look at the bucket behind the store's back.
 */
final class S3TestServer implements AutoCloseable {
  static final String ACCESS_KEY = "strata-test-access";
  static final String SECRET_KEY = "strata-test-secret";

  private final S3Proxy proxy;
  private final URI endpoint;
  private final S3Client raw;

  S3TestServer(Path dataDir) throws Exception {
    Properties props = new Properties();
    props.setProperty("jclouds.filesystem.basedir", dataDir.toString());
    proxy =
        S3Proxy.builder()
            .blobStore(BlobStores.create("filesystem", props))
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .build();
    proxy.start();
    await("S3Proxy to report started")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(10))
        .until(proxy::getState, "STARTED"::equals);
    endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
    raw = client();
  }

  /**
   * A new client of the server, with {@code interceptors} on every call (to count or break
   * requests); the caller closes it.
   */
  S3Client client(software.amazon.awssdk.core.interceptor.ExecutionInterceptor... interceptors) {
    return S3Client.builder()
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .forcePathStyle(true)
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
        .overrideConfiguration(
            o -> {
              for (software.amazon.awssdk.core.interceptor.ExecutionInterceptor i : interceptors) {
                o.addExecutionInterceptor(i);
              }
            })
        .build();
  }

  URI endpoint() {
    return endpoint;
  }

  /** A client straight to the server, outside any store. */
  S3Client raw() {
    return raw;
  }

  void createBucket(String bucket) {
    raw.createBucket(b -> b.bucket(bucket));
  }

  /** Mount options that reach this server with the test identity. */
  Map<String, String> options() {
    Map<String, String> options = new HashMap<>();
    options.put(S3Options.ENDPOINT, endpoint.toString());
    options.put(S3Options.PATH_STYLE, "true");
    options.put(S3Options.ACCESS_KEY, ACCESS_KEY);
    options.put(S3Options.SECRET_KEY, SECRET_KEY);
    return options;
  }

  /** Mount options with some replaced or added. */
  Map<String, String> options(String... keyValues) {
    Map<String, String> options = options();
    for (int i = 0; i + 1 < keyValues.length; i += 2) {
      options.put(keyValues[i], keyValues[i + 1]);
    }
    return options;
  }

  @Override
  public void close() throws Exception {
    raw.close();
    proxy.stop();
  }
}
