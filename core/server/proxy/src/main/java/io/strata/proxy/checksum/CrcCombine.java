package io.strata.proxy.checksum;

/**
 * The CRC of a concatenation from the CRCs of its pieces and their lengths, without the bytes: how
 * a multipart upload's full-object CRC is found from its parts' CRCs.
 *
 * <p>For a reflected CRC whose initial value equals its final XOR (true of CRC32, CRC32C and
 * CRC64NVME: all ones), crc(A || B) = crc(A) * x^(8 |B|) mod P xor crc(B). The product is computed
 * in the reflected representation, where the top bit is the coefficient of x^0, and x^(8n) by
 * square-and-multiply, so the cost is O(width^2 log n), independent of the data size.
 */
final class CrcCombine {
  private CrcCombine() {}

  /**
   * The CRC of A followed by B.
   *
   * @param crcA the CRC of A, as its algorithm reports it (after the final XOR)
   * @param crcB the CRC of B, likewise
   * @param lengthB the length of B in bytes
   */
  static long combine(ChecksumAlgorithm algorithm, long crcA, long crcB, long lengthB) {
    if (lengthB < 0) {
      throw new IllegalArgumentException("negative length " + lengthB);
    }
    int width = algorithm.length() * 8;
    long poly = polynomial(algorithm);
    return multiply(xPow8n(lengthB, poly, width), crcA, poly, width) ^ crcB;
  }

  private static long polynomial(ChecksumAlgorithm algorithm) {
    return switch (algorithm) {
      case CRC32 -> 0xEDB88320L;
      case CRC32C -> 0x82F63B78L;
      case CRC64NVME -> Crc64Nvme.POLY_REFLECTED;
      default -> throw new IllegalArgumentException(algorithm + " is not a CRC");
    };
  }

  /** a * b mod P, both reflected polynomials of the given width. */
  private static long multiply(long a, long b, long poly, int width) {
    long product = 0;
    // m walks a's coefficients from x^0 up while b is multiplied by x each step.
    for (long m = 1L << (width - 1); m != 0; m >>>= 1) {
      if ((a & m) != 0) {
        product ^= b;
      }
      b = (b & 1) != 0 ? (b >>> 1) ^ poly : b >>> 1;
    }
    return product;
  }

  /** x^(8n) mod P, reflected. */
  private static long xPow8n(long n, long poly, int width) {
    long result = 1L << (width - 1); // x^0
    long power = 1L << (width - 1 - 8); // x^8
    while (n != 0) {
      if ((n & 1) != 0) {
        result = multiply(result, power, poly, width);
      }
      power = multiply(power, power, poly, width);
      n >>>= 1;
    }
    return result;
  }
}
