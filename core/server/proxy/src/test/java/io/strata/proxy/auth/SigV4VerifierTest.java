package io.strata.proxy.auth;

import static io.strata.proxy.auth.Signing.ACCESS_KEY;
import static io.strata.proxy.auth.Signing.SECRET;
import static io.strata.proxy.auth.Signing.TIME;
import static io.strata.proxy.auth.Signing.USER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.strata.common.auth.ProxyCredentials;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;

class SigV4VerifierTest {
  private static final byte[] BODY = "hello, strata".getBytes(StandardCharsets.UTF_8);

  static S3Exception refused(S3ErrorCode code, Executable call) {
    S3Exception e = assertThrows(S3Exception.class, call);
    assertEquals(code, e.code(), () -> "wrong code; message: " + e.getMessage());
    return e;
  }

  private static WireRequest signedPut(String key) {
    return Signing.sign(
        Signing.objectRequest(SdkHttpMethod.PUT, key)
            .putHeader("Content-Length", Integer.toString(BODY.length))
            .putHeader("x-amz-meta-color", "blue")
            .build(),
        BODY);
  }

  @Test
  void headerSignatureWithPayloadHashNamesTheUserAndTheHashToCheck() {
    AuthResult auth = signedPut("photos/cat.jpg").verify(Signing.verifier());
    assertEquals(USER, auth.user());
    assertEquals(ACCESS_KEY, auth.accessKey());
    assertFalse(auth.anonymous());
    assertFalse(auth.presigned());
    assertEquals(PayloadMode.SIGNED_SHA256, auth.payloadMode());
    assertEquals(Digests.hex(Digests.sha256(BODY)), auth.expectedPayloadSha256());
    assertNull(auth.chunkSigner());
  }

