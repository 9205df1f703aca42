package io.strata.proxy.s3;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A request the proxy refuses or cannot serve, answered with an S3 error document of {@link
 * #code()}. The message says what was wrong with the request and, where the client can do something
 * about it, what.
 */
public final class S3Exception extends RuntimeException {
  private final S3ErrorCode code;
  private final Map<String, String> headers = new LinkedHashMap<>();
  private final Map<String, String> details = new LinkedHashMap<>();

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

  /** Adds a header to the error answer (the ETag of a 304, the Content-Range of a 416). */
  public S3Exception withHeader(String name, String value) {
    headers.put(name, value);
    return this;
  }

  /**
   * Adds an element to the error document after its message, as some S3 errors carry one ({@code
   * ArgumentName}, {@code Condition}, {@code MaxSizeAllowed}, ...): a plain XML name.
   */
  public S3Exception withDetail(String name, String value) {
    details.put(name, value);
    return this;
  }

  /** The extra elements of the error document, in order. */
  public Map<String, String> details() {
    return details;
  }

  /** Headers the error answer carries besides the usual ones. */
  public Map<String, String> headers() {
    return headers;
  }
}
