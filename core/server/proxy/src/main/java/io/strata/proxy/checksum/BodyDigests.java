package io.strata.proxy.checksum;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Optional;

/**
 * The digests of one request or part body, computed in a single pass as its bytes stream through:
 * MD5 always (the ETag, and Content-MD5), SHA-256 when the caller must check a signed payload hash,
 * and at most one flexible checksum. The first call to a result method finishes the pass; feeding
 * more bytes after that is an error. Not thread-safe: one body, one thread at a time.
 *
 * <p>The verify methods throw the S3 errors a client expects: BadDigest when a value it sent does
 * not match the body, InvalidDigest when the value is not even well-formed.
 */
public final class BodyDigests {
  private static final HexFormat HEX = HexFormat.of();

  private final Hasher md5 = Hasher.messageDigest("MD5");
  private final Hasher sha256;
  private final ChecksumAlgorithm algorithm;
  private final Hasher checksum;
  private long length;

  private byte[] md5Value;
  private byte[] sha256Value;
  private byte[] checksumValue;

  private BodyDigests(boolean sha256, ChecksumAlgorithm algorithm) {
    this.sha256 = sha256 ? Hasher.messageDigest("SHA-256") : null;
    this.algorithm = algorithm;
    // A SHA256 checksum is the payload SHA-256 in base64: hash the body once for both.
    boolean shared = sha256 && algorithm == ChecksumAlgorithm.SHA256;
    this.checksum = algorithm == null || shared ? null : algorithm.newHasher();
  }

  /** MD5 only. */
  public static BodyDigests md5Only() {
    return new BodyDigests(false, null);
  }

  /**
   * MD5, plus SHA-256 when asked, plus the checksum of the given algorithm when not null. A SHA256
   * flexible checksum and the payload SHA-256 are the same digest, computed once.
   */
  public static BodyDigests of(boolean sha256, ChecksumAlgorithm checksumOrNull) {
    return new BodyDigests(sha256, checksumOrNull);
  }

  public void update(byte[] b, int off, int len) {
    checkOpen();
    md5.update(b, off, len);
    if (sha256 != null) {
      sha256.update(b, off, len);
    }
    if (checksum != null) {
      checksum.update(b, off, len);
    }
    length += len;
  }

  /** Consumes the buffer's remaining bytes, leaving its position at its limit. */
  public void update(ByteBuffer buffer) {
    checkOpen();
    int start = buffer.position();
    int len = buffer.remaining();
    md5.update(buffer);
    if (sha256 != null) {
      sha256.update(buffer.duplicate().position(start));
    }
    if (checksum != null) {
      checksum.update(buffer.duplicate().position(start));
    }
    length += len;
  }

  /** The number of bytes seen. */
  public long length() {
    return length;
  }

  /** The binary MD5 of the body. */
  public byte[] md5() {
    finish();
    return md5Value.clone();
  }

  /** The MD5 in lower-case hex: a single-part object's ETag, without its quotes. */
  public String md5Hex() {
    finish();
    return HEX.formatHex(md5Value);
  }

  /** The MD5 in base64, the form of a Content-MD5 header. */
  public String md5Base64() {
    finish();
    return Base64.getEncoder().encodeToString(md5Value);
  }

  /**
   * The SHA-256 in lower-case hex, the form of {@code x-amz-content-sha256}.
   *
   * @throws IllegalStateException when SHA-256 was not asked for
   */
  public String sha256Hex() {
    finish();
    if (sha256Value == null) {
      throw new IllegalStateException("SHA-256 was not asked for");
    }
    return HEX.formatHex(sha256Value);
  }

  /** The flexible checksum computed, if one was asked for. */
  public Optional<ChecksumAlgorithm> checksumAlgorithm() {
    return Optional.ofNullable(algorithm);
  }

  /**
   * The flexible checksum of the body.
   *
   * @throws IllegalStateException when none was asked for
   */
  public ChecksumValue checksum() {
    finish();
    if (checksumValue == null) {
      throw new IllegalStateException("No checksum was asked for");
    }
    return ChecksumValue.fullObject(algorithm, checksumValue);
  }

  /**
   * Checks a Content-MD5 header against the body.
   *
   * @throws S3Exception INVALID_DIGEST when the header is not base64 of 16 bytes, BAD_DIGEST when
   *     it is another MD5
   */
  public void verifyContentMd5(String contentMd5) {
    byte[] expected = decodeContentMd5(contentMd5);
    finish();
    if (!MessageDigest.isEqual(expected, md5Value)) {
      throw new S3Exception(
          S3ErrorCode.BAD_DIGEST, "The Content-MD5 you specified did not match what we received.");
    }
  }

  /**
   * Checks a flexible checksum the client sent (in a header or trailer) against the body.
   *
   * @throws S3Exception INVALID_DIGEST when the value is not base64 of the algorithm's length,
   *     BAD_DIGEST when it does not match
   * @throws IllegalStateException when this algorithm's checksum was not asked for
   */
  public void verifyChecksum(ChecksumAlgorithm expectedAlgorithm, String base64) {
    byte[] expected = expectedAlgorithm.decode(base64);
    finish();
    if (expectedAlgorithm != algorithm) {
      throw new IllegalStateException(
          expectedAlgorithm
              + " was not computed; this body has "
              + (algorithm == null ? "no checksum" : algorithm.toString()));
    }
    if (!MessageDigest.isEqual(expected, checksumValue)) {
      throw new S3Exception(
          S3ErrorCode.BAD_DIGEST,
          "The " + algorithm + " you specified did " + "not match the calculated checksum.");
    }
  }

  /**
   * Checks the {@code x-amz-content-sha256} a request was signed with against the body.
   *
   * @throws S3Exception XAMZ_CONTENT_SHA256_MISMATCH when it does not match
   * @throws IllegalStateException when SHA-256 was not asked for
   */
  public void verifyPayloadSha256(String expectedHex) {
    String actual = sha256Hex();
    if (expectedHex == null
        || !MessageDigest.isEqual(
            expectedHex.trim().toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII),
            actual.getBytes(StandardCharsets.US_ASCII))) {
      throw new S3Exception(
          S3ErrorCode.XAMZ_CONTENT_SHA256_MISMATCH,
          "The provided "
              + "'x-amz-content-sha256' header does not match what was computed: the body's "
              + "SHA-256 is "
              + actual
              + ".");
    }
  }

  /**
   * The binary MD5 of a Content-MD5 header, checked for form only; the HTTP layer can refuse a
   * malformed header before reading the body.
   *
   * @throws S3Exception INVALID_DIGEST when it is not base64 of 16 bytes
   */
  public static byte[] decodeContentMd5(String contentMd5) {
    byte[] value = null;
    if (contentMd5 != null) {
      try {
        value = Base64.getDecoder().decode(contentMd5.trim());
      } catch (IllegalArgumentException e) {
        value = null;
      }
    }
    if (value == null || value.length != 16) {
      throw new S3Exception(
          S3ErrorCode.INVALID_DIGEST,
          "The Content-MD5 you specified is not valid: it must be the base64 encoding of the "
              + "16-byte MD5 of the body.");
    }
    return value;
  }

  private void checkOpen() {
    if (md5Value != null) {
      throw new IllegalStateException("The digests are already finished");
    }
  }

  private void finish() {
    if (md5Value != null) {
      return;
    }
    md5Value = md5.finish();
    if (sha256 != null) {
      sha256Value = sha256.finish();
    }
    if (checksum != null) {
      checksumValue = checksum.finish();
    } else if (algorithm != null) {
      checksumValue = sha256Value;
    }
  }
}
