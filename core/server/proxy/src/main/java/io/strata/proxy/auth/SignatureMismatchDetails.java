package io.strata.proxy.auth;

/**
 * What the proxy signed when a request's signature did not match, attached as the cause of the
 * {@code SignatureDoesNotMatch} {@link io.strata.proxy.s3.S3Exception}. S3 returns these in extra
 * fields of its error document ({@code CanonicalRequest}, {@code StringToSign}, {@code
 * SignatureProvided}, {@code AWSAccessKeyId}) so that a client's author can see which part differs;
 * the HTTP layer may do the same. They hold no secret: every part comes from the request itself.
 * Carries no stack trace, as it is data rather than a failure.
 */
public final class SignatureMismatchDetails extends Exception {
  private static final long serialVersionUID = 1L;

  private final String accessKey;
  private final String canonicalRequest;
  private final String stringToSign;
  private final String signatureProvided;

  SignatureMismatchDetails(
      String accessKey, String canonicalRequest, String stringToSign, String signatureProvided) {
    super("Signature mismatch details for access key " + accessKey, null, false, false);
    this.accessKey = accessKey;
    this.canonicalRequest = canonicalRequest;
    this.stringToSign = stringToSign;
    this.signatureProvided = signatureProvided;
  }

  /** The details attached to an exception, or null when it carries none. */
  public static SignatureMismatchDetails of(Throwable t) {
    return t != null && t.getCause() instanceof SignatureMismatchDetails d ? d : null;
  }

  public String accessKey() {
    return accessKey;
  }

  /**
   * The canonical request the proxy computed (the first one tried); null for Signature Version 2,
   * which signs its string to sign directly.
   */
  public String canonicalRequest() {
    return canonicalRequest;
  }

  public String stringToSign() {
    return stringToSign;
  }

  public String signatureProvided() {
    return signatureProvided;
  }
}
