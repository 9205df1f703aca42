package io.strata.proxy.checksum;

import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The ETag and checksum of an object completed from parts, computed from the parts' own values
 * exactly as S3 computes them, so a client that checks them against its own arithmetic agrees:
 *
 * <ul>
 *   <li>ETag: the hex MD5 of the concatenated binary MD5s of the parts, then {@code -N} for N parts
 *       ({@code "-1"} for a single part too).
 *   <li>Composite checksum (CRC32, CRC32C, SHA-1, SHA-256): the same algorithm over the
 *       concatenated binary part checksums, in part-number order, base64, then {@code -N}.
 *   <li>Full-object checksum (CRC64NVME always; CRC32 and CRC32C when the upload asked for {@code
 *       FULL_OBJECT}): the CRC of the whole object's bytes, found by combining the part CRCs with
 *       the part sizes, no {@code -N}.
 * </ul>
 */
public final class MultipartChecksums {
  private static final HexFormat HEX = HexFormat.of();

  private MultipartChecksums() {}

  /** A part's checksum (base64, as stored when it was uploaded) and its size in bytes. */
  public record PartChecksum(String value, long size) {
    public PartChecksum {
      Objects.requireNonNull(value, "value");
      if (size < 0) {
        throw new IllegalArgumentException("negative part size " + size);
      }
    }
  }

  /**
   * The multipart ETag, without quotes, from the parts' ETags in part-number order.
   *
   * @param partEtags each the hex MD5 of a part, quoted or not
   * @throws IllegalArgumentException when there is no part or an ETag is not 32 hex digits
   */
  public static String etag(List<String> partEtags) {
    if (partEtags.isEmpty()) {
      throw new IllegalArgumentException("A multipart ETag needs at least one part");
    }
    var md5 = Hasher.messageDigest("MD5");
    for (String etag : partEtags) {
      String hex = unquote(etag);
      if (hex.length() != 32) {
        throw new IllegalArgumentException("Part ETag " + etag + " is not an MD5 in hex");
      }
      byte[] binary;
      try {
        binary = HEX.parseHex(hex);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("Part ETag " + etag + " is not an MD5 in hex", e);
      }
      md5.update(binary, 0, binary.length);
    }
    return HEX.formatHex(md5.finish()) + "-" + partEtags.size();
  }

  /**
   * The object checksum of a completed upload, of the type the upload was created with.
   *
   * @param parts the parts' checksums and sizes in part-number order
   */
  public static ChecksumValue objectChecksum(
      ChecksumAlgorithm algorithm, ChecksumType type, List<PartChecksum> parts) {
    if (type == ChecksumType.FULL_OBJECT) {
      return fullObject(algorithm, parts);
    }
    return composite(algorithm, parts.stream().map(PartChecksum::value).toList());
  }

  /**
   * The composite checksum, {@code base64-N}, from the parts' checksums in part-number order.
   *
   * @throws IllegalArgumentException for CRC64NVME, which S3 never combines this way, or no part
   * @throws io.strata.proxy.s3.S3Exception INVALID_DIGEST when a part value is malformed
   */
  public static ChecksumValue composite(ChecksumAlgorithm algorithm, List<String> partChecksums) {
    if (!algorithm.supports(ChecksumType.COMPOSITE)) {
      throw new IllegalArgumentException(algorithm + " has no composite checksum");
    }
    if (partChecksums.isEmpty()) {
      throw new IllegalArgumentException("A composite checksum needs at least one part");
    }
    Hasher hasher = algorithm.newHasher();
    for (String part : partChecksums) {
      byte[] binary = algorithm.decode(part);
      hasher.update(binary, 0, binary.length);
    }
    String value = Base64.getEncoder().encodeToString(hasher.finish()) + "-" + partChecksums.size();
    return new ChecksumValue(algorithm, value, ChecksumType.COMPOSITE);
  }

  /**
   * The full-object CRC of the concatenated parts, from their CRCs and sizes.
   *
   * @throws IllegalArgumentException for SHA-1 and SHA-256, which cannot be combined, or no part
   * @throws io.strata.proxy.s3.S3Exception INVALID_DIGEST when a part value is malformed
   */
  public static ChecksumValue fullObject(ChecksumAlgorithm algorithm, List<PartChecksum> parts) {
    if (!algorithm.isCrc()) {
      throw new IllegalArgumentException(algorithm + " has no full-object multipart checksum");
    }
    if (parts.isEmpty()) {
      throw new IllegalArgumentException("A full-object checksum needs at least one part");
    }
    long crc = Hasher.fromBigEndian(algorithm.decode(parts.get(0).value()));
    for (PartChecksum part : parts.subList(1, parts.size())) {
      long next = Hasher.fromBigEndian(algorithm.decode(part.value()));
      crc = CrcCombine.combine(algorithm, crc, next, part.size());
    }
    return ChecksumValue.fullObject(algorithm, Hasher.bigEndian(crc, algorithm.length()));
  }

  private static String unquote(String etag) {
    String e = etag.trim();
    return e.length() >= 2 && e.startsWith("\"") && e.endsWith("\"")
        ? e.substring(1, e.length() - 1)
        : e;
  }
}
