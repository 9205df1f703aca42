package io.strata.tests.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.client.SyncOption;
import io.strata.common.PathNames;
import io.strata.proto.FileInfo;
import io.strata.proto.LoadMetadataProgress;
import io.strata.tests.MultiProcessCluster;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.function.Executable;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * A cluster of separate processes -- master, worker and S3 proxy -- with a credentials file of
 * three users: the user running the tests (who owns the namespace) and "alice" and "bob", users
 * with no rights of their own. The proxy serves virtual-host-style requests under {@link #DOMAIN}.
 * Shared by the proxy's end-to-end tests of one class, with the helpers they have in common: SDK
 * clients of either addressing style, a namespace client, requests signed by the SDK's signer and
 * sent as they are, and checks of S3 error answers.
 */
final class S3ProxyTestCluster implements AutoCloseable {
  static final String ACCESS_KEY = "AKSTRATATESTKEY00001";
  static final String SECRET_KEY = "c2VjcmV0LWtleS1vZi10aGUtdGVzdC11c2VyLTAwMQ";
  static final String ALICE_KEY = "AKSTRATATESTALICE001";
  static final String ALICE_SECRET = "YWxpY2Utc2VjcmV0LWtleS1mb3ItdGhlLXByb3h5MQ";
  static final String BOB_KEY = "AKSTRATATESTBOB00001";
  static final String BOB_SECRET = "Ym9iLXNlY3JldC1rZXktZm9yLXRoZS1wcm94eS10ZXN0cw";

  /** The domain of virtual-host-style addressing: BUCKET.s3.localhost. */
  static final String DOMAIN = "s3.localhost";

  final MultiProcessCluster cluster;
  final URI endpoint;
  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(10))
          .build();
  private FileSystem fs;

  private S3ProxyTestCluster(MultiProcessCluster cluster) {
    this.cluster = cluster;
    this.endpoint = URI.create("http://127.0.0.1:" + cluster.proxyPort());
  }

  static S3ProxyTestCluster start(
      Path dir, Map<String, String> proxyProperties, List<String> proxyJvmOptions)
      throws IOException {
    // The master persists ASYNC_THROUGH objects only when asked (after its first round), so a
    // test sees an object before it is in the under store.
    MultiProcessCluster c =
        MultiProcessCluster.builder(dir)
            .workers(1)
            .property("strata.worker.tier.mem.capacity", "256MB")
            .property("strata.worker.tier.ssd.capacity", "4GB")
            .property("strata.master.persist.interval", "1h")
            // Lifecycle expiry is seen in seconds: the master acts on times to live every second.
            .property("strata.master.ttl.check.interval", "1s")
            .start();
    try {
      c.writeProxyCredentials(
          ACCESS_KEY + " " + SECRET_KEY + " " + System.getProperty("user.name"),
          ALICE_KEY + " " + ALICE_SECRET + " alice",
          BOB_KEY + " " + BOB_SECRET + " bob");
      Map<String, String> props = new java.util.LinkedHashMap<>();
      props.put("strata.proxy.domain", DOMAIN);
      props.putAll(proxyProperties);
      c.startProxy(props, proxyJvmOptions);
      return new S3ProxyTestCluster(c);
    } catch (IOException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  static S3ProxyTestCluster start(Path dir) throws IOException {
    return start(dir, Map.of(), List.of());
  }

  private static S3ProxyTestCluster shared;

  /** How long a day of a lifecycle rule lasts in the shared cluster. */
  static final Duration LIFECYCLE_DAY = Duration.ofSeconds(3);

  /**
   * The cluster of default settings that the proxy's end-to-end classes share, each with buckets of
   * its own: started by the first class that asks, stopped when the test JVM exits. Starting a
   * master, a worker and a proxy costs seconds, which one cluster per class paid again and again.
   */
  static synchronized S3ProxyTestCluster shared() throws IOException {
    if (shared == null) {
      Path dir = Files.createTempDirectory("strata-s3-proxy-tests");
      // A lifecycle day of 3 s and a sweep every 2 s, so that expiry is seen within a test.
      S3ProxyTestCluster c =
          start(
              dir.resolve("cluster"),
              Map.of(
                  "strata.proxy.lifecycle.day",
                  LIFECYCLE_DAY.toMillis() + "ms",
                  "strata.proxy.lifecycle.sweep.interval",
                  "2s"),
              List.of());
      Runtime.getRuntime()
          .addShutdownHook(
              new Thread(
                  () -> {
                    c.close();
                    try (Stream<Path> files = Files.walk(dir)) {
                      files
                          .sorted(java.util.Comparator.reverseOrder())
                          .forEach(f -> f.toFile().delete());
                    } catch (IOException | RuntimeException e) {
                      // The temporary folder stays; nothing depends on it.
                    }
                  },
                  "stop-shared-s3-proxy-cluster"));
      shared = c;
    }
    return shared;
  }

  /** A path-style client of the test user, with the SDK's default checksums. */
  S3Client client() {
    return client(ACCESS_KEY, SECRET_KEY, false, false);
  }

  /**
   * A client of one access key. A virtual-host-style client sends BUCKET.s3.localhost in its Host
   * header; the names are resolved to 127.0.0.1 by the client itself, since glibc does not resolve
   * *.localhost without a resolver that knows RFC 6761.
   */
  S3Client client(String accessKey, String secret, boolean virtualHost, boolean chunkedSigning) {
    return S3Client.builder()
        .endpointOverride(
            virtualHost ? URI.create("http://" + DOMAIN + ":" + cluster.proxyPort()) : endpoint)
        .region(Region.US_EAST_1)
        .forcePathStyle(!virtualHost)
        .httpClient(
            ApacheHttpClient.builder()
                .dnsResolver(
                    host -> {
                      if (host.equals("localhost") || host.endsWith(".localhost")) {
                        return new InetAddress[] {InetAddress.getLoopbackAddress()};
                      }
                      return InetAddress.getAllByName(host);
                    })
                .build())
        .serviceConfiguration(
            S3Configuration.builder().chunkedEncodingEnabled(chunkedSigning).build())
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(accessKey, secret)))
        .build();
  }

  /** A presigner of the test user for path-style URLs. */
  S3Presigner presigner() {
    return S3Presigner.builder()
        .endpointOverride(endpoint)
        .region(Region.US_EAST_1)
        .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
        .credentialsProvider(
            StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
        .build();
  }

  /** A client of the namespace (closed with the cluster). */
  synchronized FileSystem fs() {
    if (fs == null) {
      fs = FileSystem.connect(cluster.clientConfig());
    }
    return fs;
  }

  /** The under-store file or folder of a namespace path such as "/bucket/key". */
  Path ufs(String path) {
    return cluster.underStoreRoot().resolve(path.startsWith("/") ? path.substring(1) : path);
  }

  /**
   * Every file below a namespace folder, as keys relative to it, as the namespace lists them;
   * folders are listed as "name/" when empty. Hidden entries (staged uploads) are not listed by the
   * namespace, which this checks too.
   */
  List<String> namespaceKeys(String dir) throws Exception {
    TreeSet<String> out = new TreeSet<>();
    walk(dir, "", out);
    return new ArrayList<>(out);
  }

  private void walk(String dir, String prefix, TreeSet<String> out) throws Exception {
    boolean any = false;
    try (CloseableIterator<FileInfo> it = fs().listStatus(dir)) {
      while (it.hasNext()) {
        any = true;
        FileInfo f = it.next();
        if (f.getName().equals(PathNames.UPLOADS_FOLDER)) {
          throw new AssertionError("The namespace lists the hidden uploads folder in " + dir);
        }
        if (f.getDirectory()) {
          walk(f.getPath(), prefix + f.getName() + "/", out);
        } else {
          out.add(prefix + f.getName());
        }
      }
    }
    if (!any && !prefix.isEmpty()) {
      out.add(prefix);
    }
  }

  /**
   * Makes the master take in what was written straight into the under store below a namespace path
   * (much faster than as many PUTs), and waits until it has.
   */
  void loadFromUnderStore(String path) throws Exception {
    try (CloseableIterator<LoadMetadataProgress> it = fs().loadMetadata(path, SyncOption.ALWAYS)) {
      LoadMetadataProgress last = null;
      while (it.hasNext()) {
        last = it.next();
      }
      if (last == null || !last.getDone() || last.getFailedPathsCount() > 0) {
        throw new AssertionError("Loading " + path + " did not finish: " + last);
      }
    }
  }

  /** Every regular file below an under-store folder, relative to it, '/'-separated. */
  static List<String> ufsFiles(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return List.of();
    }
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(Files::isRegularFile)
          .map(p -> dir.relativize(p).toString())
          .sorted()
          .toList();
    }
  }

  /** A request as received, with its body. */
  record Response(int status, Map<String, List<String>> headers, byte[] body) {
    String header(String name) {
      for (Map.Entry<String, List<String>> e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue().get(0);
        }
      }
      return null;
    }

    String text() {
      return new String(body, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The {@code <Code>} of the S3 error document in the body. */
    String errorCode() {
      String t = text();
      int a = t.indexOf("<Code>");
      int b = t.indexOf("</Code>");
      if (!t.contains("<Error>") || a < 0 || b < a) {
        throw new AssertionError("Not an S3 error document (" + status + "): " + t);
      }
      return t.substring(a + "<Code>".length(), b);
    }
  }

  /**
   * Sends a request signed in its Authorization header by the SDK's SigV4 signer, with a clock of
   * the caller's choice, the payload's SHA-256 signed; {@code secret} null sends it unsigned
   * (anonymous).
   */
  Response signed(
      String method,
      String pathAndQuery,
      Map<String, String> headers,
      byte[] body,
      String accessKey,
      String secret,
      Clock clock)
      throws Exception {
    return signed(method, pathAndQuery, pathAndQuery, headers, body, accessKey, secret, clock);
  }

  /**
   * {@link #signed(String, String, Map, byte[], String, String, Clock)} of one request target, sent
   * with another: for targets that canonicalise to the signed one but that the SDK's signer would
   * sign as they are (percent-encoded slashes).
   */
  Response signed(
      String method,
      String signedPathAndQuery,
      String sentPathAndQuery,
      Map<String, String> headers,
      byte[] body,
      String accessKey,
      String secret,
      Clock clock)
      throws Exception {
    URI uri = URI.create(endpoint + sentPathAndQuery);
    HttpRequest.Builder out =
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(30))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofByteArray(body));
    for (Map.Entry<String, List<String>> h :
        signedHeaders(method, signedPathAndQuery, headers, body, accessKey, secret, clock)
            .entrySet()) {
      String name = h.getKey().toLowerCase(Locale.ROOT);
      if (name.equals("host") || name.equals("content-length")) {
        continue;
      }
      for (String v : h.getValue()) {
        out.header(h.getKey(), v);
      }
    }
    return send(out.build());
  }

  /**
   * Sends a request signed for one body with another: a body changed on its way, which the
   * signature's payload hash must catch.
   */
  Response signedForAnotherBody(
      String method, String pathAndQuery, byte[] signedBody, byte[] sentBody) throws Exception {
    HttpRequest.Builder out =
        HttpRequest.newBuilder(URI.create(endpoint + pathAndQuery))
            .timeout(Duration.ofSeconds(30))
            .method(method, HttpRequest.BodyPublishers.ofByteArray(sentBody));
    for (Map.Entry<String, List<String>> h :
        signedHeaders(
                method,
                pathAndQuery,
                Map.of(),
                signedBody,
                ACCESS_KEY,
                SECRET_KEY,
                Clock.systemUTC())
            .entrySet()) {
      String name = h.getKey().toLowerCase(Locale.ROOT);
      if (!name.equals("host") && !name.equals("content-length")) {
        h.getValue().forEach(v -> out.header(h.getKey(), v));
      }
    }
    return send(out.build());
  }

  /**
   * The headers of a request signed by the SDK's SigV4 signer (the given ones, Host and the
   * signature's), to send it by other means; {@code secret} null leaves it unsigned.
   */
  Map<String, List<String>> signedHeaders(
      String method,
      String pathAndQuery,
      Map<String, String> headers,
      byte[] body,
      String accessKey,
      String secret,
      Clock clock) {
    SdkHttpRequest.Builder b =
        SdkHttpRequest.builder()
            .uri(URI.create(endpoint + pathAndQuery))
            .method(SdkHttpMethod.fromValue(method));
    headers.forEach(b::putHeader);
    SdkHttpRequest request = b.build();
    if (secret != null) {
      byte[] payload = body == null ? new byte[0] : body;
      SignedRequest s =
          AwsV4HttpSigner.create()
              .sign(
                  r ->
                      r.identity(AwsBasicCredentials.create(accessKey, secret))
                          .request(b.build())
                          .payload(ContentStreamProvider.fromByteArray(payload))
                          .putProperty(AwsV4FamilyHttpSigner.SERVICE_SIGNING_NAME, "s3")
                          .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                          .putProperty(AwsV4FamilyHttpSigner.PAYLOAD_SIGNING_ENABLED, true)
                          .putProperty(AwsV4FamilyHttpSigner.DOUBLE_URL_ENCODE, false)
                          .putProperty(AwsV4FamilyHttpSigner.NORMALIZE_PATH, false)
                          .putProperty(HttpSigner.SIGNING_CLOCK, clock));
      request = s.request();
    }
    return request.headers();
  }

  /** Sends a URL as it is (a presigned URL), with a body for PUT. */
  Response send(String method, URI uri, Map<String, String> headers, byte[] body) throws Exception {
    return send(
        method,
        uri,
        headers,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofByteArray(body));
  }

  /** Sends a URL as it is, with a body sent as {@code body} publishes it. */
  Response send(String method, URI uri, Map<String, String> headers, HttpRequest.BodyPublisher body)
      throws Exception {
    HttpRequest.Builder out =
        HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60)).method(method, body);
    headers.forEach(out::header);
    return send(out.build());
  }

  private Response send(HttpRequest request) throws Exception {
    HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
    return new Response(r.statusCode(), r.headers().map(), r.body());
  }

  /** Runs a call that must fail with an S3 error of this code and status, and returns it. */
  static S3Exception assertS3Error(String code, int status, Executable call) {
    S3Exception e = assertThrows(S3Exception.class, call);
    assertEquals(status, e.statusCode(), () -> "status of " + e.getMessage());
    if (code != null) {
      assertEquals(code, e.awsErrorDetails().errorCode(), () -> "code of " + e.getMessage());
    }
    return e;
  }

  /** {@code length} bytes of a seeded generator, the same for a seed every time. */
  static byte[] random(int length, long seed) {
    byte[] data = new byte[length];
    new java.util.Random(seed).nextBytes(data);
    return data;
  }

  @Override
  public void close() {
    if (fs != null) {
      fs.close();
    }
    cluster.close();
  }
}
