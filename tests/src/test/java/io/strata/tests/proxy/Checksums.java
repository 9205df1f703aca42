package io.strata.tests.proxy;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;

/**
 * The checksums S3 reports, computed here independently of the proxy and of the SDK (whose
 * CRC64NVME needs the CRT library, not on this classpath): base64 of the big-endian value.
 */
final class Checksums {
  private static final long[] CRC64_NVME_TABLE = new long[256];

  static {
    // CRC-64/NVME: reflected polynomial 0x9a6c9329ac4bc9b5, initial and final XOR all ones.
    long poly = 0x9a6c9329ac4bc9b5L;
    for (int i = 0; i < 256; i++) {
      long c = i;
      for (int k = 0; k < 8; k++) {
        c = (c & 1) != 0 ? (c >>> 1) ^ poly : c >>> 1;
      }
      CRC64_NVME_TABLE[i] = c;
    }
  }

  private Checksums() {}

  static long crc64Nvme(byte[] data) {
    long crc = ~0L;
    for (byte b : data) {
      crc = CRC64_NVME_TABLE[(int) ((crc ^ b) & 0xff)] ^ (crc >>> 8);
    }
    return ~crc;
  }

  static String md5Hex(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(data));
  }

  static byte[] md5(byte[] data) throws Exception {
    return MessageDigest.getInstance("MD5").digest(data);
  }

  static String base64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }

  /** The S3 form of a checksum of {@code data}. */
  static String of(ChecksumAlgorithm algorithm, byte[] data) throws Exception {
    switch (algorithm) {
      case CRC32 -> {
        CRC32 c = new CRC32();
        c.update(data);
        return base64(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
      }
      case CRC32_C -> {
        CRC32C c = new CRC32C();
        c.update(data);
        return base64(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
      }
      case SHA1 -> {
        return base64(MessageDigest.getInstance("SHA-1").digest(data));
      }
      case SHA256 -> {
        return base64(MessageDigest.getInstance("SHA-256").digest(data));
      }
      case CRC64_NVME -> {
        return base64(ByteBuffer.allocate(8).putLong(crc64Nvme(data)).array());
      }
      default -> throw new IllegalArgumentException(algorithm.toString());
    }
  }

  /** The response header that carries an algorithm's checksum. */
  static String header(ChecksumAlgorithm algorithm) {
    return "x-amz-checksum-"
        + switch (algorithm) {
          case CRC32 -> "crc32";
          case CRC32_C -> "crc32c";
          case CRC64_NVME -> "crc64nvme";
          case SHA1 -> "sha1";
          case SHA256 -> "sha256";
          default -> throw new IllegalArgumentException(algorithm.toString());
        };
  }
}
