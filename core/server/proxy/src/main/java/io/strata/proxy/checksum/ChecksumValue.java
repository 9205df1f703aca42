package io.strata.proxy.checksum;

import java.util.Objects;

/**
 * A checksum as S3 reports it: the algorithm, the value as written in the header or XML element
 * (base64, with {@code -N} appended for a composite checksum of N parts) and the type.
 */
public record ChecksumValue(ChecksumAlgorithm algorithm, String value, ChecksumType type) {
  public ChecksumValue {
    Objects.requireNonNull(algorithm, "algorithm");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(type, "type");
  }

  /** The full-object checksum of the given binary value. */
  public static ChecksumValue fullObject(ChecksumAlgorithm algorithm, byte[] value) {
    return new ChecksumValue(algorithm, algorithm.encode(value), ChecksumType.FULL_OBJECT);
  }

  /**
   * The value without a composite checksum's {@code -N} part count, as GetObjectAttributes reports
   * it.
   */
  public String valueWithoutPartCount() {
    int dash = value.lastIndexOf('-');
    return type == ChecksumType.COMPOSITE && dash > 0 ? value.substring(0, dash) : value;
  }
}
