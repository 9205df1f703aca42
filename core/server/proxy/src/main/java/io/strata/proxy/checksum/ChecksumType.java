package io.strata.proxy.checksum;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.Locale;

/**
 * How an object's checksum relates to its bytes, as S3 reports it in {@code x-amz-checksum-type}
 * and {@code <ChecksumType>}. A single PUT always has a {@link #FULL_OBJECT} checksum; a multipart
 * upload has one or the other, fixed when the upload is created (see {@link #forMultipartUpload}).
 */
public enum ChecksumType {
  /**
   * The checksum of the concatenated binary checksums of the parts, in part-number order, written
   * {@code base64-N} for N parts. It says nothing directly about the object's bytes.
   */
  COMPOSITE,
  /** The checksum of the object's bytes, whatever the parts were. */
  FULL_OBJECT;

  /** The request and response header that carries the type. */
  public static final String HEADER = "x-amz-checksum-type";

  /**
   * Parses a {@code x-amz-checksum-type} value, ignoring case.
   *
   * @throws S3Exception INVALID_ARGUMENT naming the value when it is neither type
   */
  public static ChecksumType fromValue(String value) {
    String v = value == null ? "" : value.trim().toUpperCase(Locale.ROOT);
    for (ChecksumType t : values()) {
      if (t.name().equals(v)) {
        return t;
      }
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "Value for "
            + HEADER
            + " header is "
            + "invalid: '"
            + value
            + "'. Use COMPOSITE or FULL_OBJECT.");
  }

  /**
   * The type a multipart upload's object checksum takes, as S3 decides it at CreateMultipartUpload:
   * CRC64NVME supports only full-object checksums, SHA-1 and SHA-256 only composite ones, and CRC32
   * and CRC32C either, composite unless the client asks for {@code FULL_OBJECT}.
   *
   * @param requested the {@code x-amz-checksum-type} the client sent, or null
   * @throws S3Exception INVALID_REQUEST when the algorithm does not support the requested type
   */
  public static ChecksumType forMultipartUpload(
      ChecksumAlgorithm algorithm, ChecksumType requested) {
    if (requested == null) {
      return algorithm == ChecksumAlgorithm.CRC64NVME ? FULL_OBJECT : COMPOSITE;
    }
    if (!algorithm.supports(requested)) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The "
              + requested
              + " checksum type "
              + "cannot be used with the "
              + algorithm
              + " checksum algorithm: "
              + (algorithm.supports(COMPOSITE) ? "use COMPOSITE" : "use FULL_OBJECT")
              + " or another algorithm.");
    }
    return requested;
  }
}
