package io.strata.proxy.auth;

import static io.strata.proxy.auth.SigV4VerifierTest.refused;
import static io.strata.proxy.auth.Signing.ACCESS_KEY;
import static io.strata.proxy.auth.Signing.SECRET;
import static io.strata.proxy.auth.Signing.TIME;
import static io.strata.proxy.auth.Signing.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.presigner.PresignedRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4FamilyHttpSigner.AuthLocation;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;
import software.amazon.awssdk.services.s3.presigner.model.PresignedGetObjectRequest;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;

class PresignedUrlTest {
  private static S3Presigner presigner;

  @BeforeAll
  static void startPresigner() {
    presigner =
        S3Presigner.builder()
            .region(Region.of("eu-central-1"))
            .endpointOverride(URI.create("http://localhost:9000"))
            .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
            .credentialsProvider(
                StaticCredentialsProvider.create(AwsBasicCredentials.create(ACCESS_KEY, SECRET)))
            .build();
  }

  @AfterAll
  static void stopPresigner() {
    presigner.close();
  }

  /** What a browser or curl sends for a presigned URL: its path and query, and its headers. */
  private static WireRequest asSent(PresignedRequest p, SdkHttpMethod method) {
    URI url;
    try {
      url = p.url().toURI();
    } catch (URISyntaxException e) {
      throw new AssertionError(e);
    }
    StringBuilder head =
        new StringBuilder(method.name())
            .append(' ')
            .append(url.getRawPath())
            .append('?')
            .append(url.getRawQuery())
            .append(" HTTP/1.1\r\n");
    for (Map.Entry<String, List<String>> h : p.signedHeaders().entrySet()) {
      for (String v : h.getValue()) {
        head.append(h.getKey()).append(": ").append(v).append("\r\n");
      }
    }
    head.append("User-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n");
    return WireRequest.parse(head.toString().getBytes(StandardCharsets.UTF_8), new byte[0]);
  }

  private static SigV4Verifier verifierAt(Instant now) {
    return new SigV4Verifier(Signing.credentials(), Signing.clockAt(now), false);
  }

  private static PresignedGetObjectRequest presignGet(Duration duration) {
    return presigner.presignGetObject(
        r ->
            r.signatureDuration(duration)
                .getObjectRequest(
                    g ->
                        g.bucket("bucket")
                            .key("reports/a b+c ü*~.pdf")
                            .responseContentDisposition("attachment; filename=\"q1 & q2.pdf\"")));
  }

  @Test
  void presignedGetVerifies() {
    PresignedGetObjectRequest p = presignGet(Duration.ofHours(1));
    WireRequest req = asSent(p, SdkHttpMethod.GET);
    AuthResult auth = req.verify(verifierAt(Instant.now()));
    assertEquals(USER, auth.user());
    assertTrue(auth.presigned());
    assertEquals(PayloadMode.UNSIGNED, auth.payloadMode());
  }

