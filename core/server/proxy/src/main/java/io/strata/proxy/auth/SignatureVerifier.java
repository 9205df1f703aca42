package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
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
}
