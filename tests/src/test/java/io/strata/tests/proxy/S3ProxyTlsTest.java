package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpRequest;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;

/**
 * The proxy's S3 port serving HTTPS with a self-signed certificate made for the test: signed
 * requests and flexible checksums sent as trailers work over it, plain HTTP to it fails, bucket
 * policies see aws:SecureTransport true, and SSE-C (which clients send over HTTPS only) is refused
 * as not implemented. TLS is a start-up setting, so this class has a proxy of its own.
 */
class S3ProxyTlsTest {
  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static URI endpoint;
  static S3Client s3;
  static final ConcurrentLinkedQueue<SdkHttpRequest> sent = new ConcurrentLinkedQueue<>();

  @BeforeAll
  static void start() throws Exception {
    Path tls = Files.createDirectories(dir.resolve("tls"));
    Path cert = tls.resolve("cert.pem");
    Path key = tls.resolve("key.pem");
    Process openssl =
        new ProcessBuilder(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=IP:127.0.0.1,DNS:localhost",
                "-keyout",
                key.toString(),
                "-out",
                cert.toString())
            .redirectErrorStream(true)
            .redirectOutput(tls.resolve("openssl.log").toFile())
            .start();
    assertTrue(openssl.waitFor(60, TimeUnit.SECONDS), "openssl finished");
    assertEquals(0, openssl.exitValue(), () -> "openssl failed, see " + tls);
    cluster =
        S3ProxyTestCluster.start(
            dir.resolve("cluster"),
            Map.of(
                "strata.proxy.tls.certificate", cert.toString(),
                "strata.proxy.tls.key", key.toString()),
            List.of());
    endpoint = URI.create("https://127.0.0.1:" + cluster.cluster.proxyPort());
    s3 =
        S3Client.builder()
            .endpointOverride(endpoint)
            .region(Region.US_EAST_1)
            .forcePathStyle(true)
            .httpClientBuilder(
                ApacheHttpClient.builder()
                    .tlsTrustManagersProvider(() -> trusting(cert).getTrustManagers()))
            .overrideConfiguration(
                c ->
                    c.addExecutionInterceptor(
                        new ExecutionInterceptor() {
                          @Override
                          public void beforeTransmission(
                              Context.BeforeTransmission context, ExecutionAttributes attributes) {
                            sent.add(context.httpRequest());
                          }
                        }))
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(
                        S3ProxyTestCluster.ACCESS_KEY, S3ProxyTestCluster.SECRET_KEY)))
            .build();
    s3.createBucket(b -> b.bucket("secure"));
  }

  /** Trust managers that trust the one certificate in {@code pem}. */
  private static TrustManagerFactory trusting(Path pem) {
    try (InputStream in = Files.newInputStream(pem)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      store.setCertificateEntry(
          "proxy", CertificateFactory.getInstance("X.509").generateCertificate(in));
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      return tmf;
    } catch (IOException | java.security.GeneralSecurityException e) {
      throw new IllegalStateException("cannot trust " + pem, e);
    }
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
  void objectsGoAndComeBackOverHttps() {
    // Larger than a chunk, so a read takes several pieces, none of them a file region.
    byte[] data = S3ProxyTestCluster.random(3 << 20, 7);
    s3.putObject(b -> b.bucket("secure").key("big"), RequestBody.fromBytes(data));
    assertArrayEquals(data, s3.getObjectAsBytes(b -> b.bucket("secure").key("big")).asByteArray());
  }

  @Test
  void checksumSentAsTrailerIsChecked() {
    byte[] data = S3ProxyTestCluster.random(100_000, 11);
    CRC32 crc = new CRC32();
    crc.update(data);
    String expected =
        Base64.getEncoder()
            .encodeToString(java.nio.ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    sent.clear();
    PutObjectResponse put =
        s3.putObject(
            b -> b.bucket("secure").key("trailer").checksumAlgorithm(ChecksumAlgorithm.CRC32),
            RequestBody.fromBytes(data));
    SdkHttpRequest request =
        sent.stream().filter(r -> r.method().name().equals("PUT")).findFirst().orElseThrow();
    assertEquals(
        List.of("x-amz-checksum-crc32"),
        request.headers().get("x-amz-trailer"),
        "the SDK sent the checksum as a trailer");
    assertEquals(expected, put.checksumCRC32());
    var got =
        s3.getObjectAsBytes(
            b -> b.bucket("secure").key("trailer").checksumMode(ChecksumMode.ENABLED));
    assertArrayEquals(data, got.asByteArray());
    assertEquals(expected, got.response().checksumCRC32());
  }

  @Test
  void plainHttpToTheTlsPortFails() {
    HttpClient http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    assertThrows(
        IOException.class,
        () ->
            http.send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + cluster.cluster.proxyPort() + "/secure"))
                    .timeout(Duration.ofSeconds(30))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
  }

  @Test
  void denyOfInsecureTransportDoesNotApplyOverHttps() {
    s3.createBucket(b -> b.bucket("tls-only"));
    s3.putObject(b -> b.bucket("tls-only").key("a"), RequestBody.fromString("over tls"));
    s3.putBucketPolicy(
        b ->
            b.bucket("tls-only")
                .policy(
                    "{\"Statement\": [{\"Sid\": \"TlsOnly\", \"Effect\": \"Deny\", \"Principal\":"
                        + " \"*\", \"Action\": \"s3:*\", \"Resource\": \"arn:aws:s3:::tls-only/*\","
                        + " \"Condition\": {\"Bool\": {\"aws:SecureTransport\": \"false\"}}}]}"));
    assertEquals(
        "over tls", s3.getObjectAsBytes(b -> b.bucket("tls-only").key("a")).asUtf8String());
    s3.putObject(b -> b.bucket("tls-only").key("b"), RequestBody.fromString("still"));
    assertEquals("still", s3.getObjectAsBytes(b -> b.bucket("tls-only").key("b")).asUtf8String());
  }

  @Test
  void customerKeysAreRefusedAsNotImplemented() {
    byte[] customerKey = S3ProxyTestCluster.random(32, 3);
    String keyMd5;
    try {
      keyMd5 =
          Base64.getEncoder()
              .encodeToString(java.security.MessageDigest.getInstance("MD5").digest(customerKey));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    var e =
        assertS3Error(
            "NotImplemented",
            501,
            () ->
                s3.putObject(
                    b ->
                        b.bucket("secure")
                            .key("sse-c")
                            .sseCustomerAlgorithm("AES256")
                            .sseCustomerKey(Base64.getEncoder().encodeToString(customerKey))
                            .sseCustomerKeyMD5(keyMd5),
                    RequestBody.fromString("secret")));
    assertTrue(
        e.awsErrorDetails().errorMessage().contains("customer-provided keys"), e.getMessage());
    assertS3Error("NoSuchKey", 404, () -> s3.headObject(b -> b.bucket("secure").key("sse-c")));
  }
}
