package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks AWS Signature Version 2 on S3 requests: {@code Authorization: AWS AccessKeyId:Signature},
 * or a presigned URL's {@code AWSAccessKeyId}, {@code Expires} (epoch seconds) and {@code
 * Signature}, the base64 HMAC-SHA1 of {@link SigV2StringToSign} with the secret of the access key.
 *
 * <p>Once {@link #verify} returns, the method, the resource (bucket, path and sub-resources), the
 * Content-MD5 and Content-Type headers and every {@code x-amz-*} header were signed with the
 * returned key's secret, within the allowed clock skew of the request's {@code x-amz-date} or
 * {@code Date} (or, presigned, before its {@code Expires}). Signature Version 2 does not cover the
 * body, nor the query parameters that are not sub-resources; a Content-MD5, when sent, is checked
 * against the body by the operation. Every refusal is an {@link S3Exception} with the code S3
 * gives.
 *
 * <p>Thread-safe.
 */
final class SigV2Verifier {
  private static final Logger LOG = LoggerFactory.getLogger(SigV2Verifier.class);

  static final String HEADER_PREFIX = "AWS ";
  static final String ACCESS_KEY_PARAM = "AWSAccessKeyId";
  static final String SIGNATURE_PARAM = "Signature";
  static final String EXPIRES_PARAM = "Expires";

  private final Function<String, Optional<Credential>> credentials;
  private final Clock clock;
  private final Duration maxSkew;

  /**
   * @param credentials finds the credential of an access key
   * @param maxSkew how far a header-signed request's time may be from the clock, either way
   */
  SigV2Verifier(Function<String, Optional<Credential>> credentials, Clock clock, Duration maxSkew) {
    this.credentials = Objects.requireNonNull(credentials, "credentials");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.maxSkew = Objects.requireNonNull(maxSkew, "maxSkew");
  }

  /** Whether the query is a Signature Version 2 presigned URL's. */
  static boolean presignedQuery(List<QueryParam> params) {
    return SignedParts.param(params, ACCESS_KEY_PARAM) != null
        || SignedParts.param(params, SIGNATURE_PARAM) != null;
  }

  /** Whether an Authorization header is of Signature Version 2. */
  static boolean header(String authorization) {
    if (authorization == null) {
      return false;
    }
    String auth = authorization.strip();
    return auth.equals(HEADER_PREFIX.strip()) || auth.startsWith(HEADER_PREFIX);
  }

  /**
   * Verifies a Signature Version 2 request, signed in its Authorization header or, when it has
   * none, in its query.
   *
   * @param hostBucket the bucket the Host header names (virtual-host style), else null
   * @throws S3Exception when the request is not authentic
   */
  AuthResult verify(
      String method,
      String rawPath,
      String rawQuery,
      List<QueryParam> params,
      HttpHeaders headers,
      String hostBucket) {
    String authorization = headers.get("Authorization");
    boolean presigned = authorization == null;
    String accessKey;
    String signature;
    String dateOrExpires;
    if (presigned) {
      accessKey = requiredParam(params, ACCESS_KEY_PARAM);
      signature = requiredParam(params, SIGNATURE_PARAM);
      dateOrExpires = requiredParam(params, EXPIRES_PARAM);
      checkExpiry(dateOrExpires);
    } else {
      String credential = authorization.strip().substring(HEADER_PREFIX.length() - 1).strip();
      int colon = credential.lastIndexOf(':');
      if (colon <= 0 || colon == credential.length() - 1) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "AWS authorization header is invalid: expected 'AWS <access-key>:<signature>', not '"
                + authorization
                + "'");
      }
      accessKey = credential.substring(0, colon);
      signature = credential.substring(colon + 1);
      dateOrExpires = checkTime(headers);
    }
    Credential found =
        credentials.apply(accessKey).orElseThrow(() -> SigV4Verifier.unknownKey(accessKey));
    byte[] secret = found.secretKey().getBytes(StandardCharsets.UTF_8);
    String contentMd5 = SigV2StringToSign.header(headers, params, "Content-MD5", presigned);
    String contentType = SigV2StringToSign.header(headers, params, "Content-Type", presigned);
    Map<String, String> amzHeaders = SigV2StringToSign.amzHeaders(headers, params, presigned);
    // As with Signature Version 4, a '+' in the query may mean a plus sign or a space: when a
    // signed sub-resource holds one, the signature tells which the client meant; otherwise the
    // question does not arise and a '+' is read as a space, as form encoders mean it.
    String asSpace = SigV2StringToSign.resource(hostBucket, rawPath, params, true);
    String asPlus =
        rawQuery != null && rawQuery.indexOf('+') >= 0
            ? SigV2StringToSign.resource(hostBucket, rawPath, params, false)
            : asSpace;
    boolean[] readings =
        asPlus.equals(asSpace) ? new boolean[] {true} : new boolean[] {false, true};
    String firstStringToSign = null;
    for (boolean plusIsSpace : readings) {
      String stringToSign =
          SigV2StringToSign.of(
              method,
              contentMd5,
              contentType,
              dateOrExpires,
              amzHeaders,
              plusIsSpace ? asSpace : asPlus);
      String expected = Base64.getEncoder().encodeToString(Digests.hmacSha1(secret, stringToSign));
      if (Digests.base64SignaturesEqual(expected, signature)) {
        return SigV4Verifier.withoutPayloadSignature(
            found.user(), found.accessKey(), headers, plusIsSpace, presigned);
      }
      if (firstStringToSign == null) {
        firstStringToSign = stringToSign;
      }
    }
    LOG.debug(
        "Signature Version 2 mismatch for access key {}: string to sign\n{}",
        accessKey,
        firstStringToSign);
    throw new S3Exception(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH.defaultMessage(),
        new SignatureMismatchDetails(accessKey, null, firstStringToSign, signature));
  }

  /**
   * Verifies a browser POST form signed with Signature Version 2: {@code signature} must be the
   * base64 HMAC-SHA1 of the form's {@code policy} field as sent, with the secret of {@code
   * AWSAccessKeyId}.
   *
   * @throws S3Exception InvalidAccessKeyId for an unknown key, SignatureDoesNotMatch for a wrong
   *     signature
   */
  AuthResult verifyPostPolicy(String accessKey, String policy, String signature) {
    Credential found =
        credentials.apply(accessKey).orElseThrow(() -> SigV4Verifier.unknownKey(accessKey));
    byte[] secret = found.secretKey().getBytes(StandardCharsets.UTF_8);
    String expected = Base64.getEncoder().encodeToString(Digests.hmacSha1(secret, policy));
    if (!Digests.base64SignaturesEqual(expected, signature)) {
      throw new S3Exception(
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH.defaultMessage()
              + " For a POST form, signature is the base64 HMAC-SHA1 of the policy field as sent"
              + " (its base64), with the access key's secret.",
          new SignatureMismatchDetails(accessKey, null, policy, signature));
    }
    return AuthResult.signedForm(found.user(), found.accessKey());
  }

  /** Checks a header-signed request's time; returns the Date field of its string to sign. */
  private String checkTime(HttpHeaders headers) {
    String amzDate = headers.get("x-amz-date");
    String date = headers.get("Date");
    String signedTime = amzDate != null ? amzDate : date;
    Instant time = signedTime == null ? null : SignedParts.parseHttpDate(signedTime.strip());
    if (time == null) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "AWS authentication requires a valid Date or x-amz-date header: send Date (or"
              + " x-amz-date) as an RFC 1123 date such as 'Tue, 27 Mar 2007 19:36:42 +0000'");
    }
    Instant now = clock.instant();
    if (Duration.between(time, now).abs().compareTo(maxSkew) > 0) {
      throw SigV4Verifier.tooSkewed(time, now, maxSkew);
    }
    // With x-amz-date the Date field is empty: the time is signed among the x-amz headers.
    return amzDate != null ? "" : date.strip();
  }

  private void checkExpiry(String expiresText) {
    long expires;
    try {
      expires = Long.parseLong(expiresText);
    } catch (NumberFormatException e) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Invalid date (should be seconds since epoch): Expires is '"
              + expiresText
              + "'; presign the URL again");
    }
    Instant now = clock.instant();
    if (now.getEpochSecond() > expires) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Request has expired: the URL was valid until "
              + Instant.ofEpochSecond(expires)
              + " (Expires="
              + expires
              + ") and it is now "
              + now
              + "; presign a new URL");
    }
  }

  private static String requiredParam(List<QueryParam> params, String name) {
    String value = SignedParts.param(params, name);
    if (value == null || value.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Query-string authentication requires the Signature, Expires and AWSAccessKeyId"
              + " parameters; "
              + name
              + " is missing");
    }
    return value;
  }
}
