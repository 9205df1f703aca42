package io.strata.proxy.auth;

import static io.strata.proxy.auth.SigV4VerifierTest.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.strata.common.auth.ProxyCredentials;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.http.SdkHttpMethod;

/**
 * Signature Version 2 as S3 documents it: the worked examples of its "Signing and authenticating
 * REST requests" page (key AKIAIOSFODNN7EXAMPLE) give the very signatures printed there, and
 * presigned URLs, times, keys and the switch that turns the version off behave as S3 does.
 */
class SigV2VerifierTest {
  private static final String DOC_KEY = "AKIAIOSFODNN7EXAMPLE";
  private static final String DOC_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  private static final String USER = "bob";
  private static final String DOC_BUCKET = "awsexamplebucket1";
  private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

  private static SignatureVerifier verifier(Instant now, boolean sigV2Enabled) {
    return new SignatureVerifier(
        ProxyCredentials.of(List.of(new Credential(DOC_KEY, DOC_SECRET, USER)))::find,
        Clock.fixed(now, ZoneOffset.UTC),
        false,
        SigV4Verifier.MAX_SKEW,
        sigV2Enabled);
  }

  private static SignatureVerifier verifierAt(String httpDate) {
    return verifier(
        ZonedDateTime.parse(httpDate, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant(), true);
  }

  private static HttpHeaders headers(String... namesAndValues) {
    HttpHeaders h = new DefaultHttpHeaders();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      h.add(namesAndValues[i], namesAndValues[i + 1]);
    }
    return h;
  }

  /** The signature as the S3 documentation defines it, computed here independently. */
  private static String sign(String secret, String stringToSign) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA1");
    mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
    return Base64.getEncoder()
        .encodeToString(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
  }

  private static String httpDate(Instant t) {
    return DateTimeFormatter.RFC_1123_DATE_TIME.format(t.atOffset(ZoneOffset.UTC));
  }

  // ---- The documented examples ----

  @Test
  void documentedObjectGetVerifies() {
    String date = "Tue, 27 Mar 2007 19:36:42 +0000";
    AuthResult auth =
        verifierAt(date)
            .verify(
                "GET",
                "/photos/puppy.jpg",
                "",
                headers(
                    "Host",
                    DOC_BUCKET + ".s3.us-west-1.amazonaws.com",
                    "Date",
                    date,
                    "Authorization",
                    "AWS " + DOC_KEY + ":qgk2+6Sv9/oM7G3qLEjTH1a1l1g="),
                DOC_BUCKET);
    assertEquals(USER, auth.user());
    assertEquals(DOC_KEY, auth.accessKey());
    assertFalse(auth.presigned());
    assertEquals(PayloadMode.UNSIGNED, auth.payloadMode());
  }

