package io.strata.proxy.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.netty.handler.codec.http.HttpHeaders;
import io.strata.common.auth.ProxyCredentials;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checks AWS Signature Version 4 on S3 requests, signed in the {@code Authorization} header or in
 * the query of a presigned URL, and tells who the request acts as.
 *
 * <p>What it guarantees once {@link #verify} returns: the method, path, query, every header the
 * client listed as signed, and every {@code x-amz-*} header present were signed with the secret of
 * the returned access key, within the allowed clock skew (or, for a presigned URL, within its
 * validity). The body is not covered yet: {@link AuthResult#payloadMode()} tells the caller how to
 * check it. Every refusal is an {@link S3Exception} with the code S3 gives.
 *
 * <p>The request line and headers are taken exactly as Netty's HTTP decoder delivers them: a proxy
 * in front that re-encodes the path, reorders the query, or changes a signed header breaks
 * signatures, as it does with S3. The region of the credential scope is accepted whatever it is,
 * since clients pick their own; the service must be {@code s3}.
 *
 * <p>A {@code +} in the path is read as a space, as S3 reads it, so the caller must decode object
 * keys the same way; a {@code +} in the query is read as the signature shows the client meant it,
 * which {@link AuthResult#queryPlusIsSpace()} reports.
 *
 * <p>Requests signed with Signature Version 2 are refused here: {@link SignatureVerifier} hands
 * them to their own verifier when that version is turned on.
 *
 * <p>Thread-safe. Derived signing keys are cached per secret, day and region.
 */
public final class SigV4Verifier {
  private static final Logger LOG = LoggerFactory.getLogger(SigV4Verifier.class);

  /** The clock skew S3 allows between a signed request's time and its own. */
  public static final Duration MAX_SKEW = Duration.ofMinutes(15);

  /** The longest validity of a presigned URL, a week, as S3 allows. */
  public static final long MAX_EXPIRES_SECONDS = 604_800;

  private static final String ALGORITHM = SignedParts.ALGORITHM;
  private static final String CONTENT_SHA256 = SignedParts.CONTENT_SHA256;
  private static final String SIGNATURE_PARAM = SignedParts.SIGNATURE_PARAM;
  private static final int SIGNING_KEY_CACHE_SIZE = 1024;

  private final Function<String, Optional<Credential>> credentials;
  private final Clock clock;
  private final boolean anonymousAllowed;
  private final Duration maxSkew;
  private final Cache<SigningKeyId, byte[]> signingKeys =
      Caffeine.newBuilder().maximumSize(SIGNING_KEY_CACHE_SIZE).build();

  /**
   * What a signing key is derived from, the key of its cache. It holds a secret key, so its text
   * form leaves the secret out: a log line that formats it never prints one.
   */
  record SigningKeyId(String secret, String date, String region) {
    @Override
    public String toString() {
      return "SigningKeyId[date=" + date + ", region=" + region + ", secret=(not shown)]";
    }
  }

  /** With S3's allowed skew of {@link #MAX_SKEW}. */
  public SigV4Verifier(ProxyCredentials credentials, Clock clock, boolean anonymousAllowed) {
    this(credentials::find, clock, anonymousAllowed, MAX_SKEW);
  }

  /**
   * @param credentials finds the credential of an access key
   * @param maxSkew how far a header-signed request's time may be from the clock, either way, and
   *     how far in the future a presigned URL may start
   */
  public SigV4Verifier(
      Function<String, Optional<Credential>> credentials,
      Clock clock,
      boolean anonymousAllowed,
      Duration maxSkew) {
    this.credentials = Objects.requireNonNull(credentials, "credentials");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.anonymousAllowed = anonymousAllowed;
    this.maxSkew = Objects.requireNonNull(maxSkew, "maxSkew");
  }

  /**
   * Verifies a request's signature.
   *
   * @param method the HTTP method as received
   * @param rawPath the path as received, still percent-encoded, without the query
   * @param rawQuery the query as received, without {@code ?}; empty or null when none
   * @param headers the request's headers as received
   * @throws S3Exception when the request is not authentic, or anonymous where that is refused
   */
  public AuthResult verify(String method, String rawPath, String rawQuery, HttpHeaders headers) {
    return verify(method, rawPath, rawQuery, CanonicalRequest.parseQuery(rawQuery), headers);
  }

  /** As {@link #verify(String, String, String, HttpHeaders)}, with the query already parsed. */
  AuthResult verify(
      String method,
      String rawPath,
      String rawQuery,
      List<QueryParam> params,
      HttpHeaders headers) {
    String authorization = headers.get("Authorization");
    boolean queryAuth =
        SignedParts.param(params, "X-Amz-Algorithm") != null
            || SignedParts.param(params, "X-Amz-Credential") != null
            || SignedParts.param(params, SIGNATURE_PARAM) != null;
    if (authorization != null && queryAuth) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "Only one auth mechanism allowed;"
              + " send either the Authorization header or the X-Amz-Algorithm query parameters,"
              + " not both");
    }
    SignedParts signed;
    if (authorization != null) {
      signed = SignedParts.fromHeader(authorization, headers);
    } else if (queryAuth) {
      signed = SignedParts.fromQuery(params);
    } else if (SignedParts.param(params, "AWSAccessKeyId") != null
        && SignedParts.param(params, "Signature") != null) {
      throw SignedParts.unsupportedV2();
    } else {
      return anonymous(headers);
    }
    checkTime(signed);
    requireAllAmzHeadersSigned(headers, signed);
    Credential credential =
        credentials.apply(signed.accessKey()).orElseThrow(() -> unknownKey(signed.accessKey()));
    byte[] signingKey = signingKey(credential.secretKey(), signed.date(), signed.region());
    boolean plusIsSpace =
        checkSignature(method, rawPath, rawQuery, params, headers, signed, signingKey);
    return result(credential, signed, signingKey, headers, plusIsSpace);
  }

  /**
   * Verifies a browser POST form signed with Signature Version 4: {@code x-amz-signature} must be
   * the hex HMAC-SHA256 of the form's {@code policy} field, exactly as sent (its base64), with the
   * signing key of the access key's secret and the credential's date and region. The policy's own
   * expiration, not the request's time, bounds its validity, so no clock skew applies.
   *
   * @return the access key's user, whose request carries no payload signature (the caller checks
   *     the file against the policy)
   * @throws S3Exception InvalidArgument for a malformed field, InvalidAccessKeyId for an unknown
   *     key, SignatureDoesNotMatch for a wrong signature
   */
  AuthResult verifyPostPolicy(
      String algorithm, String credential, String amzDate, String policy, String signature) {
    SignedParts signed = SignedParts.fromPostForm(algorithm, credential, amzDate, signature);
    Credential found =
        credentials.apply(signed.accessKey()).orElseThrow(() -> unknownKey(signed.accessKey()));
    byte[] signingKey = signingKey(found.secretKey(), signed.date(), signed.region());
    String expected = Digests.hex(Digests.hmacSha256(signingKey, policy));
    if (!Digests.signaturesEqual(expected, signature)) {
      LOG.debug(
          "POST policy signature mismatch for access key {}, scope {}",
          signed.accessKey(),
          signed.scope());
      throw new S3Exception(
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH.defaultMessage()
              + " For a POST form, x-amz-signature is the hex HMAC-SHA256 of the policy field as"
              + " sent (its base64), with the signing key of the credential's scope "
              + signed.scope()
              + ".",
          new SignatureMismatchDetails(signed.accessKey(), null, policy, signature));
    }
    return AuthResult.signedForm(found.user(), found.accessKey());
  }

  private AuthResult anonymous(HttpHeaders headers) {
    if (!anonymousAllowed) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: this proxy refuses"
              + " anonymous requests; sign requests with an access key from its credentials file");
    }
    return withoutPayloadSignature(null, null, headers, true, false);
  }

  /**
   * The result of a request whose signature, if any, does not cover its body (anonymous, or signed
   * with Signature Version 2): an {@code x-amz-content-sha256} hash is still checked, and chunk
   * signatures, which need Signature Version 4, are refused.
   */
  static AuthResult withoutPayloadSignature(
      String user,
      String accessKey,
      HttpHeaders headers,
      boolean queryPlusIsSpace,
      boolean presigned) {
    String contentSha256 = headers.get(CONTENT_SHA256);
    PayloadMode mode =
        contentSha256 == null
            ? PayloadMode.UNSIGNED
            : payloadMode(contentSha256, S3ErrorCode.INVALID_ARGUMENT);
    if (mode.chunksSigned()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "x-amz-content-sha256 is "
              + contentSha256
              + " but the request is not signed: chunk signatures need a signed request");
    }
    String expected =
        mode == PayloadMode.SIGNED_SHA256 ? contentSha256.toLowerCase(Locale.ROOT) : null;
    return new AuthResult(
        user,
        accessKey,
        mode,
        expected,
        null,
        declaredTrailers(headers),
        decodedContentLength(headers),
        queryPlusIsSpace,
        presigned);
  }

  static S3Exception unknownKey(String accessKey) {
    return new S3Exception(
        S3ErrorCode.INVALID_ACCESS_KEY_ID,
        "The access key '"
            + accessKey
            + "' is not known to this proxy: check the client's access key, or add the key to"
            + " the proxy's credentials file");
  }

  static S3Exception tooSkewed(Instant time, Instant now, Duration maxSkew) {
    return new S3Exception(
        S3ErrorCode.REQUEST_TIME_TOO_SKEWED,
        "The difference between the"
            + " request time ("
            + time
            + ") and the server's time ("
            + now
            + ") is too large:"
            + " at most "
            + maxSkew.toMinutes()
            + " minutes are allowed; correct the client's"
            + " clock");
  }

  private AuthResult result(
      Credential credential,
      SignedParts signed,
      byte[] signingKey,
      HttpHeaders headers,
      boolean plusIsSpace) {
    PayloadMode mode =
        payloadMode(
            signed.payloadHash(),
            signed.presigned()
                ? S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR
                : S3ErrorCode.INVALID_ARGUMENT);
    String expected =
        mode == PayloadMode.SIGNED_SHA256 ? signed.payloadHash().toLowerCase(Locale.ROOT) : null;
    ChunkSigner chunkSigner =
        mode.chunksSigned()
            ? new ChunkSigner(
                signingKey,
                signed.timestamp(),
                signed.scope(),
                signed.signature().toLowerCase(Locale.ROOT))
            : null;
    return new AuthResult(
        credential.user(),
        credential.accessKey(),
        mode,
        expected,
        chunkSigner,
        declaredTrailers(headers),
        decodedContentLength(headers),
        plusIsSpace,
        signed.presigned());
  }

  // ---- Time ----

  private void checkTime(SignedParts signed) {
    Instant now = clock.instant();
    Instant time = signed.time();
    if (!signed.presigned()) {
      if (Duration.between(time, now).abs().compareTo(maxSkew) > 0) {
        throw tooSkewed(time, now, maxSkew);
      }
      return;
    }
    Instant expiry = time.plusSeconds(signed.expiresSeconds());
    if (now.isAfter(expiry)) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Request has expired: the URL signed at "
              + time
              + " for "
              + signed.expiresSeconds()
              + " seconds was valid until "
              + expiry
              + " and it is now "
              + now
              + "; presign a new URL");
    }
    if (Duration.between(now, time).compareTo(maxSkew) > 0) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Request is not yet valid: the URL is"
              + " dated "
              + time
              + " and it is now "
              + now
              + " here; check the signer's clock");
    }
  }

  // ---- The signature ----

  /**
   * Recomputes the signature and compares it with the client's.
   *
   * @return whether the matching reading took a {@code +} of the query as a space
   */
  private boolean checkSignature(
      String method,
      String rawPath,
      String rawQuery,
      List<QueryParam> params,
      HttpHeaders headers,
      SignedParts signed,
      byte[] signingKey) {
    String canonicalUri = CanonicalRequest.uri(rawPath);
    String canonicalHeaders = CanonicalRequest.headers(signed.signedHeaders(), headers);
    String signedHeadersLine = String.join(";", signed.signedHeaders());
    String excluded = signed.presigned() ? SIGNATURE_PARAM : null;
    // RFC 3986 makes a '+' in a query a plus sign, and the AWS SDKs never send one unencoded;
    // form encoders (HTML forms, some signing libraries) send a space as '+' and sign it as
    // %20. S3 accepts both readings, so both are tried and the caller is told which matched.
    boolean hasPlus = rawQuery != null && rawQuery.indexOf('+') >= 0;
    boolean[] readings = hasPlus ? new boolean[] {false, true} : new boolean[] {true};
    String firstCanonical = null;
    String firstStringToSign = null;
    for (boolean plusIsSpace : readings) {
      String canonicalQuery = CanonicalRequest.query(params, plusIsSpace, excluded);
      byte[] canonical =
          CanonicalRequest.build(
              method,
              canonicalUri,
              canonicalQuery,
              canonicalHeaders,
              signedHeadersLine,
              signed.payloadHash());
      String stringToSign =
          ALGORITHM
              + '\n'
              + signed.timestamp()
              + '\n'
              + signed.scope()
              + '\n'
              + Digests.hex(Digests.sha256(canonical));
      String expected = Digests.hex(Digests.hmacSha256(signingKey, stringToSign));
      if (Digests.signaturesEqual(expected, signed.signature())) {
        return plusIsSpace;
      }
      if (firstCanonical == null) {
        firstCanonical = new String(canonical, StandardCharsets.UTF_8);
        firstStringToSign = stringToSign;
      }
    }
    LOG.debug(
        "Signature mismatch for access key {}: canonical request\n{}\nstring to sign\n{}",
        signed.accessKey(),
        firstCanonical,
        firstStringToSign);
    StringBuilder message =
        new StringBuilder(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH.defaultMessage());
    for (String name : signed.signedHeaders()) {
      if (!headers.contains(name)) {
        message.append(" The signed header '").append(name).append("' is not in the request.");
      }
    }
    throw new S3Exception(
        S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
        message.toString(),
        new SignatureMismatchDetails(
            signed.accessKey(), firstCanonical, firstStringToSign, signed.signature()));
  }

  private byte[] signingKey(String secret, String date, String region) {
    return signingKeys.get(
        new SigningKeyId(secret, date, region),
        id -> {
          byte[] key =
              Digests.hmacSha256(
                  ("AWS4" + id.secret()).getBytes(StandardCharsets.UTF_8), id.date());
          key = Digests.hmacSha256(key, id.region());
          key = Digests.hmacSha256(key, SignedParts.SERVICE);
          return Digests.hmacSha256(key, SignedParts.TERMINATOR);
        });
  }

  // ---- Helpers ----

  /**
   * An {@code x-amz-*} header that is not signed could be changed on the way without the signature
   * showing it, and S3 gives many of them meaning (copy sources, metadata, ACLs).
   */
  private static void requireAllAmzHeadersSigned(HttpHeaders headers, SignedParts signed) {
    TreeSet<String> unsigned = new TreeSet<>();
    for (String name : headers.names()) {
      String lower = name.toLowerCase(Locale.ROOT);
      if (lower.startsWith("x-amz-") && !signed.signs(lower)) {
        unsigned.add(lower);
      }
    }
    if (!signed.signs("host")) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: the host header must be"
              + " signed (listed in "
              + (signed.presigned() ? "X-Amz-SignedHeaders" : "SignedHeaders")
              + ")");
    }
    if (!unsigned.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "There were headers present in the"
              + " request which were not signed: "
              + String.join(", ", unsigned)
              + "; sign them or do not send them");
    }
  }

  private static PayloadMode payloadMode(String contentSha256, S3ErrorCode invalid) {
    PayloadMode streaming = PayloadMode.streamingMode(contentSha256);
    if (streaming != null) {
      return streaming;
    }
    if (contentSha256.equals(PayloadMode.UNSIGNED_PAYLOAD)) {
      return PayloadMode.UNSIGNED;
    }
    if (Digests.isHex(contentSha256, 64)) {
      return PayloadMode.SIGNED_SHA256;
    }
    throw new S3Exception(
        invalid,
        "x-amz-content-sha256 must be UNSIGNED-PAYLOAD,"
            + " STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER,"
            + " STREAMING-UNSIGNED-PAYLOAD-TRAILER or the hex SHA-256 of the body, not '"
            + contentSha256
            + "'");
  }

  private static List<String> declaredTrailers(HttpHeaders headers) {
    List<String> names = new ArrayList<>();
    for (String value : headers.getAll("x-amz-trailer")) {
      for (String name : value.split(",")) {
        String n = name.strip().toLowerCase(Locale.ROOT);
        if (!n.isEmpty()) {
          names.add(n);
        }
      }
    }
    return names;
  }

  private static long decodedContentLength(HttpHeaders headers) {
    String value = headers.get("x-amz-decoded-content-length");
    if (value == null) {
      return -1;
    }
    try {
      long n = Long.parseLong(value.strip());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Answered below.
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "x-amz-decoded-content-length must be"
            + " the length of the decoded body in bytes, not '"
            + value
            + "'");
  }
}
