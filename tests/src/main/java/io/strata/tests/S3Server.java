package io.strata.tests;

import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
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
 * A real S3 server for end-to-end tests and benchmarks: S3Proxy in this JVM on 127.0.0.1 with a
 * free port, objects in a folder, AWS V2/V4 signatures checked against one identity. Strata's
 * processes reach it over loopback like any S3 endpoint; {@link #client()} is a plain SDK client
 * for changing the bucket behind Strata's back.
 */
public final class S3Server implements AutoCloseable {
  public static final String ACCESS_KEY = "strata-e2e-access";
  public static final String SECRET_KEY = "strata-e2e-secret";

  private final S3Proxy proxy;
  private final URI endpoint;
  private final S3Client client;
  private final Path dataDir;

  public S3Server(Path dataDir) throws Exception {
    java.nio.file.Files.createDirectories(dataDir);
    this.dataDir = dataDir;
    Properties props = new Properties();
    props.setProperty("jclouds.filesystem.basedir", dataDir.toString());
    proxy =
        S3Proxy.builder()
            .blobStore(BlobStores.create("filesystem", props))
            .endpoint(URI.create("http://127.0.0.1:0"))
            .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
            .build();
    proxy.start();
    for (int i = 0; i < 3_000 && !"STARTED".equals(proxy.getState()); i++) {
      Thread.sleep(10);
    }
    if (!"STARTED".equals(proxy.getState())) {
      throw new IllegalStateException("S3Proxy did not start: " + proxy.getState());
    }
    endpoint = URI.create("http://127.0.0.1:" + proxy.getPort());
    client =
        S3Client.builder()
            .endpointOverride(endpoint)
            .region(Region.US_EAST_1)
            .forcePathStyle(true)
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
            .build();
  }

  public URI endpoint() {
    return endpoint;
  }

  public S3Client client() {
    return client;
  }

  /**
   * The file that holds object {@code key} of {@code bucket}: the server keeps each object as a
   * plain file under its folder, and serves files put there as objects. Writing them directly makes
   * a prefix of many objects in seconds, where as many PUTs through the server take minutes.
   */
  public Path objectFile(String bucket, String key) {
    return dataDir.resolve(bucket).resolve(key);
  }

  public void createBucket(String bucket) {
    client.createBucket(b -> b.bucket(bucket));
  }

  /** Mount options that reach this server with its identity. */
  public Map<String, String> mountOptions() {
    Map<String, String> options = new LinkedHashMap<>();
    options.put("s3.endpoint", endpoint.toString());
    options.put("s3.path.style", "true");
    options.put("s3.access.key", ACCESS_KEY);
    options.put("s3.secret.key", SECRET_KEY);
    return options;
  }

  @Override
  public void close() throws Exception {
    client.close();
    proxy.stop();
  }

  /**
   * Runs the server in a process of its own (for tests that pause it with SIGSTOP): {@code S3Server
   * DATA_DIR} prints {@code PORT <port>} once it serves, then serves until killed.
   */
  public static void main(String[] args) throws Exception {
    S3Server server = new S3Server(Path.of(args[0]));
    System.out.println("PORT " + server.endpoint().getPort());
    System.out.flush();
    Thread.currentThread().join();
  }
}
