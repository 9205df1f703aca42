package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Tells who an S3 request acts as, whichever way it is signed: it hands Signature Version 4 (and
 * unsigned requests) to {@link SigV4Verifier}, and Signature Version 2 to its own verifier, or
 * refuses it with InvalidRequest when Signature Version 2 is turned off. Both take the same access
 * keys, map them to the same users and allow the same clock skew. A request that carries two
 * signatures (a header and a presigned query, or both versions' query parameters) is refused with
 * InvalidArgument, as S3 refuses it.
 *
 * <p>Thread-safe.
 */
public final class SignatureVerifier {
  private final SigV4Verifier sigV4;
  private final SigV2Verifier sigV2;

  /**
   * @param credentials finds the credential of an access key
   * @param maxSkew how far a header-signed request's time may be from the clock, either way
   * @param sigV2Enabled whether Signature Version 2 is accepted
   */
  public SignatureVerifier(
      Function<String, Optional<Credential>> credentials,
      Clock clock,
      boolean anonymousAllowed,
      Duration maxSkew,
      boolean sigV2Enabled) {
    this.sigV4 = new SigV4Verifier(credentials, clock, anonymousAllowed, maxSkew);
    this.sigV2 = sigV2Enabled ? new SigV2Verifier(credentials, clock, maxSkew) : null;
  }

  /**
   * Verifies a request's signature.
   *
   * @param method the HTTP method as received
   * @param rawPath the path as received, still percent-encoded, without the query
   * @param rawQuery the query as received, without {@code ?}; empty or null when none
   * @param headers the request's headers as received
   * @param hostBucket the bucket the Host header names (virtual-host style), else null: Signature
   *     Version 2 signs it as the first segment of the resource
   * @throws S3Exception when the request is not authentic, or anonymous where that is refused
   */
  public AuthResult verify(
      String method, String rawPath, String rawQuery, HttpHeaders headers, String hostBucket) {
    List<QueryParam> params = CanonicalRequest.parseQuery(rawQuery);
    String authorization = headers.get("Authorization");
    boolean v2Query = SigV2Verifier.presignedQuery(params);
    boolean v4Query =
        SignedParts.param(params, "X-Amz-Algorithm") != null
            || SignedParts.param(params, "X-Amz-Credential") != null
            || SignedParts.param(params, SignedParts.SIGNATURE_PARAM) != null;
    if ((authorization != null && (v2Query || v4Query)) || (v2Query && v4Query)) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "Only one auth mechanism allowed; send the Authorization header, the X-Amz-* query"
              + " parameters (Signature Version 4) or AWSAccessKeyId, Signature and Expires"
              + " (Signature Version 2), not two of them");
    }
    if (!SigV2Verifier.header(authorization) && !v2Query) {
      return sigV4.verify(method, rawPath, rawQuery, params, headers);
    }
    if (sigV2 == null) {
      throw SignedParts.unsupportedV2();
    }
    return sigV2.verify(method, rawPath, rawQuery, params, headers, hostBucket);
  }

  /**
   * Verifies the signature of a browser POST form (S3's POST Object), from its fields: Signature
   * Version 4's {@code x-amz-algorithm}, {@code x-amz-credential}, {@code x-amz-date} and {@code
   * x-amz-signature}, or Signature Version 2's {@code AWSAccessKeyId} and {@code signature}, either
   * signing the {@code policy} field. A form without any of them is not signed: the caller acts for
   * it as for any unsigned request.
   *
   * @param fields the form's fields before its file, names in lower case
   * @return who the form acts as; null when it carries neither a policy nor a signature
   * @throws S3Exception InvalidArgument naming a missing or malformed field, InvalidAccessKeyId,
   *     SignatureDoesNotMatch, or InvalidRequest for Signature Version 2 when it is turned off
   */
  public AuthResult verifyPostForm(Map<String, String> fields) {
    String policy = fields.get("policy");
    boolean v4 =
        fields.containsKey("x-amz-signature")
            || fields.containsKey("x-amz-credential")
            || fields.containsKey("x-amz-algorithm");
    boolean v2 = fields.containsKey("signature") || fields.containsKey("awsaccesskeyid");
    if (v4 && v2) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "Only one auth mechanism allowed; the form has both x-amz-signature (Signature Version"
              + " 4) and signature fields (Signature Version 2)");
    }
    if (!v4 && !v2) {
      if (policy == null) {
        return null;
      }
      // A policy means a signed form: say what a Signature Version 4 one needs.
      v4 = true;
    }
    if (v4) {
      return sigV4.verifyPostPolicy(
          requiredField(fields, "x-amz-algorithm"),
          requiredField(fields, "x-amz-credential"),
          requiredField(fields, "x-amz-date"),
          requiredField(fields, "policy"),
          requiredField(fields, "x-amz-signature"));
    }
    if (sigV2 == null) {
      throw SignedParts.unsupportedV2();
    }
    return sigV2.verifyPostPolicy(
        requiredField(fields, "awsaccesskeyid"),
        requiredField(fields, "policy"),
        requiredField(fields, "signature"));
  }

  /** A field a signed form must have, as S3 asks for it. */
  private static String requiredField(Map<String, String> fields, String name) {
    String v = fields.get(name);
    if (v == null) {
      String spelt = name.equals("awsaccesskeyid") ? "AWSAccessKeyId" : name;
      throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "Bucket POST must contain a field named '"
                  + spelt
                  + "'.  If it is specified, please check the order of the fields.")
          .withDetail("ArgumentName", spelt)
          .withDetail("ArgumentValue", "");
    }
    return v;
  }
}
