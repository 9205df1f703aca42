package io.strata.proxy.auth;

import io.strata.common.auth.ProxyCredentials;
import io.strata.common.auth.ProxyCredentials.Credential;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.Consumer;
import software.amazon.awssdk.http.ContentStreamProvider;
import software.amazon.awssdk.http.SdkHttpFullRequest;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.HttpSigner;
import software.amazon.awssdk.http.auth.spi.signer.SignRequest;
import software.amazon.awssdk.http.auth.spi.signer.SignedRequest;
import software.amazon.awssdk.identity.spi.AwsCredentialsIdentity;
import software.amazon.awssdk.utils.http.SdkHttpUtils;

/** Requests signed by the AWS SDK's own Signature Version 4 signer, for the tests. */
final class Signing {
  static final String ACCESS_KEY = "AKIASTRATATEST000001";
  static final String SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  static final String USER = "alice";
  static final Instant TIME = Instant.parse("2026-03-01T12:00:00Z");

  private Signing() {}

  static ProxyCredentials credentials() {
    return ProxyCredentials.of(List.of(new Credential(ACCESS_KEY, SECRET, USER)));
  }

  static Clock clockAt(Instant instant) {
    return Clock.fixed(instant, ZoneOffset.UTC);
  }

  /** A verifier whose clock reads the signing time. */
  static SigV4Verifier verifier() {
    return new SigV4Verifier(credentials(), clockAt(TIME), false);
  }

  /** A request for an object, its key encoded as the S3 client encodes keys. */
  static SdkHttpFullRequest.Builder objectRequest(SdkHttpMethod method, String key) {
    return SdkHttpFullRequest.builder()
        .method(method)
        .protocol("http")
        .host("localhost")
        .port(9000)
        .encodedPath("/bucket/" + SdkHttpUtils.urlEncodeIgnoreSlashes(key));
  }

  /**
   * Signs at {@link #TIME} in the Authorization header with a signed payload hash, then applies
   * {@code extra} properties, which may override those.
   */
  static WireRequest sign(
      SdkHttpFullRequest request,
      byte[] body,
      String accessKey,
      String secret,
      Consumer<SignRequest.Builder<AwsCredentialsIdentity>> extra) {
    SignedRequest signed =
        AwsV4HttpSigner.create()
            .sign(
                r -> {
                  r.identity(AwsCredentialsIdentity.create(accessKey, secret))
                      .request(request)
                      .payload(body == null ? null : ContentStreamProvider.fromByteArray(body))
                      .putProperty(AwsV4HttpSigner.SERVICE_SIGNING_NAME, "s3")
                      .putProperty(AwsV4HttpSigner.REGION_NAME, "us-east-1")
                      .putProperty(AwsV4HttpSigner.DOUBLE_URL_ENCODE, false)
                      .putProperty(AwsV4HttpSigner.NORMALIZE_PATH, false)
                      .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, true)
                      .putProperty(HttpSigner.SIGNING_CLOCK, clockAt(TIME));
                  extra.accept(r);
                });
    return WireRequest.of(signed.request(), WireRequest.readAll(signed.payload().orElse(null)));
  }

  static WireRequest sign(
      SdkHttpFullRequest request,
      byte[] body,
      Consumer<SignRequest.Builder<AwsCredentialsIdentity>> extra) {
    return sign(request, body, ACCESS_KEY, SECRET, extra);
  }

  static WireRequest sign(SdkHttpFullRequest request, byte[] body) {
    return sign(request, body, r -> {});
  }
}
