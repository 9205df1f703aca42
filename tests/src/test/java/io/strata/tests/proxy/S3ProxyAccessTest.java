package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.ACCESS_KEY;
import static io.strata.tests.proxy.S3ProxyTestCluster.ALICE_KEY;
import static io.strata.tests.proxy.S3ProxyTestCluster.ALICE_SECRET;
import static io.strata.tests.proxy.S3ProxyTestCluster.BOB_KEY;
import static io.strata.tests.proxy.S3ProxyTestCluster.BOB_SECRET;
import static io.strata.tests.proxy.S3ProxyTestCluster.SECRET_KEY;
import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static io.strata.tests.proxy.S3ProxyTestCluster.random;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.SetAttributeOptions;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.BucketCannedACL;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectAclResponse;
import software.amazon.awssdk.services.s3.model.Grant;
import software.amazon.awssdk.services.s3.model.ObjectCannedACL;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.Permission;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.Type;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * Who may do what through the S3 proxy: signatures (Signature Version 4 and 2, header-signed and
 * presigned, expired, skewed, wrong or unknown keys, none at all) and the namespace's owner, group
 * and mode as they apply to the user an access key maps to; every refusal an S3 error document.
 */
class S3ProxyAccessTest {
  private static final String BUCKET = "guarded";

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;
  static S3Client alice;
  static S3Client bob;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
    alice = cluster.client(ALICE_KEY, ALICE_SECRET, false, false);
    bob = cluster.client(BOB_KEY, BOB_SECRET, false, false);
    // Listable by every signed user (mode 0755).
    s3.createBucket(b -> b.bucket(BUCKET).acl(BucketCannedACL.AUTHENTICATED_READ));
  }

  @AfterAll
  static void stop() {
    for (S3Client c : new S3Client[] {s3, alice, bob}) {
      if (c != null) {
        c.close();
      }
    }
  }

  private static S3ProxyTestCluster.Response signed(
      String method, String target, Map<String, String> headers, byte[] body, Clock clock)
      throws Exception {
    return cluster.signed(method, target, headers, body, ACCESS_KEY, SECRET_KEY, clock);
  }

  /** Checks an error answer: status, code, and the error document's resource and request id. */
  private static void assertErrorDocument(
      S3ProxyTestCluster.Response r, int status, String code, String resource) {
    assertEquals(status, r.status(), r.text());
    assertEquals(code, r.errorCode(), r.text());
    assertTrue(r.header("Content-Type").startsWith("application/xml"), r.header("Content-Type"));
    String requestId = r.header("x-amz-request-id");
    assertTrue(requestId != null && !requestId.isEmpty());
    assertTrue(r.text().contains("<RequestId>" + requestId + "</RequestId>"), r.text());
    if (resource != null) {
      assertTrue(r.text().contains("<Resource>" + resource + "</Resource>"), r.text());
    }
    assertTrue(r.text().contains("<Message>"), r.text());
  }

  @Test
  void aWrongSecretOrAnUnknownKeyIsRefusedAndWritesNothing() throws Exception {
    try (S3Client wrong =
            cluster.client(ACCESS_KEY, "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx", false, false);
        S3Client wrongChunked =
            cluster.client(ACCESS_KEY, "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx", false, true);
        S3Client unknown = cluster.client("AKSTRATAUNKNOWNKEY01", SECRET_KEY, false, false)) {
      assertS3Error("SignatureDoesNotMatch", 403, () -> wrong.listObjectsV2(b -> b.bucket(BUCKET)));
      assertS3Error(
          "SignatureDoesNotMatch",
          403,
          () ->
              wrong.putObject(
                  b -> b.bucket(BUCKET).key("forged"), RequestBody.fromString("forged")));
      assertS3Error(
          "SignatureDoesNotMatch",
          403,
          () ->
              wrongChunked.putObject(
                  b -> b.bucket(BUCKET).key("forged"), RequestBody.fromBytes(random(200_000, 1))));
      assertS3Error("SignatureDoesNotMatch", 403, () -> wrong.listBuckets());
      assertS3Error("InvalidAccessKeyId", 403, () -> unknown.listObjectsV2(b -> b.bucket(BUCKET)));
      assertS3Error(
          "InvalidAccessKeyId",
          403,
          () ->
              unknown.putObject(
                  b -> b.bucket(BUCKET).key("forged"), RequestBody.fromString("forged")));
      assertS3Error(
          "InvalidAccessKeyId", 403, () -> unknown.createBucket(b -> b.bucket("forged-bucket")));
    }
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/forged")));
    assertFalse(Files.exists(cluster.ufs("/forged-bucket")));
    // The error documents as sent.
    S3ProxyTestCluster.Response r =
        cluster.signed(
            "GET",
            "/" + BUCKET + "/k",
            Map.of(),
            null,
            ACCESS_KEY,
            "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx",
            Clock.systemUTC());
    assertErrorDocument(r, 403, "SignatureDoesNotMatch", null);
    // A body refused before it is read, sent without waiting for 100 Continue: the client
    // gets the refusal, not a reset connection, however much of the body is still on its way.
    for (int size : new int[] {1, 64 << 10, 8 << 20}) {
      S3ProxyTestCluster.Response big =
          cluster.signed(
              "PUT",
              "/" + BUCKET + "/forged",
              Map.of(),
              random(size, size),
              ACCESS_KEY,
              "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx",
              Clock.systemUTC());
      assertErrorDocument(big, 403, "SignatureDoesNotMatch", null);
      // And the next request is served, on this connection or a new one.
      assertEquals(
          200,
          signed("GET", "/" + BUCKET + "?list-type=2", Map.of(), null, Clock.systemUTC()).status());
    }
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/forged")));
  }

  @Test
  void aClientStillSendingARefusedBodyReadsTheAnswer() throws Exception {
    // The client sends part of the body, sees the answer arrive, sends the rest and only then
    // reads: as a client does that writes its whole body before it reads. Were the connection
    // closed at once, the rest would meet a reset, which takes the unread answer with it.
    int size = 4 << 20;
    byte[] body = random(size, 9);
    Map<String, List<String>> headers =
        cluster.signedHeaders(
            "PUT",
            "/" + BUCKET + "/forged",
            Map.of(),
            body,
            ACCESS_KEY,
            "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx",
            Clock.systemUTC());
    StringBuilder head = new StringBuilder("PUT /" + BUCKET + "/forged HTTP/1.1\r\n");
    headers.forEach(
        (name, values) ->
            values.forEach(v -> head.append(name).append(": ").append(v).append("\r\n")));
    head.append("Content-Length: ").append(size).append("\r\n\r\n");
    try (Socket socket = new Socket(cluster.endpoint.getHost(), cluster.endpoint.getPort())) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      InputStream in = socket.getInputStream();
      out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(body, 0, 64 << 10);
      out.flush();
      await("an answer to the refused PUT")
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> in.available() > 0);
      // Let the proxy finish with the connection as it does once it answered. Pacing of the
      // scenario, not a wait: the proxy runs in another process, and its end of the connection
      // shows only by reading the answer, which this client must read last.
      Thread.sleep(300);
      out.write(body, 64 << 10, size - (64 << 10));
      out.flush();
      String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      assertTrue(answer.startsWith("HTTP/1.1 403 "), answer);
      assertTrue(answer.contains("<Code>SignatureDoesNotMatch</Code>"), answer);
      assertTrue(answer.toLowerCase(java.util.Locale.ROOT).contains("connection: close"), answer);
    }
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/forged")));
  }

  @Test
  void aSignedDocumentChangedOnItsWayIsRefused() throws Exception {
    s3.putObject(b -> b.bucket(BUCKET).key("doc/victim"), RequestBody.fromString("v"));
    s3.putObject(b -> b.bucket(BUCKET).key("doc/other"), RequestBody.fromString("o"));
    // The signature covers the hash of a document deleting "doc/other"; the body sent deletes
    // "doc/victim".
    S3ProxyTestCluster.Response delete =
        cluster.signedForAnotherBody(
            "POST",
            "/" + BUCKET + "?delete",
            utf8("<Delete><Object><Key>doc/other</Key></Object></Delete>"),
            utf8("<Delete><Object><Key>doc/victim</Key></Object></Delete>"));
    assertErrorDocument(delete, 400, "XAmzContentSHA256Mismatch", null);
    S3ProxyTestCluster.Response tagging =
        cluster.signedForAnotherBody(
            "PUT",
            "/" + BUCKET + "/doc/victim?tagging",
            utf8(
                "<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag>" + "</TagSet></Tagging>"),
            utf8(
                "<Tagging><TagSet><Tag><Key>a</Key><Value>2</Value>"
                    + "</Tag></TagSet></Tagging>"));
    assertErrorDocument(tagging, 400, "XAmzContentSHA256Mismatch", null);
    String id = s3.createMultipartUpload(b -> b.bucket(BUCKET).key("doc/mpu")).uploadId();
    String etag =
        s3.uploadPart(
                b -> b.bucket(BUCKET).key("doc/mpu").uploadId(id).partNumber(1),
                RequestBody.fromString("part"))
            .eTag();
    String complete =
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"
            + etag
            + "</ETag></Part></CompleteMultipartUpload>";
    S3ProxyTestCluster.Response completed =
        cluster.signedForAnotherBody(
            "POST",
            "/" + BUCKET + "/doc/mpu?uploadId=" + id,
            utf8(complete.replace("<PartNumber>1", "<PartNumber>2")),
            utf8(complete));
    assertErrorDocument(completed, 400, "XAmzContentSHA256Mismatch", null);
    assertEquals("v", s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("doc/victim")).asUtf8String());
    assertTrue(s3.getObjectTagging(b -> b.bucket(BUCKET).key("doc/victim")).tagSet().isEmpty());
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/doc/mpu")));
    // The same documents as signed are taken.
    S3ProxyTestCluster.Response fine =
        cluster.signedForAnotherBody(
            "POST", "/" + BUCKET + "/doc/mpu?uploadId=" + id, utf8(complete), utf8(complete));
    assertEquals(200, fine.status(), fine.text());
    assertEquals("part", Files.readString(cluster.ufs("/" + BUCKET + "/doc/mpu")));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void requestsDatedTwentyMinutesOffAreTooSkewed() throws Exception {
    for (Duration off : List.of(Duration.ofMinutes(-20), Duration.ofMinutes(20))) {
      Clock skewed = Clock.offset(Clock.systemUTC(), off);
      S3ProxyTestCluster.Response get =
          signed("GET", "/" + BUCKET + "?list-type=2", Map.of(), null, skewed);
      assertErrorDocument(get, 403, "RequestTimeTooSkewed", null);
      S3ProxyTestCluster.Response put =
          signed(
              "PUT",
              "/" + BUCKET + "/skewed",
              Map.of(),
              "x".getBytes(StandardCharsets.UTF_8),
              skewed);
      assertErrorDocument(put, 403, "RequestTimeTooSkewed", null);
    }
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/skewed")));
    // Within S3's 15 minutes it is served.
    S3ProxyTestCluster.Response fine =
        signed(
            "PUT",
            "/" + BUCKET + "/skewed",
            Map.of(),
            "x".getBytes(StandardCharsets.UTF_8),
            Clock.offset(Clock.systemUTC(), Duration.ofMinutes(-10)));
    assertEquals(200, fine.status(), fine.text());
    assertEquals("x", Files.readString(cluster.ufs("/" + BUCKET + "/skewed")));
    s3.deleteObject(b -> b.bucket(BUCKET).key("skewed"));
  }

  @Test
  void presignedGetAndPutWorkUntilTheyExpire() throws Exception {
    byte[] data = random(100_000, 2);
    try (S3Presigner presigner = cluster.presigner()) {
      URI put =
          URI.create(
              presigner
                  .presignPutObject(
                      p ->
                          p.signatureDuration(Duration.ofMinutes(5))
                              .putObjectRequest(
                                  r -> r.bucket(BUCKET).key("presigned/obj with space")))
                  .url()
                  .toString());
      S3ProxyTestCluster.Response stored = cluster.send("PUT", put, Map.of(), data);
      assertEquals(200, stored.status(), stored.text());
      assertEquals("\"" + Checksums.md5Hex(data) + "\"", stored.header("ETag"));
      assertArrayEquals(
          data, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/presigned/obj with space")));

      URI get =
          URI.create(
              presigner
                  .presignGetObject(
                      p ->
                          p.signatureDuration(Duration.ofMinutes(5))
                              .getObjectRequest(
                                  r -> r.bucket(BUCKET).key("presigned/obj with space")))
                  .url()
                  .toString());
      S3ProxyTestCluster.Response read = cluster.send("GET", get, Map.of(), (byte[]) null);
      assertEquals(200, read.status(), read.text());
      assertArrayEquals(data, read.body());

      // A URL changed after signing is refused.
      URI tampered = URI.create(get.toString().replace("presigned/obj", "presigned/other"));
      assertErrorDocument(
          cluster.send("GET", tampered, Map.of(), (byte[]) null),
          403,
          "SignatureDoesNotMatch",
          null);

      // URLs valid for one second, used after it: X-Amz-Date has whole seconds, so they
      // expire a second after the second they were signed in.
      URI shortGet =
          URI.create(
              presigner
                  .presignGetObject(
                      p ->
                          p.signatureDuration(Duration.ofSeconds(1))
                              .getObjectRequest(
                                  r -> r.bucket(BUCKET).key("presigned/obj with space")))
                  .url()
                  .toString());
      URI shortPut =
          URI.create(
              presigner
                  .presignPutObject(
                      p ->
                          p.signatureDuration(Duration.ofSeconds(1))
                              .putObjectRequest(r -> r.bucket(BUCKET).key("presigned/late")))
                  .url()
                  .toString());
      Instant expired =
          Collections.max(List.of(amzDate(shortGet), amzDate(shortPut))).plusMillis(1200);
      long wait = Duration.between(Instant.now(), expired).toMillis();
      if (wait > 0) {
        // The behaviour under test, not a wait for an event: the URLs' time runs out.
        Thread.sleep(wait);
      }
      assertErrorDocument(
          cluster.send("GET", shortGet, Map.of(), (byte[]) null), 403, "AccessDenied", null);
      assertErrorDocument(cluster.send("PUT", shortPut, Map.of(), data), 403, "AccessDenied", null);
      assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/presigned/late")));
    }
  }

  /** The X-Amz-Date of a presigned URL. */
  private static Instant amzDate(URI url) {
    for (String param : url.getRawQuery().split("&")) {
      if (param.startsWith("X-Amz-Date=")) {
        return DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC)
            .parse(param.substring("X-Amz-Date=".length()), Instant::from);
      }
    }
    throw new AssertionError("no X-Amz-Date in " + url);
  }

  // ---- Signature Version 2, signed here as the S3 documentation defines it ----

  private static final String WRONG_SECRET = "d3Jvbmctc2VjcmV0LW9mLXRoZS10ZXN0LXVzZXIx";

  /** The base64 HMAC-SHA1 of the string to sign. */
  private static String sigV2(String secret, String stringToSign) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA1");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
    return Base64.getEncoder()
        .encodeToString(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * Sends a request signed in its Authorization header with Signature Version 2, dated by
   * x-amz-date (which leaves the Date line of the string to sign empty).
   */
  private static S3ProxyTestCluster.Response sigV2Header(
      String method, String path, String contentType, byte[] body, String secret) throws Exception {
    String date =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(Instant.now().atOffset(ZoneOffset.UTC));
    String toSign =
        method
            + "\n\n"
            + (contentType == null ? "" : contentType)
            + "\n\nx-amz-date:"
            + date
            + "\n"
            + path;
    Map<String, String> headers = new java.util.HashMap<>();
    headers.put("x-amz-date", date);
    headers.put("Authorization", "AWS " + ACCESS_KEY + ":" + sigV2(secret, toSign));
    if (contentType != null) {
      headers.put("Content-Type", contentType);
    }
    return cluster.send(method, URI.create(cluster.endpoint + path), headers, body);
  }

  /** A Signature Version 2 presigned URL of a path, valid until {@code expires}. */
  private static URI sigV2Presigned(String method, String path, String contentType, Instant expires)
      throws Exception {
    long at = expires.getEpochSecond();
    String toSign =
        method + "\n\n" + (contentType == null ? "" : contentType) + "\n" + at + "\n" + path;
    return URI.create(
        cluster.endpoint
            + path
            + "?AWSAccessKeyId="
            + ACCESS_KEY
            + "&Expires="
            + at
            + "&Signature="
            + java.net.URLEncoder.encode(sigV2(SECRET_KEY, toSign), StandardCharsets.UTF_8));
  }

  @Test
  void sigV2HeaderSignedPutAndGetActAsTheKeysUser() throws Exception {
    byte[] data = random(70_000, 21);
    String path = "/" + BUCKET + "/v2/header%20signed";
    S3ProxyTestCluster.Response put =
        sigV2Header("PUT", path, "application/octet-stream", data, SECRET_KEY);
    assertEquals(200, put.status(), put.text());
    assertEquals("\"" + Checksums.md5Hex(data) + "\"", put.header("ETag"));
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/v2/header signed")));
    // Written as the key's user, the bucket's owner.
    assertEquals(
        cluster.fs().getStatus("/" + BUCKET).getOwner(),
        cluster.fs().getStatus("/" + BUCKET + "/v2/header signed").getOwner());
    S3ProxyTestCluster.Response get = sigV2Header("GET", path, null, null, SECRET_KEY);
    assertEquals(200, get.status(), get.text());
    assertArrayEquals(data, get.body());

    // A wrong secret: refused, and nothing written.
    S3ProxyTestCluster.Response forged =
        sigV2Header("PUT", "/" + BUCKET + "/v2/forged", null, data, WRONG_SECRET);
    assertErrorDocument(forged, 403, "SignatureDoesNotMatch", null);
    assertErrorDocument(
        sigV2Header("GET", path, null, null, WRONG_SECRET), 403, "SignatureDoesNotMatch", null);
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/v2/forged")));
    // A Content-Type other than signed.
    Map<String, String> h = new java.util.HashMap<>();
    String date =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(Instant.now().atOffset(ZoneOffset.UTC));
    h.put("x-amz-date", date);
    h.put("Content-Type", "text/html");
    h.put(
        "Authorization",
        "AWS "
            + ACCESS_KEY
            + ":"
            + sigV2(
                SECRET_KEY,
                "PUT\n\ntext/plain\n\nx-amz-date:" + date + "\n/" + BUCKET + "/v2/forged"));
    assertErrorDocument(
        cluster.send("PUT", URI.create(cluster.endpoint + "/" + BUCKET + "/v2/forged"), h, data),
        403,
        "SignatureDoesNotMatch",
        null);
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/v2/forged")));
  }

  @Test
  void sigV2PresignedPutAndGetWorkUntilTheirExpiry() throws Exception {
    byte[] data = random(90_000, 22);
    String path = "/" + BUCKET + "/v2/presigned";
    Instant inFiveMinutes = Instant.now().plus(Duration.ofMinutes(5));
    S3ProxyTestCluster.Response put =
        cluster.send(
            "PUT",
            sigV2Presigned("PUT", path, "application/octet-stream", inFiveMinutes),
            Map.of("Content-Type", "application/octet-stream"),
            data);
    assertEquals(200, put.status(), put.text());
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs(path)));
    S3ProxyTestCluster.Response get =
        cluster.send(
            "GET", sigV2Presigned("GET", path, null, inFiveMinutes), Map.of(), (byte[]) null);
    assertEquals(200, get.status(), get.text());
    assertArrayEquals(data, get.body());

    // Another key than signed.
    URI tampered =
        URI.create(
            sigV2Presigned("GET", path, null, inFiveMinutes)
                .toString()
                .replace("v2/presigned", "v2/other"));
    assertErrorDocument(
        cluster.send("GET", tampered, Map.of(), (byte[]) null), 403, "SignatureDoesNotMatch", null);

    // Expired a minute ago: 403 AccessDenied, whatever the method, and nothing written.
    Instant aMinuteAgo = Instant.now().minus(Duration.ofMinutes(1));
    S3ProxyTestCluster.Response lateGet =
        cluster.send("GET", sigV2Presigned("GET", path, null, aMinuteAgo), Map.of(), (byte[]) null);
    assertErrorDocument(lateGet, 403, "AccessDenied", null);
    assertTrue(lateGet.text().contains("Request has expired"), lateGet.text());
    S3ProxyTestCluster.Response latePut =
        cluster.send(
            "PUT",
            sigV2Presigned("PUT", "/" + BUCKET + "/v2/late", null, aMinuteAgo),
            Map.of(),
            data);
    assertErrorDocument(latePut, 403, "AccessDenied", null);
    assertTrue(latePut.text().contains("Request has expired"), latePut.text());
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/v2/late")));
  }

  @Test
  void anonymousRequestsAreRefused() throws Exception {
    s3.putObject(b -> b.bucket(BUCKET).key("public"), RequestBody.fromString("p"));
    for (String[] request :
        new String[][] {
          {"GET", "/"},
          {"GET", "/" + BUCKET},
          {"GET", "/" + BUCKET + "/public"},
          {"HEAD", "/" + BUCKET + "/public"},
          {"PUT", "/" + BUCKET + "/anonymous"},
          {"DELETE", "/" + BUCKET + "/public"},
          {"PUT", "/anonymous-bucket"}
        }) {
      S3ProxyTestCluster.Response r =
          cluster.signed(
              request[0],
              request[1],
              Map.of(),
              request[0].equals("PUT") ? new byte[] {1} : null,
              null,
              null,
              Clock.systemUTC());
      assertEquals(403, r.status(), request[0] + " " + request[1]);
      if (!request[0].equals("HEAD")) {
        assertErrorDocument(r, 403, "AccessDenied", null);
      }
    }
    assertEquals("p", s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("public")).asUtf8String());
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/anonymous")));
    assertFalse(Files.exists(cluster.ufs("/anonymous-bucket")));
  }

  @Test
  void aliceReadsWhatTheModesLetHerAndWritesNothing() throws Exception {
    byte[] data = random(50_000, 3);
    // Written without an ACL (0640: the bucket's group may read), then opened to all by its mode
    // alone (as through the mount), so that the folders above decide too.
    s3.putObject(b -> b.bucket(BUCKET).key("shared/readable"), RequestBody.fromBytes(data));
    assertEquals(0640, cluster.fs().getStatus("/" + BUCKET + "/shared/readable").getMode() & 0777);
    cluster
        .fs()
        .setAttribute("/" + BUCKET + "/shared/readable", SetAttributeOptions.defaults().mode(0644));
    s3.putObject(
        b -> b.bucket(BUCKET).key("shared/private").acl(ObjectCannedACL.AUTHENTICATED_READ),
        RequestBody.fromBytes(data));
    assertEquals(0644, cluster.fs().getStatus("/" + BUCKET + "/shared/private").getMode() & 0777);
    assertEquals(0755, cluster.fs().getStatus("/" + BUCKET).getMode() & 0777);
    assertEquals(0644, cluster.fs().getStatus("/" + BUCKET + "/shared/readable").getMode() & 0777);

    // World-readable: she reads and lists, once the proxy has seen the new mode.
    await("the file's new mode to apply")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptionsMatching(e -> e instanceof S3Exception)
        .until(
            () ->
                java.util.Arrays.equals(
                    data,
                    alice
                        .getObjectAsBytes(b -> b.bucket(BUCKET).key("shared/readable"))
                        .asByteArray()));
    assertEquals(
        data.length,
        alice.headObject(b -> b.bucket(BUCKET).key("shared/readable")).contentLength());
    assertTrue(
        alice.listObjectsV2(b -> b.bucket(BUCKET).prefix("shared/")).contents().stream()
            .map(S3Object::key)
            .toList()
            .contains("shared/readable"));

    // A file of mode 0600 is the owner's alone, whatever ACL it was written with.
    cluster
        .fs()
        .setAttribute("/" + BUCKET + "/shared/private", SetAttributeOptions.defaults().mode(0600));
    assertS3Error(
        "AccessDenied",
        403,
        () -> alice.getObjectAsBytes(b -> b.bucket(BUCKET).key("shared/private")));
    S3Exception head =
        assertS3Error(
            null, 403, () -> alice.headObject(b -> b.bucket(BUCKET).key("shared/private")));
    assertEquals(403, head.statusCode());
    assertS3Error(
        "AccessDenied",
        403,
        () -> alice.getObjectTagging(b -> b.bucket(BUCKET).key("shared/private")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("shared/private")
                        .destinationBucket(BUCKET)
                        .destinationKey("stolen")));
    assertArrayEquals(
        data,
        s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("shared/private")).asByteArray(),
        "the owner still reads it");

    // The bucket is the test user's, mode 0755: alice writes nothing into it.
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.putObject(
                b -> b.bucket(BUCKET).key("shared/alice"), RequestBody.fromString("a")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.putObject(
                b -> b.bucket(BUCKET).key("new-folder/alice"), RequestBody.fromString("a")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.putObject(
                b -> b.bucket(BUCKET).key("shared/readable"),
                RequestBody.fromString("overwritten")));
    assertS3Error(
        "AccessDenied",
        403,
        () -> alice.deleteObject(b -> b.bucket(BUCKET).key("shared/readable")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("shared/readable")
                        .destinationBucket(BUCKET)
                        .destinationKey("copied")));
    assertS3Error(
        "AccessDenied",
        403,
        () -> alice.createMultipartUpload(b -> b.bucket(BUCKET).key("shared/mpu")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.putObjectTagging(
                b ->
                    b.bucket(BUCKET)
                        .key("shared/readable")
                        .tagging(t -> t.tagSet(s -> s.key("k").value("v")))));
    assertS3Error("AccessDenied", 403, () -> alice.deleteBucket(b -> b.bucket(BUCKET)));
    // The namespace root is not hers either.
    assertS3Error("AccessDenied", 403, () -> alice.createBucket(b -> b.bucket("alices")));
    DeleteObjectsResponse batch =
        alice.deleteObjects(
            b ->
                b.bucket(BUCKET)
                    .delete(
                        d ->
                            d.objects(
                                ObjectIdentifier.builder().key("shared/readable").build(),
                                ObjectIdentifier.builder().key("shared/private").build())));
    assertEquals(List.of(), batch.deleted());
    assertEquals(
        List.of("AccessDenied", "AccessDenied"),
        batch.errors().stream().map(e -> e.code()).toList());

    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/shared/readable")));
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/shared/private")));
    for (String k : List.of("shared/alice", "new-folder", "copied", "stolen")) {
      assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/" + k)), k);
    }
    assertFalse(Files.exists(cluster.ufs("/alices")));
    assertEquals(List.of(), s3.listMultipartUploads(b -> b.bucket(BUCKET)).uploads());

    // A folder she may not enter hides what is in it, once the proxy's cached view of the
    // folder's mode expires (strata.proxy.permission.cache.ttl, 1 s).
    cluster.fs().setAttribute("/" + BUCKET + "/shared", SetAttributeOptions.defaults().mode(0700));
    await("the folder's new mode to apply")
        .atMost(Duration.ofSeconds(10))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              try {
                alice.getObjectAsBytes(b -> b.bucket(BUCKET).key("shared/readable"));
                return false;
              } catch (S3Exception e) {
                assertEquals("AccessDenied", e.awsErrorDetails().errorCode());
                return true;
              }
            });
    cluster.fs().setAttribute("/" + BUCKET + "/shared", SetAttributeOptions.defaults().mode(0755));
  }

  @Test
  void aliceWritesWhereTheModeLetsHer() throws Exception {
    s3.createBucket(b -> b.bucket("open"));
    cluster.fs().setAttribute("/open", SetAttributeOptions.defaults().mode(0777));
    // Bounded wait for the proxy's cached view of the folder (1 s).
    await("the folder's new mode to apply")
        .atMost(Duration.ofSeconds(10))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              try {
                alice.putObject(
                    b -> b.bucket("open").key("by-alice/file"), RequestBody.fromString("a"));
                return true;
              } catch (S3Exception e) {
                assertEquals("AccessDenied", e.awsErrorDetails().errorCode());
                return false;
              }
            });
    assertEquals("alice", cluster.fs().getStatus("/open/by-alice/file").getOwner());
    assertEquals("alice", cluster.fs().getStatus("/open/by-alice").getOwner());
    assertEquals("a", Files.readString(cluster.ufs("/open/by-alice/file")));
    assertEquals(
        "alice",
        alice.listObjectsV2(b -> b.bucket("open").fetchOwner(true)).contents().get(0).owner().id());
    alice.deleteObject(b -> b.bucket("open").key("by-alice/file"));
    assertFalse(Files.exists(cluster.ufs("/open/by-alice")));
  }

  @Test
  void errorsAreS3ErrorDocuments() throws Exception {
    assertErrorDocument(
        signed("GET", "/" + BUCKET + "/no/such/key", Map.of(), null, Clock.systemUTC()),
        404,
        "NoSuchKey",
        "/" + BUCKET + "/no/such/key");
    assertErrorDocument(
        signed("GET", "/no-such-bucket?list-type=2", Map.of(), null, Clock.systemUTC()),
        404,
        "NoSuchBucket",
        "/no-such-bucket");
    assertErrorDocument(
        signed("GET", "/" + BUCKET + "?website", Map.of(), null, Clock.systemUTC()),
        501,
        "NotImplemented",
        "/" + BUCKET);
    assertErrorDocument(
        signed(
            "PUT",
            "/" + BUCKET + "?lifecycle",
            Map.of(),
            "<LifecycleConfiguration/>".getBytes(StandardCharsets.UTF_8),
            Clock.systemUTC()),
        400,
        "MalformedXML",
        "/" + BUCKET);
    assertErrorDocument(
        signed("POST", "/" + BUCKET + "/key", Map.of(), new byte[0], Clock.systemUTC()),
        405,
        "MethodNotAllowed",
        "/" + BUCKET + "/key");
    assertErrorDocument(
        signed(
            "POST",
            "/" + BUCKET + "?delete",
            Map.of(),
            "<Delete><Object></Delete>".getBytes(StandardCharsets.UTF_8),
            Clock.systemUTC()),
        400,
        "MalformedXML",
        "/" + BUCKET);
    assertErrorDocument(
        signed(
            "GET", "/" + BUCKET + "?list-type=2&max-keys=many", Map.of(), null, Clock.systemUTC()),
        400,
        "InvalidArgument",
        "/" + BUCKET);
    assertS3Error("NotImplemented", 501, () -> s3.getBucketWebsite(b -> b.bucket(BUCKET)));
    assertS3Error(
        "NotImplemented",
        501,
        () ->
            s3.putBucketLifecycleConfiguration(
                b ->
                    b.bucket(BUCKET)
                        .lifecycleConfiguration(
                            c ->
                                c.rules(
                                    r ->
                                        r.id("x")
                                            .status("Enabled")
                                            .filter(f -> f.prefix(""))
                                            .transitions(
                                                t -> t.days(1).storageClass("GLACIER"))))));
    // A HEAD's error has its status and no body.
    S3ProxyTestCluster.Response head =
        signed("HEAD", "/" + BUCKET + "/no/such/key", Map.of(), null, Clock.systemUTC());
    assertEquals(404, head.status());
    assertEquals(0, head.body().length);
  }

  private static int mode(String path) throws Exception {
    return cluster.fs().getStatus(path).getMode() & 0777;
  }

  private static S3ProxyTestCluster.Response unsigned(String method, String target, byte[] body)
      throws Exception {
    return cluster.signed(method, target, Map.of(), body, null, null, Clock.systemUTC());
  }

  private static boolean grants(GetObjectAclResponse acl, String uri, Permission permission) {
    return acl.grants().stream()
        .anyMatch(
            g ->
                g.grantee().type() == Type.GROUP
                    && uri.equals(g.grantee().uri())
                    && g.permission() == permission);
  }

  @Test
  void objectsArePrivateUnlessACannedAclOpensThem() throws Exception {
    String bucket = "acl-objects";
    s3.createBucket(b -> b.bucket(bucket));
    assertEquals(0700, mode("/" + bucket));
    s3.putObject(b -> b.bucket(bucket).key("mine"), RequestBody.fromString("m"));
    s3.putObject(
        b -> b.bucket(bucket).key("dir/open").acl(ObjectCannedACL.PUBLIC_READ),
        RequestBody.fromString("o"));
    s3.putObject(
        b -> b.bucket(bucket).key("signed-only").acl(ObjectCannedACL.AUTHENTICATED_READ),
        RequestBody.fromString("s"));
    assertEquals(0600, mode("/" + bucket + "/mine"));
    assertEquals(0644, mode("/" + bucket + "/dir/open"));

    // Private (the default): the owner's alone, object and listing.
    assertS3Error(
        "AccessDenied", 403, () -> alice.getObjectAsBytes(b -> b.bucket(bucket).key("mine")));
    assertS3Error(null, 403, () -> bob.headObject(b -> b.bucket(bucket).key("mine")));
    assertS3Error("AccessDenied", 403, () -> alice.listObjectsV2(b -> b.bucket(bucket)));
    assertEquals(403, unsigned("GET", "/" + bucket + "/mine", null).status());

    // public-read: anyone, signed or not, although the bucket itself is private.
    assertEquals("o", alice.getObjectAsBytes(b -> b.bucket(bucket).key("dir/open")).asUtf8String());
    S3ProxyTestCluster.Response anonymous = unsigned("GET", "/" + bucket + "/dir/open", null);
    assertEquals(200, anonymous.status(), anonymous.text());
    assertEquals("o", anonymous.text());
    assertTrue(
        grants(
            s3.getObjectAcl(b -> b.bucket(bucket).key("dir/open")),
            "http://acs.amazonaws.com/groups/global/AllUsers",
            Permission.READ));
    assertEquals(1, s3.getObjectAcl(b -> b.bucket(bucket).key("mine")).grants().size());

    // authenticated-read: every signed user, no unsigned request.
    assertEquals(
        "s", bob.getObjectAsBytes(b -> b.bucket(bucket).key("signed-only")).asUtf8String());
    assertEquals(403, unsigned("GET", "/" + bucket + "/signed-only", null).status());

    // Only the owner reads or changes an object's ACL.
    assertS3Error(
        "AccessDenied", 403, () -> alice.getObjectAcl(b -> b.bucket(bucket).key("dir/open")));
    assertS3Error(
        "AccessDenied",
        403,
        () ->
            alice.putObjectAcl(
                b -> b.bucket(bucket).key("dir/open").acl(ObjectCannedACL.PUBLIC_READ_WRITE)));
    s3.putObjectAcl(b -> b.bucket(bucket).key("dir/open").acl(ObjectCannedACL.PRIVATE));
    assertEquals(0600, mode("/" + bucket + "/dir/open"));
    assertEquals(403, unsigned("GET", "/" + bucket + "/dir/open", null).status());

    // An ACL document, as s3cmd --acl-public sends one: READ to all users makes it public.
    String owner = System.getProperty("user.name");
    s3.putObjectAcl(
        b ->
            b.bucket(bucket)
                .key("mine")
                .accessControlPolicy(
                    p ->
                        p.owner(o -> o.id(owner))
                            .grants(
                                Grant.builder()
                                    .grantee(g -> g.type(Type.CANONICAL_USER).id(owner))
                                    .permission(Permission.FULL_CONTROL)
                                    .build(),
                                Grant.builder()
                                    .grantee(
                                        g ->
                                            g.type(Type.GROUP)
                                                .uri(
                                                    "http://acs.amazonaws.com/groups/global/AllUsers"))
                                    .permission(Permission.READ)
                                    .build())));
    assertEquals("m", unsigned("GET", "/" + bucket + "/mine", null).text());

    // A grant to one other user has no place in owner, group and mode: refused by name.
    assertS3Error(
        "NotImplemented",
        501,
        () -> s3.putObjectAcl(b -> b.bucket(bucket).key("mine").grantRead("id=\"alice\"")));
    S3ProxyTestCluster.Response nonsense =
        signed(
            "PUT",
            "/" + bucket + "/nonsense",
            Map.of("x-amz-acl", "world-readable"),
            new byte[] {1},
            Clock.systemUTC());
    assertErrorDocument(nonsense, 400, "InvalidArgument", null);
    assertTrue(nonsense.text().contains("public-read"), nonsense.text());
    assertFalse(Files.exists(cluster.ufs("/" + bucket + "/nonsense")));
  }

  @Test
  void bucketsAreListedToTheirOwnersAndAPublicBucketTakesAnyonesObjects() throws Exception {
    String bucket = "bobs-drop-box";
    s3.createBucket(b -> b.bucket(bucket).acl(BucketCannedACL.PUBLIC_READ_WRITE));
    assertEquals(0777, mode("/" + bucket));
    cluster.fs().setAttribute("/" + bucket, SetAttributeOptions.defaults().owner("bob"));
    assertEquals(
        List.of(bucket),
        bob.listBuckets().buckets().stream()
            .map(software.amazon.awssdk.services.s3.model.Bucket::name)
            .toList());
    assertTrue(alice.listBuckets().buckets().isEmpty());
    assertTrue(
        s3.listBuckets().buckets().stream().anyMatch(b -> b.name().equals(BUCKET)),
        "the test user's buckets are listed to it");
    assertEquals(403, unsigned("GET", "/", null).status());

    // Anyone writes in it; what alice gives the bucket's owner, he reads, and nothing else of hers.
    alice.putObject(
        b -> b.bucket(bucket).key("for-bob").acl(ObjectCannedACL.BUCKET_OWNER_READ),
        RequestBody.fromString("f"));
    alice.putObject(b -> b.bucket(bucket).key("alices"), RequestBody.fromString("a"));
    assertEquals("alice", cluster.fs().getStatus("/" + bucket + "/for-bob").getOwner());
    assertEquals("f", bob.getObjectAsBytes(b -> b.bucket(bucket).key("for-bob")).asUtf8String());
    assertS3Error(
        "AccessDenied", 403, () -> bob.getObjectAsBytes(b -> b.bucket(bucket).key("alices")));
    S3ProxyTestCluster.Response put = unsigned("PUT", "/" + bucket + "/anonymous", new byte[] {7});
    assertEquals(200, put.status(), put.text());
    assertEquals("nobody", cluster.fs().getStatus("/" + bucket + "/anonymous").getOwner());
    S3ProxyTestCluster.Response list = unsigned("GET", "/" + bucket + "?list-type=2", null);
    assertEquals(200, list.status(), list.text());
    assertTrue(list.text().contains("<Key>for-bob</Key>"), list.text());
    assertTrue(
        s3.getBucketAcl(b -> b.bucket(bucket)).grants().stream()
            .anyMatch(
                g ->
                    "http://acs.amazonaws.com/groups/global/AllUsers".equals(g.grantee().uri())
                        && g.permission() == Permission.WRITE));

    // The owner closes it: unsigned requests are refused again.
    bob.putBucketAcl(b -> b.bucket(bucket).acl(BucketCannedACL.PRIVATE));
    assertEquals(0700, mode("/" + bucket));
    await("the bucket's new ACL to apply")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> unsigned("GET", "/" + bucket + "?list-type=2", null).status() == 403);
  }

  @Test
  void objectsWrittenWithoutAnAclTakeTheirBucketsReadAndWriteBits() throws Exception {
    String bucket = "team-dataset";
    s3.createBucket(b -> b.bucket(bucket));
    cluster.fs().setAttribute("/" + bucket, SetAttributeOptions.defaults().mode(0750));
    // The proxy sees the bucket's new mode through the namespace's change stream.
    await("objects of a 0750 bucket to be 0640")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              s3.putObject(b -> b.bucket(bucket).key("shard-0"), RequestBody.fromString("x"));
              return mode("/" + bucket + "/shard-0") == 0640;
            });
    s3.putObject(
        b -> b.bucket(bucket).key("secret").acl(ObjectCannedACL.PRIVATE),
        RequestBody.fromString("s"));
    assertEquals(0600, mode("/" + bucket + "/secret"));
  }

  @Test
  void aBucketPolicyAllowsWhatTheModesDoNotAndDeniesWhatTheyDo() throws Exception {
    String bucket = "policed";
    s3.createBucket(b -> b.bucket(bucket));
    for (String key : List.of("public/a", "private/b", "team/c")) {
      s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString(key));
    }
    assertS3Error(
        "AccessDenied", 403, () -> alice.getObjectAsBytes(b -> b.bucket(bucket).key("public/a")));
    assertS3Error("NoSuchBucketPolicy", 404, () -> s3.getBucketPolicy(b -> b.bucket(bucket)));
    String policy =
        """
        {"Version": "2012-10-17", "Statement": [
          {"Sid": "PublicPrefix", "Effect": "Allow", "Principal": "*",
           "Action": "s3:GetObject", "Resource": "arn:aws:s3:::policed/public/*"},
          {"Sid": "AliceListsPublic", "Effect": "Allow", "Principal": {"AWS": ["alice"]},
           "Action": "s3:ListBucket", "Resource": "arn:aws:s3:::policed",
           "Condition": {"StringLike": {"s3:prefix": ["public/*"]}}},
          {"Sid": "BobsTeam", "Effect": "Allow",
           "Principal": {"AWS": "arn:aws:iam::000000000000:user/bob"},
           "Action": ["s3:PutObject", "s3:GetObject"], "Resource": "arn:aws:s3:::policed/team/*"},
          {"Sid": "NoDeletes", "Effect": "Deny", "Principal": "*",
           "Action": "s3:DeleteObject", "Resource": "arn:aws:s3:::policed/*"},
          {"Sid": "LoopbackOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
           "Resource": "arn:aws:s3:::policed/*",
           "Condition": {"NotIpAddress": {"aws:SourceIp": ["127.0.0.0/8", "::1/128"]}}}
        ]}""";
    s3.putBucketPolicy(b -> b.bucket(bucket).policy(policy));
    assertEquals(policy, s3.getBucketPolicy(b -> b.bucket(bucket)).policy());
    assertS3Error(
        "AccessDenied",
        403,
        () -> alice.putBucketPolicy(b -> b.bucket(bucket).policy(policy.replace("Deny", "Allow"))));

    // Allowed by the policy although the bucket is the owner's alone (0700).
    assertEquals(
        "public/a", alice.getObjectAsBytes(b -> b.bucket(bucket).key("public/a")).asUtf8String());
    assertEquals("public/a", unsigned("GET", "/" + bucket + "/public/a", null).text());
    assertEquals(
        List.of("public/a"),
        alice.listObjectsV2(b -> b.bucket(bucket).prefix("public/")).contents().stream()
            .map(S3Object::key)
            .toList());
    bob.putObject(b -> b.bucket(bucket).key("team/by-bob"), RequestBody.fromString("bob"));
    assertEquals("bob", cluster.fs().getStatus("/" + bucket + "/team/by-bob").getOwner());
    assertEquals(
        "team/c", bob.getObjectAsBytes(b -> b.bucket(bucket).key("team/c")).asUtf8String());

    // Not allowed by it: the modes decide, and they refuse.
    assertS3Error(
        "AccessDenied", 403, () -> alice.getObjectAsBytes(b -> b.bucket(bucket).key("private/b")));
    assertS3Error("AccessDenied", 403, () -> alice.listObjectsV2(b -> b.bucket(bucket)));
    assertS3Error(
        "AccessDenied",
        403,
        () -> bob.putObject(b -> b.bucket(bucket).key("public/x"), RequestBody.fromString("x")));

    // Denied by it: refused whatever the modes allow, the owner included.
    S3Exception denied =
        org.junit.jupiter.api.Assertions.assertThrows(
            S3Exception.class, () -> s3.deleteObject(b -> b.bucket(bucket).key("public/a")));
    assertEquals(403, denied.statusCode());
    assertTrue(denied.awsErrorDetails().errorMessage().contains("NoDeletes"), denied.getMessage());
    assertTrue(Files.exists(cluster.ufs("/" + bucket + "/public/a")));

    assertS3Error(
        "MalformedPolicy",
        400,
        () ->
            s3.putBucketPolicy(
                b ->
                    b.bucket(bucket)
                        .policy(
                            "{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": \"*\","
                                + " \"Action\": \"s3:GetObject\", \"Resource\":"
                                + " \"arn:aws:s3:::another-bucket/*\"}]}")));
    s3.deleteBucketPolicy(b -> b.bucket(bucket));
    assertS3Error(
        "AccessDenied", 403, () -> alice.getObjectAsBytes(b -> b.bucket(bucket).key("public/a")));
    s3.deleteObject(b -> b.bucket(bucket).key("public/a"));
  }
}
