package io.strata.proxy.s3;

/**
 * A request the proxy refuses or cannot serve, answered with an S3 error document of
 * {@link #code()}. The message says what was wrong with the request and, where the client can
 * do something about it, what.
 */
public final class S3Exception extends RuntimeException {
  private final S3ErrorCode code;

  public S3Exception(S3ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public S3Exception(S3ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  /** With the message S3 documents for the code. */
  public S3Exception(S3ErrorCode code) {
    this(code, code.defaultMessage());
  }

  public S3ErrorCode code() {
    return code;
  }
}