  @Test
  void presignedPutWithSignedHeadersVerifies() {
    PresignedPutObjectRequest p =
        presigner.presignPutObject(
            r ->
                r.signatureDuration(Duration.ofMinutes(10))
                    .putObjectRequest(
                        o ->
                            o.bucket("bucket")
                                .key("up/load me.bin")
                                .contentType("text/plain")
                                .metadata(Map.of("owner", "alice"))));
    assertTrue(p.signedHeaders().containsKey("x-amz-meta-owner"), p.signedHeaders().toString());
    WireRequest req = asSent(p, SdkHttpMethod.PUT);
    AuthResult auth = req.verify(verifierAt(Instant.now()));
    assertEquals(USER, auth.user());
    assertEquals(PayloadMode.UNSIGNED, auth.payloadMode());

    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> req.withHeader("x-amz-meta-owner", "mallory").verify(verifierAt(Instant.now())));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            new WireRequest("GET", req.rawPath(), req.rawQuery(), req.headers(), new byte[0])
                .verify(verifierAt(Instant.now())));
  }

  @Test
  void expiredUrlIsRefusedAsS3Does() {
    PresignedGetObjectRequest p = presignGet(Duration.ofMinutes(5));
    WireRequest req = asSent(p, SdkHttpMethod.GET);
    // X-Amz-Date has whole seconds, so the URL ends up to a second before p.expiration().
    Instant lastSecond = p.expiration().truncatedTo(ChronoUnit.SECONDS);
    assertEquals(USER, req.verify(verifierAt(lastSecond)).user());
    S3Exception e =
        refused(S3ErrorCode.ACCESS_DENIED, () -> req.verify(verifierAt(lastSecond.plusSeconds(1))));
    assertTrue(e.getMessage().startsWith("Request has expired"), e.getMessage());
  }

  @Test
  void urlDatedBeyondTheSkewInTheFutureIsRefused() {
    WireRequest req = asSent(presignGet(Duration.ofHours(2)), SdkHttpMethod.GET);
    Instant now = Instant.now();
    assertEquals(USER, req.verify(verifierAt(now.minus(Duration.ofMinutes(14)))).user());
    S3Exception e =
        refused(
            S3ErrorCode.ACCESS_DENIED,
            () -> req.verify(verifierAt(now.minus(Duration.ofMinutes(16)))));
    assertTrue(e.getMessage().startsWith("Request is not yet valid"), e.getMessage());
  }

  @Test
  void tamperedOrForeignUrlsAreRefused() {
    WireRequest req = asSent(presignGet(Duration.ofHours(1)), SdkHttpMethod.GET);
    SigV4Verifier v = verifierAt(Instant.now());
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            req.withQuery(req.rawQuery().replace("X-Amz-Expires=3600", "X-Amz-Expires=7200"))
                .verify(v));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> req.withPath(req.rawPath() + "x").verify(v));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> req.withQuery(req.rawQuery() + "&versionId=1").verify(v));
    refused(
        S3ErrorCode.INVALID_ACCESS_KEY_ID,
        () -> req.withQuery(req.rawQuery().replace(ACCESS_KEY, "AKIAUNKNOWN000000000")).verify(v));
    refused(S3ErrorCode.ACCESS_DENIED, () -> req.withHeader("x-amz-acl", "public-read").verify(v));
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        () -> req.withHeader("Authorization", "AWS4-HMAC-SHA256 Credential=x").verify(v));
  }

  @Test
  void wrongSecretIsRefused() {
    try (S3Presigner other =
        S3Presigner.builder()
            .region(Region.of("eu-central-1"))
            .endpointOverride(URI.create("http://localhost:9000"))
            .serviceConfiguration(S3Configuration.builder().pathStyleAccessEnabled(true).build())
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(ACCESS_KEY, "not-the-secret")))
            .build()) {
      PresignedGetObjectRequest p =
          other.presignGetObject(
              r ->
                  r.signatureDuration(Duration.ofMinutes(5))
                      .getObjectRequest(g -> g.bucket("b").key("k")));
      refused(
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
          () -> asSent(p, SdkHttpMethod.GET).verify(verifierAt(Instant.now())));
    }
  }

  /** A URL presigned at the fixed test time by the SDK's signer, valid for that long. */
  private static WireRequest presignedAtTestTime(Duration expires) {
    return Signing.sign(
        Signing.objectRequest(SdkHttpMethod.GET, "k").build(),
        null,
        r ->
            r.putProperty(AwsV4HttpSigner.AUTH_LOCATION, AuthLocation.QUERY_STRING)
                .putProperty(AwsV4HttpSigner.EXPIRATION_DURATION, expires)
                .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, false));
  }

  @Test
  void queryParameterErrorsAreAnsweredBeforeTheSignature() {
    WireRequest req = presignedAtTestTime(Duration.ofDays(7));
    SigV4Verifier v = Signing.verifier();
    assertEquals(USER, req.verify(v).user());
    assertTrue(req.rawQuery().contains("X-Amz-Expires=604800"), req.rawQuery());
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () ->
            req.withQuery(req.rawQuery().replace("X-Amz-Expires=604800", "X-Amz-Expires=604801"))
                .verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () ->
            req.withQuery(req.rawQuery().replace("X-Amz-Expires=604800", "X-Amz-Expires=0"))
                .verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () ->
            req.withQuery(req.rawQuery().replace("X-Amz-Expires=604800", "X-Amz-Expires=soon"))
                .verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () -> req.withQuery(req.rawQuery().replaceAll("&X-Amz-Signature=[0-9a-f]+", "")).verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () -> req.withQuery(req.rawQuery().replace("%2Fs3%2F", "%2Fsqs%2F")).verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        () ->
            req.withQuery(
                    req.rawQuery().replace("X-Amz-Date=20260301T120000Z", "X-Amz-Date=2026-03-01"))
                .verify(v));
  }

  @Test
  void aWeekLongUrlExpiresAfterAWeek() {
    WireRequest req = presignedAtTestTime(Duration.ofDays(7));
    assertEquals(USER, req.verify(verifierAt(TIME.plus(Duration.ofDays(7)))).user());
    refused(
        S3ErrorCode.ACCESS_DENIED,
        () -> req.verify(verifierAt(TIME.plus(Duration.ofDays(7)).plusSeconds(1))));
  }
}
