package io.strata.proxy.auth;

/**
 * How a request's body is protected, as its {@code x-amz-content-sha256} says. The streaming modes
 * send the body in the aws-chunked encoding, which {@link AwsChunkedInputStream} decodes and
 * checks.
 */
public enum PayloadMode {
  /** {@code UNSIGNED-PAYLOAD}, or no payload hash at all on an anonymous request. */
  UNSIGNED(null),
  /**
   * A hex SHA-256 of the body was signed: the caller hashes the body it reads and refuses the
   * request with {@code XAmzContentSHA256Mismatch} when it differs from {@link
   * AuthResult#expectedPayloadSha256()}.
   */
  SIGNED_SHA256(null),
  /** {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD}: every chunk carries a chained signature. */
  STREAMING_SIGNED("STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
  /** {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER}: signed chunks, then signed trailers. */
  STREAMING_SIGNED_TRAILER("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"),
  /** {@code STREAMING-UNSIGNED-PAYLOAD-TRAILER}: plain chunks, then unsigned trailers. */
  STREAMING_UNSIGNED_TRAILER("STREAMING-UNSIGNED-PAYLOAD-TRAILER");

  /** The {@code x-amz-content-sha256} value of {@link #UNSIGNED}. */
  public static final String UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD";

  private final String headerValue;

  PayloadMode(String headerValue) {
    this.headerValue = headerValue;
  }

  /** The body is in the aws-chunked encoding. */
  public boolean streaming() {
    return headerValue != null;
  }

  /** Each chunk carries a signature that chains to the request's. */
  public boolean chunksSigned() {
    return this == STREAMING_SIGNED || this == STREAMING_SIGNED_TRAILER;
  }

  /** Trailing headers follow the last chunk. */
  public boolean hasTrailers() {
    return this == STREAMING_SIGNED_TRAILER || this == STREAMING_UNSIGNED_TRAILER;
  }

  /** The streaming mode an {@code x-amz-content-sha256} value names, or null. */
  static PayloadMode streamingMode(String contentSha256) {
    for (PayloadMode m : values()) {
      if (m.headerValue != null && m.headerValue.equals(contentSha256)) {
        return m;
      }
    }
    return null;
  }
}