  @Test
  void documentedObjectPutSignsItsContentType() {
    String date = "Tue, 27 Mar 2007 21:15:45 +0000";
    HttpHeaders h =
        headers(
            "Host",
            DOC_BUCKET + ".s3.us-west-1.amazonaws.com",
            "Date",
            date,
            "Content-Type",
            "image/jpeg",
            "Content-Length",
            "94328",
            "Authorization",
            "AWS " + DOC_KEY + ":iqRzw+ileNPu1fhspnRs8nOjjIA=");
    assertEquals(
        USER, verifierAt(date).verify("PUT", "/photos/puppy.jpg", "", h, DOC_BUCKET).user());
    h.set("Content-Type", "image/png");
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> verifierAt(date).verify("PUT", "/photos/puppy.jpg", "", h, DOC_BUCKET));
  }

  @Test
  void documentedListSignsTheBucketButNotItsListingParameters() {
    String date = "Tue, 27 Mar 2007 19:42:41 +0000";
    assertEquals(
        USER,
        verifierAt(date)
            .verify(
                "GET",
                "/",
                "prefix=photos&max-keys=50&marker=puppy",
                headers(
                    "Host",
                    DOC_BUCKET + ".s3.us-west-1.amazonaws.com",
                    "Date",
                    date,
                    "Authorization",
                    "AWS " + DOC_KEY + ":m0WP8eCtspQl5Ahe6L1SozdX9YA="),
                DOC_BUCKET)
            .user());
  }

  @Test
  void documentedAclFetchSignsTheSubResource() {
    String date = "Tue, 27 Mar 2007 19:44:46 +0000";
    HttpHeaders h =
        headers(
            "Host",
            DOC_BUCKET + ".s3.us-west-1.amazonaws.com",
            "Date",
            date,
            "Authorization",
            "AWS " + DOC_KEY + ":82ZHiFIjc+WbcwFKGUVEQspPn+0=");
    assertEquals(USER, verifierAt(date).verify("GET", "/", "acl", h, DOC_BUCKET).user());
    // Without the sub-resource it is another request.
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> verifierAt(date).verify("GET", "/", "", h, DOC_BUCKET));
  }

  @Test
  void documentedDeleteVerifiesPathStyleToo() {
    String date = "Tue, 27 Mar 2007 21:20:26 +0000";
    String auth = "AWS " + DOC_KEY + ":XbyTlbQdu9Xw5o8P4iMwPktxQd8=";
    // Virtual-host style, and the same resource named path-style.
    assertEquals(
        USER,
        verifierAt(date)
            .verify(
                "DELETE",
                "/photos/puppy.jpg",
                "",
                headers(
                    "Host", DOC_BUCKET + ".s3.amazonaws.com", "Date", date, "Authorization", auth),
                DOC_BUCKET)
            .user());
    assertEquals(
        USER,
        verifierAt(date)
            .verify(
                "DELETE",
                "/" + DOC_BUCKET + "/photos/puppy.jpg",
                "",
                headers("Host", "localhost:19400", "Date", date, "Authorization", auth),
                null)
            .user());
  }

  // ---- The string to sign ----

  @Test
  void stringToSignCanonicalizesAmzHeadersAndSubResources() {
    HttpHeaders h =
        headers(
            "X-Amz-Meta-ReviewedBy", "joe@example.com",
            "x-amz-meta-reviewedby", "jane@example.com",
            "x-amz-acl", "public-read",
            "Content-Type", "text/plain");
    Map<String, String> amz = SigV2StringToSign.amzHeaders(h, List.of(), false);
    assertEquals(List.of("x-amz-acl", "x-amz-meta-reviewedby"), List.copyOf(amz.keySet()));
    assertEquals("joe@example.com,jane@example.com", amz.get("x-amz-meta-reviewedby"));
    String resource =
        SigV2StringToSign.resource(
            null,
            "/bucket/a%20b",
            CanonicalRequest.parseQuery(
                "versionId=v%2B1&uploads&prefix=x&response-content-disposition=attachment%3B%20f"
                    + "&acl"),
            false);
    // Sorted by name, values decoded; prefix is not a sub-resource.
    assertEquals(
        "/bucket/a%20b?acl&response-content-disposition=attachment; f&uploads&versionId=v+1",
        resource);
    assertEquals(
        "PUT\nmd5\ntext/plain\n\nx-amz-acl:public-read\nx-amz-date:d\n/b/k",
        SigV2StringToSign.of(
            "PUT",
            "md5",
            "text/plain",
            "",
            new java.util.TreeMap<>(Map.of("x-amz-date", "d", "x-amz-acl", "public-read")),
            "/b/k"));
  }

  @Test
  void xAmzDateReplacesDateAndIsSignedAmongTheAmzHeaders() throws Exception {
    String amzDate = httpDate(NOW);
    String toSign = "GET\n\n\n\nx-amz-date:" + amzDate + "\n/bucket/k";
    HttpHeaders h =
        headers(
            "Host",
            "localhost",
            // A Date far off is ignored when x-amz-date is sent.
            "Date",
            httpDate(NOW.minus(Duration.ofDays(3))),
            "x-amz-date",
            amzDate,
            "Authorization",
            "AWS " + DOC_KEY + ":" + sign(DOC_SECRET, toSign));
    assertEquals(USER, verifier(NOW, true).verify("GET", "/bucket/k", "", h, null).user());
  }

  // ---- Header-signed requests ----

  @Test
  void headerRefusals() throws Exception {
    SignatureVerifier v = verifier(NOW, true);
    String toSign = "GET\n\n\n" + httpDate(NOW) + "\n/bucket/k";
    HttpHeaders good =
        headers(
            "Host",
            "localhost",
            "Date",
            httpDate(NOW),
            "Authorization",
            "AWS " + DOC_KEY + ":" + sign(DOC_SECRET, toSign));
    assertEquals(USER, v.verify("GET", "/bucket/k", "", good, null).user());

    HttpHeaders wrongSecret = headers("Host", "localhost", "Date", httpDate(NOW));
    wrongSecret.set("Authorization", "AWS " + DOC_KEY + ":" + sign("not-the-secret", toSign));
    S3Exception e =
        refused(
            S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
            () -> v.verify("GET", "/bucket/k", "", wrongSecret, null));
    SignatureMismatchDetails details = SignatureMismatchDetails.of(e);
    assertNotNull(details);
    assertEquals(toSign, details.stringToSign());
    assertEquals(DOC_KEY, details.accessKey());

    HttpHeaders unknown = headers("Host", "localhost", "Date", httpDate(NOW));
    unknown.set("Authorization", "AWS AKNOSUCHKEY00000000:" + sign(DOC_SECRET, toSign));
    refused(
        S3ErrorCode.INVALID_ACCESS_KEY_ID, () -> v.verify("GET", "/bucket/k", "", unknown, null));

    HttpHeaders malformed = headers("Host", "localhost", "Date", httpDate(NOW));
    malformed.set("Authorization", "AWS " + DOC_KEY);
    refused(S3ErrorCode.INVALID_ARGUMENT, () -> v.verify("GET", "/bucket/k", "", malformed, null));

    malformed.set("Authorization", "AWS");
    refused(S3ErrorCode.INVALID_ARGUMENT, () -> v.verify("GET", "/bucket/k", "", malformed, null));

    HttpHeaders undated = headers("Host", "localhost", "Authorization", good.get("Authorization"));
    refused(S3ErrorCode.ACCESS_DENIED, () -> v.verify("GET", "/bucket/k", "", undated, null));

    for (Duration off : List.of(Duration.ofMinutes(-20), Duration.ofMinutes(20))) {
      String skewedDate = httpDate(NOW.plus(off));
      HttpHeaders skewed =
          headers(
              "Host",
              "localhost",
              "Date",
              skewedDate,
              "Authorization",
              "AWS " + DOC_KEY + ":" + sign(DOC_SECRET, "GET\n\n\n" + skewedDate + "\n/bucket/k"));
      refused(
          S3ErrorCode.REQUEST_TIME_TOO_SKEWED,
          () -> v.verify("GET", "/bucket/k", "", skewed, null));
    }
  }

  @Test
  void anUnsignedAmzHeaderCannotBeAdded() throws Exception {
    String toSign = "PUT\n\n\n" + httpDate(NOW) + "\n/bucket/k";
    HttpHeaders h =
        headers(
            "Host",
            "localhost",
            "Date",
            httpDate(NOW),
            "x-amz-copy-source",
            "/bucket/secret",
            "Authorization",
            "AWS " + DOC_KEY + ":" + sign(DOC_SECRET, toSign));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> verifier(NOW, true).verify("PUT", "/bucket/k", "", h, null));
  }

  // ---- Presigned URLs ----

  private static String presignedQuery(String toSignWithoutExpires, long expires, String extra)
      throws Exception {
    String[] parts = toSignWithoutExpires.split("\\|", -1);
    String toSign = parts[0] + expires + parts[1];
    return "AWSAccessKeyId="
        + DOC_KEY
        + "&Expires="
        + expires
        + "&Signature="
        + URLEncoder.encode(sign(DOC_SECRET, toSign), StandardCharsets.UTF_8)
        + extra;
  }

  @Test
  void presignedUrlsWorkUntilTheirExpiry() throws Exception {
    long expires = NOW.getEpochSecond() + 300;
    String get = presignedQuery("GET\n\n\n|\n/bucket/photos/a%20b.jpg", expires, "");
    AuthResult auth =
        verifier(NOW, true)
            .verify("GET", "/bucket/photos/a%20b.jpg", get, headers("Host", "localhost"), null);
    assertEquals(USER, auth.user());
    assertTrue(auth.presigned());
    // The last second of its validity, then the next.
    assertEquals(
        USER,
        verifier(Instant.ofEpochSecond(expires), true)
            .verify("GET", "/bucket/photos/a%20b.jpg", get, headers("Host", "localhost"), null)
            .user());
    S3Exception expired =
        refused(
            S3ErrorCode.ACCESS_DENIED,
            () ->
                verifier(Instant.ofEpochSecond(expires + 1), true)
                    .verify(
                        "GET",
                        "/bucket/photos/a%20b.jpg",
                        get,
                        headers("Host", "localhost"),
                        null));
    assertTrue(expired.getMessage().startsWith("Request has expired"), expired.getMessage());
    assertTrue(
        expired.getMessage().contains(Instant.ofEpochSecond(expires).toString()),
        expired.getMessage());
    // Another key than signed.
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            verifier(NOW, true)
                .verify(
                    "GET", "/bucket/photos/other.jpg", get, headers("Host", "localhost"), null));
    // A longer validity than signed.
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            verifier(NOW, true)
                .verify(
                    "GET",
                    "/bucket/photos/a%20b.jpg",
                    get.replace("Expires=" + expires, "Expires=" + (expires + 3600)),
                    headers("Host", "localhost"),
                    null));
  }

  @Test
  void presignedPutSignsTheContentTypeOfItsQueryOrHeader() throws Exception {
    long expires = NOW.getEpochSecond() + 60;
    // As boto3 presigns a put with a ContentType: in the query, signed where the header goes.
    String put =
        presignedQuery("PUT\n\ntext/plain\n|\n/bucket/k", expires, "&content-type=text%2Fplain");
    assertEquals(
        USER,
        verifier(NOW, true)
            .verify("PUT", "/bucket/k", put, headers("Host", "localhost"), null)
            .user());
    assertEquals(
        USER,
        verifier(NOW, true)
            .verify(
                "PUT",
                "/bucket/k",
                put,
                headers("Host", "localhost", "Content-Type", "text/plain"),
                null)
            .user());
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            verifier(NOW, true)
                .verify(
                    "PUT",
                    "/bucket/k",
                    put,
                    headers("Host", "localhost", "Content-Type", "text/html"),
                    null));
  }

  @Test
  void presignedUrlsSignResponseOverridesAndVirtualHostBuckets() throws Exception {
    long expires = NOW.getEpochSecond() + 60;
    String get =
        presignedQuery(
            "GET\n\n\n|\n/bucket/k?response-content-disposition=attachment; filename=x.bin",
            expires,
            "&response-content-disposition=attachment%3B%20filename%3Dx.bin");
    assertEquals(
        USER,
        verifier(NOW, true)
            .verify("GET", "/k", get, headers("Host", "bucket.s3.local"), "bucket")
            .user());
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            verifier(NOW, true)
                .verify(
                    "GET",
                    "/k",
                    get.replace("x.bin", "y.bin"),
                    headers("Host", "bucket.s3.local"),
                    "bucket"));
  }

  @Test
  void presignedUrlsNeedAllThreeParameters() {
    for (String query :
        List.of(
            "AWSAccessKeyId=" + DOC_KEY + "&Signature=abc",
            "AWSAccessKeyId=" + DOC_KEY + "&Expires=1",
            "Signature=abc&Expires=1")) {
      refused(
          S3ErrorCode.ACCESS_DENIED,
          () -> verifier(NOW, true).verify("GET", "/b/k", query, headers("Host", "h"), null));
    }
    refused(
        S3ErrorCode.ACCESS_DENIED,
        () ->
            verifier(NOW, true)
                .verify(
                    "GET",
                    "/b/k",
                    "AWSAccessKeyId=" + DOC_KEY + "&Signature=abc&Expires=soon",
                    headers("Host", "h"),
                    null));
  }

  // ---- Mechanisms ----

  @Test
  void turnedOffSignatureVersion2IsRefusedWithTheWayOut() throws Exception {
    SignatureVerifier off = verifier(NOW, false);
    String toSign = "GET\n\n\n" + httpDate(NOW) + "\n/bucket/k";
    HttpHeaders h =
        headers(
            "Host",
            "localhost",
            "Date",
            httpDate(NOW),
            "Authorization",
            "AWS " + DOC_KEY + ":" + sign(DOC_SECRET, toSign));
    S3Exception e =
        refused(S3ErrorCode.INVALID_REQUEST, () -> off.verify("GET", "/bucket/k", "", h, null));
    assertTrue(e.getMessage().contains("strata.proxy.auth.sigv2.enabled"), e.getMessage());
    assertTrue(e.getMessage().contains("AWS4-HMAC-SHA256"), e.getMessage());
    String query = presignedQuery("GET\n\n\n|\n/bucket/k", NOW.getEpochSecond() + 60, "");
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () -> off.verify("GET", "/bucket/k", query, headers("Host", "localhost"), null));
  }

  @Test
  void twoMechanismsAtOnceAreRefused() throws Exception {
    String query = presignedQuery("GET\n\n\n|\n/bucket/k", NOW.getEpochSecond() + 60, "");
    HttpHeaders h = headers("Host", "localhost", "Authorization", "AWS " + DOC_KEY + ":abc");
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        () -> verifier(NOW, true).verify("GET", "/bucket/k", query, h, null));
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        () ->
            verifier(NOW, true)
                .verify(
                    "GET",
                    "/bucket/k",
                    query + "&X-Amz-Algorithm=AWS4-HMAC-SHA256",
                    headers("Host", "localhost"),
                    null));
  }

  @Test
  void signatureVersion4StillGoesToItsVerifier() {
    WireRequest req =
        Signing.sign(Signing.objectRequest(SdkHttpMethod.GET, "k").build(), new byte[0]);
    SignatureVerifier v =
        new SignatureVerifier(
            Signing.credentials()::find,
            Signing.clockAt(Signing.TIME),
            false,
            SigV4Verifier.MAX_SKEW,
            false);
    assertEquals(
        Signing.USER,
        v.verify(req.method(), req.rawPath(), req.rawQuery(), req.headers(), null).user());
  }
}