  @Test
  void unsignedPayloadIsAcceptedAndSaysSo() {
    // The SDK signs the payload whatever the setting over plain http, so this goes by https.
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.PUT, "k")
                .protocol("https")
                .port(443)
                .putHeader("Content-Length", Integer.toString(BODY.length))
                .build(),
            BODY,
            r -> r.putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, false));
    assertEquals(PayloadMode.UNSIGNED_PAYLOAD, req.headers().get("x-amz-content-sha256"));
    AuthResult auth = req.verify(Signing.verifier());
    assertEquals(PayloadMode.UNSIGNED, auth.payloadMode());
    assertNull(auth.expectedPayloadSha256());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "a b",
        "ü/ñ/日本語.txt",
        "a+b",
        "x~y",
        "s*t",
        "p%q",
        "e=f&g",
        "dir//double/./dot/../x",
        "semi;colon,comma:(paren)!$'@",
        "tab\tand\nnewline",
        "%2F%20already-encoded",
        "trailing/",
        "~/.hidden"
      })
  void keysWithSpecialCharactersVerify(String key) {
    AuthResult auth = signedPut(key).verify(Signing.verifier());
    assertEquals(USER, auth.user());
  }

  @Test
  void queryParametersAreCanonicalisedAsClientsSignThem() {
    WireRequest req =
        Signing.sign(
            SdkHttpFullRequest.builder()
                .method(SdkHttpMethod.GET)
                .protocol("http")
                .host("localhost")
                .port(9000)
                .encodedPath("/bucket")
                .putRawQueryParameter("list-type", "2")
                .putRawQueryParameter("prefix", "a b/ü+&=x")
                .putRawQueryParameter("continuation-token", "1/Abc+Def==")
                .putRawQueryParameter("delimiter", "/")
                .putRawQueryParameter("encoding-type", "url")
                .putRawQueryParameter("empty", "")
                .build(),
            new byte[0]);
    AuthResult auth = req.verify(Signing.verifier());
    assertEquals(USER, auth.user());
    assertTrue(auth.queryPlusIsSpace(), "no raw '+' was sent, so the default reading holds");
  }

  @Test
  void everyRequestTheRealS3ClientSendsVerifies() {
    CapturingHttpClient http = new CapturingHttpClient();
    SigV4Verifier verifier = new SigV4Verifier(Signing.credentials(), Clock.systemUTC(), false);
    try (S3Client s3 = CapturingHttpClient.s3(http, ACCESS_KEY, SECRET, b -> {})) {
      quietly(
          () ->
              s3.listObjectsV2(
                  r ->
                      r.bucket("bucket")
                          .prefix("a b+c")
                          .continuationToken("x+y/z=")
                          .delimiter("/")));
      AuthResult list = http.last().verify(verifier);
      assertEquals(PayloadMode.UNSIGNED, list.payloadMode());

      quietly(() -> s3.createMultipartUpload(r -> r.bucket("bucket").key("big file+1")));
      assertTrue(http.last().rawQuery().equals("uploads"), http.last().rawQuery());
      AuthResult create = http.last().verify(verifier);
      assertEquals(Digests.EMPTY_SHA256_HEX, create.expectedPayloadSha256());

      quietly(
          () ->
              s3.getObject(
                  r ->
                      r.bucket("bucket")
                          .key("dir/ü ñ*~'()!.bin")
                          .range("bytes=0-99")
                          .responseContentDisposition("attachment; filename=\"a b.bin\"")));
      assertEquals(USER, http.last().verify(verifier).user());

      quietly(
          () ->
              s3.deleteObjects(
                  r ->
                      r.bucket("bucket")
                          .delete(
                              d ->
                                  d.objects(
                                      ObjectIdentifier.builder().key("a").build(),
                                      ObjectIdentifier.builder().key("b").build()))));
      assertEquals(USER, http.last().verify(verifier).user());

      quietly(
          () ->
              s3.putObject(
                  r -> r.bucket("bucket").key("k").metadata(Map.of("note", "spaced   out  value")),
                  RequestBody.fromBytes(BODY)));
      AuthResult put = http.last().verify(verifier);
      assertTrue(put.payloadMode().streaming(), put.toString());
    }
  }

  @Test
  void aPlusInTheQueryIsReadAsTheClientSignedIt() {
    SdkHttpFullRequest.Builder base =
        SdkHttpFullRequest.builder()
            .method(SdkHttpMethod.GET)
            .protocol("http")
            .host("localhost")
            .port(9000)
            .encodedPath("/bucket")
            .putRawQueryParameter("list-type", "2");
    // A form encoder sends the space of "a b" as '+', having signed %20.
    WireRequest space =
        Signing.sign(base.copy().putRawQueryParameter("prefix", "a b").build(), new byte[0]);
    WireRequest spaceAsPlus = space.withQuery(space.rawQuery().replace("%20", "+"));
    assertTrue(spaceAsPlus.rawQuery().contains("prefix=a+b"), spaceAsPlus.rawQuery());
    assertTrue(spaceAsPlus.verify(Signing.verifier()).queryPlusIsSpace());

    // An RFC 3986 client sends the plus of "a+b" unencoded, having signed %2B.
    WireRequest plus =
        Signing.sign(base.copy().putRawQueryParameter("prefix", "a+b").build(), new byte[0]);
    WireRequest rawPlus = plus.withQuery(plus.rawQuery().replace("%2B", "+"));
    assertTrue(rawPlus.rawQuery().contains("prefix=a+b"), rawPlus.rawQuery());
    assertFalse(rawPlus.verify(Signing.verifier()).queryPlusIsSpace());

    // But "a b" signed cannot be replayed as an encoded plus sign.
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> space.withQuery(space.rawQuery().replace("%20", "%2B")).verify(Signing.verifier()));
  }

  @Test
  void aPlusInThePathIsASpaceAsS3ReadsIt() {
    WireRequest space = signedPut("a b");
    assertEquals("/bucket/a%20b", space.rawPath());
    assertEquals(USER, space.withPath("/bucket/a+b").verify(Signing.verifier()).user());

    WireRequest plus = signedPut("a+b");
    assertEquals("/bucket/a%2Bb", plus.rawPath());
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> plus.withPath("/bucket/a+b").verify(Signing.verifier()));
  }

  @Test
  void authorizationHeaderSpacingVariantsAreAccepted() {
    WireRequest req = signedPut("k");
    String auth = req.headers().get("Authorization");
    String compact = auth.replace(", ", ",");
    String loose =
        auth.replace("AWS4-HMAC-SHA256 ", "AWS4-HMAC-SHA256   ").replace(", ", " ,  ") + " ";
    assertEquals(USER, req.withHeader("Authorization", compact).verify(Signing.verifier()).user());
    assertEquals(USER, req.withHeader("Authorization", loose).verify(Signing.verifier()).user());
  }

  @Test
  void headerValuesAreTrimmedCollapsedAndRepeatsJoined() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.PUT, "k")
                .putHeader("Content-Length", Integer.toString(BODY.length))
                .putHeader("x-amz-meta-spaces", "  a   b \t c  ")
                .appendHeader("x-amz-meta-list", "one")
                .appendHeader("x-amz-meta-list", "two  three")
                .build(),
            BODY);
    assertEquals(2, req.headers().getAll("x-amz-meta-list").size());
    assertEquals(USER, req.verify(Signing.verifier()).user());
  }

  @Test
  void nonAsciiHeaderValuesVerifyAsNettyDeliversThem() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.PUT, "k")
                .putHeader("Content-Length", Integer.toString(BODY.length))
                .putHeader("x-amz-meta-name", "café ☕ 日本")
                .build(),
            BODY);
    // Netty gives one char per byte received; the client signed the UTF-8 bytes.
    assertEquals(
        new String("café ☕ 日本".getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1),
        req.headers().get("x-amz-meta-name"));
    assertEquals(USER, req.verify(Signing.verifier()).user());
  }

  @Test
  void anyRegionIsAcceptedWithTheScopeTheClientSent() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.GET, "k").build(),
            new byte[0],
            r -> r.putProperty(AwsV4HttpSigner.REGION_NAME, "mars-north-7"));
    assertTrue(req.headers().get("Authorization").contains("/mars-north-7/s3/"));
    assertEquals(USER, req.verify(Signing.verifier()).user());
  }

  @Test
  void wrongSecretIsRefusedWithTheCanonicalRequestOnlyInTheDetails() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.GET, "k").build(),
            new byte[0],
            ACCESS_KEY,
            "another-secret",
            r -> {});
    S3Exception e =
        refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> req.verify(Signing.verifier()));
    assertFalse(e.getMessage().contains("x-amz-date"), e.getMessage());
    SignatureMismatchDetails details = SignatureMismatchDetails.of(e);
    assertNotNull(details);
    assertEquals(ACCESS_KEY, details.accessKey());
    assertTrue(
        details.canonicalRequest().startsWith("GET\n/bucket/k\n\n"), details.canonicalRequest());
    assertTrue(
        details
            .stringToSign()
            .startsWith(
                "AWS4-HMAC-SHA256\n20260301T120000Z\n" + "20260301/us-east-1/s3/aws4_request\n"),
        details.stringToSign());
    assertTrue(req.headers().get("Authorization").endsWith(details.signatureProvided()));
  }

  @Test
  void unknownAccessKeyIsRefused() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.GET, "k").build(),
            new byte[0],
            "AKIAUNKNOWN000000000",
            SECRET,
            r -> {});
    S3Exception e =
        refused(S3ErrorCode.INVALID_ACCESS_KEY_ID, () -> req.verify(Signing.verifier()));
    assertTrue(e.getMessage().contains("AKIAUNKNOWN000000000"), e.getMessage());
  }

  @Test
  void tamperedRequestsAreRefused() {
    WireRequest req = signedPut("k");
    SigV4Verifier v = Signing.verifier();
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () -> req.withHeader("x-amz-meta-color", "red").verify(v));
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> req.withPath("/bucket/k2").verify(v));
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> req.withQuery("acl").verify(v));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            req.withHeader(
                    "x-amz-content-sha256",
                    Digests.hex(Digests.sha256("other".getBytes(StandardCharsets.UTF_8))))
                .verify(v));
    refused(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        () ->
            new WireRequest("POST", req.rawPath(), req.rawQuery(), req.headers(), BODY).verify(v));
    S3Exception missing =
        refused(
            S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
            () -> req.withoutHeader("x-amz-meta-color").verify(v));
    assertTrue(
        missing.getMessage().contains("'x-amz-meta-color' is not in the request"),
        missing.getMessage());
  }

  @Test
  void unsignedAmzHeadersAreRefused() {
    S3Exception e =
        refused(
            S3ErrorCode.ACCESS_DENIED,
            () ->
                signedPut("k")
                    .withHeader("x-amz-copy-source", "/other/secret")
                    .verify(Signing.verifier()));
    assertTrue(e.getMessage().contains("x-amz-copy-source"), e.getMessage());
  }

  @Test
  void clockSkewBeyondFifteenMinutesIsRefusedEitherWay() {
    WireRequest req = signedPut("k");
    for (Duration offset : new Duration[] {Duration.ofMinutes(16), Duration.ofMinutes(-16)}) {
      SigV4Verifier v =
          new SigV4Verifier(Signing.credentials(), Signing.clockAt(TIME.plus(offset)), false);
      refused(S3ErrorCode.REQUEST_TIME_TOO_SKEWED, () -> req.verify(v));
    }
    for (Duration offset : new Duration[] {Duration.ofMinutes(14), Duration.ofMinutes(-14)}) {
      SigV4Verifier v =
          new SigV4Verifier(Signing.credentials(), Signing.clockAt(TIME.plus(offset)), false);
      assertEquals(USER, req.verify(v).user());
    }
  }

  @Test
  void requestsWithoutTimeOrPayloadHashAreRefusedAsS3Does() {
    WireRequest req = signedPut("k");
    refused(
        S3ErrorCode.ACCESS_DENIED,
        () -> req.withoutHeader("X-Amz-Date").verify(Signing.verifier()));
    S3Exception noHash =
        refused(
            S3ErrorCode.INVALID_REQUEST,
            () -> req.withoutHeader("x-amz-content-sha256").verify(Signing.verifier()));
    assertTrue(noHash.getMessage().contains("x-amz-content-sha256"));
    String auth = req.headers().get("Authorization");
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            req.withHeader("Authorization", auth.replace(";x-amz-content-sha256", ""))
                .verify(Signing.verifier()));
    // A credential date other than the request's day.
    refused(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        () ->
            req.withHeader("Authorization", auth.replace("/20260301/", "/20260302/"))
                .verify(Signing.verifier()));
  }

  @Test
  void malformedOrForeignAuthorizationHeadersAreRefused() {
    WireRequest req = signedPut("k");
    String auth = req.headers().get("Authorization");
    SigV4Verifier v = Signing.verifier();
    refused(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        () ->
            req.withHeader("Authorization", auth.substring(0, auth.indexOf(", Signature=")))
                .verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        () -> req.withHeader("Authorization", auth.replace("/s3/", "/ec2/")).verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        () ->
            req.withHeader(
                    "Authorization", auth.replace("AWS4-HMAC-SHA256", "AWS4-ECDSA-P256-SHA256"))
                .verify(v));
    refused(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        () -> req.withHeader("Authorization", "AWS4-HMAC-SHA256").verify(v));
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            req.withHeader("Authorization", "AWS " + ACCESS_KEY + ":frJIUN8DYpKDtOLCwo//yllqDzg=")
                .verify(v));
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        () -> req.withQuery("X-Amz-Algorithm=" + "AWS4-HMAC-SHA256").verify(v));
  }

  @Test
  void serviceOtherThanS3IsRefused() {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.GET, "k").build(),
            new byte[0],
            r -> r.putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "ec2"));
    S3Exception e =
        refused(S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED, () -> req.verify(Signing.verifier()));
    assertTrue(e.getMessage().contains("\"ec2\""), e.getMessage());
  }

  @Test
  void anonymousRequestsFollowTheSetting() {
    DefaultHttpHeaders headers = new DefaultHttpHeaders();
    headers.set("Host", "localhost:9000");
    SigV4Verifier open = new SigV4Verifier(Signing.credentials(), Signing.clockAt(TIME), true);
    AuthResult anon = open.verify("GET", "/bucket/k", "", headers);
    assertTrue(anon.anonymous());
    assertNull(anon.user());
    assertNull(anon.accessKey());
    assertEquals(PayloadMode.UNSIGNED, anon.payloadMode());

    refused(
        S3ErrorCode.ACCESS_DENIED,
        () -> Signing.verifier().verify("GET", "/bucket/k", "", headers));
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            Signing.verifier()
                .verify(
                    "GET",
                    "/bucket/k",
                    "AWSAccessKeyId=" + ACCESS_KEY + "&Signature=abc&Expires=1",
                    headers));

    headers.set("x-amz-content-sha256", PayloadMode.STREAMING_SIGNED_TRAILER.name());
    refused(S3ErrorCode.INVALID_ARGUMENT, () -> open.verify("PUT", "/bucket/k", "", headers));
    headers.set("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
    refused(S3ErrorCode.INVALID_REQUEST, () -> open.verify("PUT", "/bucket/k", "", headers));
    headers.set("x-amz-content-sha256", "STREAMING-UNSIGNED-PAYLOAD-TRAILER");
    headers.set("x-amz-trailer", "x-amz-checksum-crc32");
    AuthResult streaming = open.verify("PUT", "/bucket/k", "", headers);
    assertEquals(PayloadMode.STREAMING_UNSIGNED_TRAILER, streaming.payloadMode());
    assertEquals(List.of("x-amz-checksum-crc32"), streaming.declaredTrailers());
  }

  @Test
  void badPercentEscapesAreRefused() {
    WireRequest req = signedPut("k");
    refused(
        S3ErrorCode.INVALID_REQUEST, () -> req.withPath("/bucket/100%").verify(Signing.verifier()));
    refused(
        S3ErrorCode.INVALID_REQUEST, () -> req.withQuery("prefix=%zz").verify(Signing.verifier()));
  }

  @Test
  void credentialsCanComeFromAFunction() {
    SigV4Verifier v =
        new SigV4Verifier(
            ak ->
                ak.equals(ACCESS_KEY)
                    ? Optional.of(new ProxyCredentials.Credential(ak, SECRET, "bob"))
                    : Optional.empty(),
            Signing.clockAt(TIME),
            false,
            SigV4Verifier.MAX_SKEW);
    assertEquals("bob", signedPut("k").verify(v).user());
  }

  private static void quietly(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      // The capturing client answers with an empty body, which some responses cannot parse;
      // the request was captured before that.
    }
  }
}
