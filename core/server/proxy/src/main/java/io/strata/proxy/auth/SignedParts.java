package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.auth.CanonicalRequest.QueryParam;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What a request says about its signature, read from the {@code Authorization} header or from a
 * presigned URL's query: checked for shape here (each refusal with the code S3 gives), for truth
 * and time by {@link SigV4Verifier}.
 *
 * @param scope {@code yyyyMMdd/region/s3/aws4_request} as the client sent it
 * @param timestamp the request time as signed, {@code yyyyMMdd'T'HHmmss'Z'}
 * @param payloadHash the payload hash the canonical request ends with
 * @param expiresSeconds a presigned URL's validity, else 0
 */
record SignedParts(
    String accessKey,
    String date,
    String region,
    String scope,
    List<String> signedHeaders,
    String signature,
    String timestamp,
    Instant time,
    String payloadHash,
    boolean presigned,
    long expiresSeconds) {
  static final String ALGORITHM = "AWS4-HMAC-SHA256";
  static final String SIGNATURE_PARAM = "X-Amz-Signature";
  static final String CONTENT_SHA256 = "x-amz-content-sha256";
  static final String SERVICE = "s3";
  static final String TERMINATOR = "aws4_request";
  private static final DateTimeFormatter AMZ_DATE =
      DateTimeFormatter.ofPattern("uuuuMMdd'T'HHmmss'Z'", Locale.ROOT)
          .withResolverStyle(ResolverStyle.STRICT);

  SignedParts {
    signedHeaders = List.copyOf(signedHeaders);
  }

  boolean signs(String header) {
    return containsIgnoreCase(signedHeaders, header);
  }

  /**
   * Reads the {@code Authorization} header and the time and payload hash headers that go with it.
   */
  static SignedParts fromHeader(String authorization, HttpHeaders headers) {
    String auth = authorization.strip();
    int space = indexOfWhitespace(auth);
    String algorithm = space < 0 ? auth : auth.substring(0, space);
    if (algorithm.equals("AWS")) {
      throw unsupportedV2();
    }
    if (!algorithm.equals(ALGORITHM)) {
      throw new S3Exception(
          S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
          "The authorization"
              + " header is malformed: algorithm '"
              + algorithm
              + "' is not supported; sign with "
              + ALGORITHM
              + " (Signature Version 4)");
    }
    if (space < 0) {
      throw headerMalformed("it has nothing after the algorithm");
    }
    String credential = null;
    String signedHeaders = null;
    String signature = null;
    // Clients separate the parts with ", " or "," and some add spaces; no part's value can
    // hold a comma or a space, so either separates.
    for (String part : auth.substring(space + 1).split("[,\\s]+")) {
      if (part.isEmpty()) {
        continue;
      }
      int eq = part.indexOf('=');
      String name = eq < 0 ? part : part.substring(0, eq);
      String value = eq < 0 ? "" : part.substring(eq + 1);
      if (name.equalsIgnoreCase("Credential")) {
        credential = once(credential, value, name);
      } else if (name.equalsIgnoreCase("SignedHeaders")) {
        signedHeaders = once(signedHeaders, value, name);
      } else if (name.equalsIgnoreCase("Signature")) {
        signature = once(signature, value, name);
      } else {
        throw headerMalformed("unexpected part '" + part + "'");
      }
    }
    if (credential == null || signedHeaders == null || signature == null) {
      throw headerMalformed("it must have Credential=, SignedHeaders= and Signature= parts");
    }
    requireSignatureShape(signature, S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED, "the Signature");
    String[] scope =
        scope(
            credential,
            S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
            "The authorization header is malformed");
    List<String> signedList =
        signedHeaders(
            signedHeaders,
            S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
            "The authorization header is malformed");

    String amzDate = headers.get("x-amz-date");
    Instant time;
    String timestamp;
    if (amzDate != null) {
      time = parseAmzDate(amzDate.strip());
      timestamp = amzDate.strip();
    } else {
      String date = headers.get("Date");
      time = date == null ? null : parseHttpDate(date.strip());
      timestamp = time == null ? null : AMZ_DATE.format(time.atOffset(ZoneOffset.UTC));
    }
    if (time == null) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "AWS authentication requires a valid"
              + " Date or x-amz-date header: send x-amz-date as yyyyMMdd'T'HHmmss'Z' (UTC)");
    }
    requireScopeDate(
        scope,
        timestamp,
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        "The authorization header is malformed");
    String contentSha256 = headers.get(CONTENT_SHA256);
    if (contentSha256 == null) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Missing required header for this"
              + " request: x-amz-content-sha256 (send the hex SHA-256 of the body, or"
              + " UNSIGNED-PAYLOAD, and sign it)");
    }
    if (!containsIgnoreCase(signedList, CONTENT_SHA256)) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Header 'x-amz-content-sha256' must be included in the signature (SignedHeaders)");
    }
    return new SignedParts(
        scope[0],
        scope[1],
        scope[2],
        scopeString(scope),
        signedList,
        signature,
        timestamp,
        time,
        contentSha256.strip(),
        false,
        0);
  }

  /** Reads the X-Amz-* parameters of a presigned URL. */
  static SignedParts fromQuery(List<QueryParam> params) {
    String[] required = {
      "X-Amz-Algorithm",
      "X-Amz-Credential",
      SIGNATURE_PARAM,
      "X-Amz-Date",
      "X-Amz-SignedHeaders",
      "X-Amz-Expires"
    };
    for (String name : required) {
      if (param(params, name) == null) {
        throw new S3Exception(
            S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
            "Query-string"
                + " authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential,"
                + " X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters;"
                + " "
                + name
                + " is missing");
      }
    }
    String algorithm = param(params, "X-Amz-Algorithm");
    if (!algorithm.equals(ALGORITHM)) {
      throw queryError(
          "X-Amz-Algorithm only supports \"" + ALGORITHM + "\", not \"" + algorithm + "\"");
    }
    String signature = param(params, SIGNATURE_PARAM);
    requireSignatureShape(
        signature, S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR, "X-Amz-Signature");
    String[] scope =
        scope(
            param(params, "X-Amz-Credential"),
            S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
            "Error parsing the X-Amz-Credential" + " parameter");
    List<String> signedList =
        signedHeaders(
            param(params, "X-Amz-SignedHeaders"),
            S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
            "Error parsing X-Amz-SignedHeaders");
    String timestamp = param(params, "X-Amz-Date");
    Instant time = parseAmzDate(timestamp);
    if (time == null) {
      throw queryError(
          "X-Amz-Date must be in the ISO8601 long format yyyyMMdd'T'HHmmss'Z',"
              + " not '"
              + timestamp
              + "'");
    }
    requireScopeDate(
        scope,
        timestamp,
        S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR,
        "Error parsing the X-Amz-Credential parameter");
    String expiresText = param(params, "X-Amz-Expires");
    long expires;
    try {
      expires = Long.parseLong(expiresText);
    } catch (NumberFormatException e) {
      throw queryError("X-Amz-Expires should be a number of seconds, not '" + expiresText + "'");
    }
    if (expires < 1 || expires > SigV4Verifier.MAX_EXPIRES_SECONDS) {
      throw queryError(
          "X-Amz-Expires must be between 1 and "
              + SigV4Verifier.MAX_EXPIRES_SECONDS
              + " seconds (a week); it is "
              + expires);
    }
    String contentSha256 = param(params, "X-Amz-Content-Sha256");
    return new SignedParts(
        scope[0],
        scope[1],
        scope[2],
        scopeString(scope),
        signedList,
        signature,
        timestamp,
        time,
        contentSha256 == null ? PayloadMode.UNSIGNED_PAYLOAD : contentSha256,
        true,
        expires);
  }

  /**
   * Reads the signature fields of a browser POST form (S3's POST Object): {@code x-amz-algorithm},
   * {@code x-amz-credential}, {@code x-amz-date} and {@code x-amz-signature}, which signs the
   * form's base64 policy rather than a canonical request. Each refusal is InvalidArgument naming
   * the field, as S3 answers.
   */
  static SignedParts fromPostForm(
      String algorithm, String credential, String amzDate, String signature) {
    if (!ALGORITHM.equals(algorithm)) {
      throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "x-amz-algorithm only supports \"" + ALGORITHM + "\", not \"" + algorithm + "\"")
          .withDetail("ArgumentName", "x-amz-algorithm")
          .withDetail("ArgumentValue", algorithm);
    }
    String[] scope;
    try {
      scope =
          scope(
              credential, S3ErrorCode.INVALID_ARGUMENT, "Error parsing the x-amz-credential field");
    } catch (S3Exception e) {
      throw e.withDetail("ArgumentName", "x-amz-credential")
          .withDetail("ArgumentValue", credential);
    }
    Instant time = parseAmzDate(amzDate);
    if (time == null) {
      throw new S3Exception(
              S3ErrorCode.INVALID_ARGUMENT,
              "x-amz-date must be in the ISO8601 long format yyyyMMdd'T'HHmmss'Z', not '"
                  + amzDate
                  + "'")
          .withDetail("ArgumentName", "x-amz-date")
          .withDetail("ArgumentValue", amzDate);
    }
    return new SignedParts(
        scope[0],
        scope[1],
        scope[2],
        scopeString(scope),
        List.of(),
        signature,
        amzDate,
        time,
        PayloadMode.UNSIGNED_PAYLOAD,
        false,
        0);
  }

  // ---- Helpers ----

  /** Splits {@code AK/yyyyMMdd/region/s3/aws4_request} into its five parts. */
  private static String[] scope(String credential, S3ErrorCode code, String prefix) {
    // The access key comes first and the scope has four parts after it, so split from the end.
    String[] parts = credential.split("/", -1);
    if (parts.length < 5) {
      throw new S3Exception(
          code,
          prefix
              + ": the credential '"
              + credential
              + "' must be"
              + " <access-key>/<yyyyMMdd>/<region>/s3/aws4_request");
    }
    int n = parts.length;
    String accessKey = String.join("/", Arrays.copyOf(parts, n - 4));
    String date = parts[n - 4];
    String region = parts[n - 3];
    String service = parts[n - 2];
    String terminator = parts[n - 1];
    if (accessKey.isEmpty()
        || region.isEmpty()
        || date.length() != 8
        || !date.chars().allMatch(Character::isDigit)) {
      throw new S3Exception(
          code,
          prefix
              + ": the credential '"
              + credential
              + "' must be"
              + " <access-key>/<yyyyMMdd>/<region>/s3/aws4_request");
    }
    if (!service.equals(SERVICE)) {
      throw new S3Exception(
          code,
          prefix
              + ": incorrect service \""
              + service
              + "\" in the"
              + " credential scope; this endpoint belongs to \"s3\"");
    }
    if (!terminator.equals(TERMINATOR)) {
      throw new S3Exception(
          code,
          prefix
              + ": the credential scope must end with \""
              + TERMINATOR
              + "\", not \""
              + terminator
              + "\"");
    }
    return new String[] {accessKey, date, region, service, terminator};
  }

  private static String scopeString(String[] scope) {
    return scope[1] + '/' + scope[2] + '/' + scope[3] + '/' + scope[4];
  }

  private static void requireScopeDate(
      String[] scope, String timestamp, S3ErrorCode code, String prefix) {
    if (!timestamp.startsWith(scope[1])) {
      throw new S3Exception(
          code,
          prefix
              + ": invalid credential date "
              + scope[1]
              + "; it is"
              + " not the date of the request time "
              + timestamp);
    }
  }

  private static List<String> signedHeaders(String value, S3ErrorCode code, String prefix) {
    List<String> names = new ArrayList<>();
    for (String name : value.split(";")) {
      if (!name.isEmpty()) {
        names.add(name);
      }
    }
    if (names.isEmpty()) {
      throw new S3Exception(
          code, prefix + ": the list of signed headers is empty; it must" + " name at least host");
    }
    return names;
  }

  private static void requireSignatureShape(String signature, S3ErrorCode code, String what) {
    if (!Digests.isHex(signature, 64)) {
      throw new S3Exception(
          code,
          "Malformed request authorization: "
              + what
              + " must be 64 hex"
              + " digits, not '"
              + signature
              + "'");
    }
  }

  private static Instant parseAmzDate(String text) {
    try {
      return LocalDateTime.parse(text, AMZ_DATE).toInstant(ZoneOffset.UTC);
    } catch (DateTimeException e) {
      return null;
    }
  }

  /** An RFC 1123 date, or the forms some clients put in Date instead; null when none fits. */
  static Instant parseHttpDate(String text) {
    try {
      return ZonedDateTime.parse(text, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
    } catch (DateTimeException e) {
      // Some clients put the x-amz-date form, or ISO-8601, in Date.
    }
    Instant amz = parseAmzDate(text);
    if (amz != null) {
      return amz;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeException e) {
      return null;
    }
  }

  /** The decoded value of the first query parameter of that exact name, or null. */
  static String param(List<QueryParam> params, String name) {
    for (QueryParam p : params) {
      if (p.rawName().equals(name)) {
        return new String(
            CanonicalRequest.decode(p.rawValue(), false, "query"), StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  private static String once(String previous, String value, String name) {
    if (previous != null) {
      throw headerMalformed("it has " + name + "= twice");
    }
    return value;
  }

  static boolean containsIgnoreCase(List<String> names, String name) {
    for (String n : names) {
      if (n.equalsIgnoreCase(name)) {
        return true;
      }
    }
    return false;
  }

  private static int indexOfWhitespace(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isWhitespace(s.charAt(i))) {
        return i;
      }
    }
    return -1;
  }

  private static S3Exception headerMalformed(String why) {
    return new S3Exception(
        S3ErrorCode.AUTHORIZATION_HEADER_MALFORMED,
        "The authorization"
            + " header is malformed: "
            + why
            + "; expected 'AWS4-HMAC-SHA256 Credential=<access-key>/"
            + "<yyyyMMdd>/<region>/s3/aws4_request, SignedHeaders=<a;b;c>, Signature=<64 hex>'");
  }

  private static S3Exception queryError(String message) {
    return new S3Exception(S3ErrorCode.AUTHORIZATION_QUERY_PARAMETERS_ERROR, message);
  }

  static S3Exception unsupportedV2() {
    return new S3Exception(
        S3ErrorCode.INVALID_REQUEST,
        "The authorization mechanism you have provided is not supported: Signature Version 2"
            + " (AWS AccessKeyId:Signature, or AWSAccessKeyId/Signature/Expires in the query) is"
            + " turned off on this proxy (strata.proxy.auth.sigv2.enabled=false); sign with"
            + " AWS4-HMAC-SHA256, Signature Version 4 (in boto3, signature_version='s3v4')");
  }
}
