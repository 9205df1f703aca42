package io.strata.proxy.checksum;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.Base64;
import java.util.Locale;
import java.util.Optional;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The flexible checksums S3 accepts on uploads and reports on reads, with the header, XML element
 * and binary length of each. Values travel base64-encoded; a CRC's binary value is its bytes,
 * big-endian. Parsing is lenient about case and strict about everything else: an algorithm the
 * proxy does not know is refused rather than ignored, so a client never believes a checksum was
 * verified when it was not.
 */
public enum ChecksumAlgorithm {
  CRC32(4, true),
  CRC32C(4, true),
  CRC64NVME(8, true),
  SHA1(20, false),
  SHA256(32, false);

  /** Every checksum value header starts so; the rest is the algorithm, lower case. */
  public static final String HEADER_PREFIX = "x-amz-checksum-";

  /** The algorithm the AWS SDKs name when they send the checksum in a trailer or header. */
  public static final String SDK_ALGORITHM_HEADER = "x-amz-sdk-checksum-algorithm";

  /** The algorithm a CreateMultipartUpload or CopyObject asks for. */
  public static final String ALGORITHM_HEADER = "x-amz-checksum-algorithm";

  private final int length;
  private final boolean crc;
  private final String headerName;
  private final String xmlElement;

  ChecksumAlgorithm(int length, boolean crc) {
    this.length = length;
    this.crc = crc;
    this.headerName = HEADER_PREFIX + name().toLowerCase(Locale.ROOT);
    this.xmlElement = "Checksum" + name();
  }

  /** The header that carries a value of this algorithm, e.g. {@code x-amz-checksum-crc32}. */
  public String headerName() {
    return headerName;
  }

  /** The XML element that carries a value of this algorithm, e.g. {@code ChecksumCRC32}. */
  public String xmlElement() {
    return xmlElement;
  }

  /** The length of the binary value in bytes. */
  public int length() {
    return length;
  }

  /** Whether this is a CRC, whose values of consecutive byte ranges can be combined. */
  public boolean isCrc() {
    return crc;
  }

  /**
   * Whether a multipart object may carry a checksum of this type with this algorithm: composite for
   * every algorithm but CRC64NVME, full-object for the CRCs only.
   */
  public boolean supports(ChecksumType type) {
    return type == ChecksumType.FULL_OBJECT ? crc : this != CRC64NVME;
  }

  /** The base64 form of a binary value. */
  public String encode(byte[] value) {
    if (value.length != length) {
      throw new IllegalArgumentException(
          name() + " values are " + length + " bytes, not " + value.length);
    }
    return Base64.getEncoder().encodeToString(value);
  }

  /**
   * The binary value of a base64 checksum as a client sent it.
   *
   * @throws S3Exception INVALID_DIGEST when it is not base64 of {@link #length()} bytes
   */
  public byte[] decode(String base64) {
    byte[] value = null;
    if (base64 != null) {
      try {
        value = Base64.getDecoder().decode(base64.trim());
      } catch (IllegalArgumentException e) {
        value = null;
      }
    }
    if (value == null || value.length != length) {
      throw new S3Exception(
          S3ErrorCode.INVALID_DIGEST,
          "Value for "
              + headerName
              + " header is invalid: it must be the base64 encoding of "
              + length
              + " bytes.");
    }
    return value;
  }

  /** A fresh running checksum of this algorithm. */
  Hasher newHasher() {
    return switch (this) {
      // The JDK's CRC32 and CRC32C are hardware-accelerated intrinsics; they give the same
      // values as the AWS SDK's (which wraps the same classes for CRC32C).
      case CRC32 -> Hasher.crc(new CRC32(), length);
      case CRC32C -> Hasher.crc(new CRC32C(), length);
      case CRC64NVME -> Hasher.crc(new Crc64Nvme(), length);
      case SHA1 -> Hasher.messageDigest("SHA-1");
      case SHA256 -> Hasher.messageDigest("SHA-256");
    };
  }

  /**
   * Parses a {@code x-amz-sdk-checksum-algorithm} or {@code x-amz-checksum-algorithm} value,
   * ignoring case.
   *
   * @throws S3Exception INVALID_ARGUMENT naming the value when it is no algorithm here
   */
  public static ChecksumAlgorithm fromValue(String value) {
    String v = value == null ? "" : value.trim().toUpperCase(Locale.ROOT);
    for (ChecksumAlgorithm a : values()) {
      if (a.name().equals(v)) {
        return a;
      }
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "Checksum algorithm '"
            + value
            + "' is not supported: use CRC32, CRC32C, CRC64NVME, SHA1 or SHA256.");
  }

  /**
   * The algorithm whose value a header carries, or empty for a header that carries none (any header
   * outside {@code x-amz-checksum-*}, and {@code x-amz-checksum-type}, {@code -algorithm} and
   * {@code -mode}, which describe checksums rather than carry one). Also parses the header name a
   * {@code x-amz-trailer} announces.
   *
   * @throws S3Exception INVALID_ARGUMENT for a checksum header of an algorithm not supported
   */
  public static Optional<ChecksumAlgorithm> fromHeaderName(String headerName) {
    String name = headerName.trim().toLowerCase(Locale.ROOT);
    if (!name.startsWith(HEADER_PREFIX)) {
      return Optional.empty();
    }
    String algorithm = name.substring(HEADER_PREFIX.length());
    if (algorithm.equals("type") || algorithm.equals("algorithm") || algorithm.equals("mode")) {
      return Optional.empty();
    }
    for (ChecksumAlgorithm a : values()) {
      if (a.headerName.equals(name)) {
        return Optional.of(a);
      }
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "The "
            + headerName
            + " header names "
            + "a checksum algorithm that is not supported: use CRC32, CRC32C, CRC64NVME, SHA1 or "
            + "SHA256.");
  }

  /**
   * The algorithm of the one checksum value header among a request's headers, or empty when it has
   * none. A header repeated with the same name counts once.
   *
   * @throws S3Exception INVALID_REQUEST when two different checksum headers are present, as S3
   *     answers; INVALID_ARGUMENT for an unsupported one
   */
  public static Optional<ChecksumAlgorithm> fromHeaderNames(Iterable<String> headerNames) {
    ChecksumAlgorithm found = null;
    for (String header : headerNames) {
      Optional<ChecksumAlgorithm> a = fromHeaderName(header);
      if (a.isPresent()) {
        if (found != null && found != a.get()) {
          throw new S3Exception(
              S3ErrorCode.INVALID_REQUEST,
              "Expecting a single "
                  + "x-amz-checksum- header, but the request has both "
                  + found.headerName
                  + " and "
                  + a.get().headerName
                  + ". Multiple checksum types are not allowed.");
        }
        found = a.get();
      }
    }
    return Optional.ofNullable(found);
  }
}
