package io.strata.proxy.auth;

/**
 * What checking the chunk and trailer signatures of one streaming upload needs: the signing key the
 * request's own signature was made with, its credential scope and timestamp, and that signature,
 * which seeds the chain (each chunk's signature covers the one before it, so chunks cannot be
 * dropped, repeated or reordered without detection).
 *
 * <p>Immutable and safe to share; the chain's position is kept by the reader that walks it. The
 * signing key is derived for one day, region and service and never leaves this object.
 */
public final class ChunkSigner {
  private static final String CHUNK_ALGORITHM = "AWS4-HMAC-SHA256-PAYLOAD";
  private static final String TRAILER_ALGORITHM = "AWS4-HMAC-SHA256-TRAILER";

  private final byte[] signingKey;
  private final String timestamp;
  private final String scope;
  private final String seedSignature;

  ChunkSigner(byte[] signingKey, String timestamp, String scope, String seedSignature) {
    this.signingKey = signingKey.clone();
    this.timestamp = timestamp;
    this.scope = scope;
    this.seedSignature = seedSignature;
  }

  /** The request's signature, which the first chunk's signature chains to. */
  public String seedSignature() {
    return seedSignature;
  }

  /** The request's time as signed, {@code yyyyMMdd'T'HHmmss'Z'}. */
  public String timestamp() {
    return timestamp;
  }

  /** {@code yyyyMMdd/region/s3/aws4_request}, as the client sent it. */
  public String scope() {
    return scope;
  }

  /**
   * The signature a chunk must carry.
   *
   * @param previousSignature the previous chunk's signature, or {@link #seedSignature()}
   * @param chunkSha256 the SHA-256 of the chunk's data
   */
  public String chunkSignature(String previousSignature, byte[] chunkSha256) {
    String stringToSign =
        CHUNK_ALGORITHM
            + '\n'
            + timestamp
            + '\n'
            + scope
            + '\n'
            + previousSignature
            + '\n'
            + Digests.EMPTY_SHA256_HEX
            + '\n'
            + Digests.hex(chunkSha256);
    return Digests.hex(Digests.hmacSha256(signingKey, stringToSign));
  }

  /**
   * The signature the trailers must carry in {@code x-amz-trailer-signature}.
   *
   * @param previousSignature the signature of the last (empty) chunk
   * @param canonicalTrailersSha256 the SHA-256 of the trailers as {@code name:value\n} lines, names
   *     in lower case and sorted, values trimmed
   */
  public String trailerSignature(String previousSignature, byte[] canonicalTrailersSha256) {
    String stringToSign =
        TRAILER_ALGORITHM
            + '\n'
            + timestamp
            + '\n'
            + scope
            + '\n'
            + previousSignature
            + '\n'
            + Digests.hex(canonicalTrailersSha256);
    return Digests.hex(Digests.hmacSha256(signingKey, stringToSign));
  }

  @Override
  public String toString() {
    return "ChunkSigner[scope=" + scope + ", timestamp=" + timestamp + "]";
  }
}
