package io.strata.proxy.checksum;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.zip.Checksum;

/**
 * One running digest of a body, whichever kind: a JDK message digest or a CRC. The binary result is
 * what S3 base64-encodes in its headers and XML (a CRC as its bytes, big-endian).
 */
interface Hasher {
  void update(byte[] b, int off, int len);

  /** Consumes the buffer's remaining bytes, leaving its position at its limit. */
  void update(ByteBuffer buffer);

  /** The digest of every byte given; the hasher must not be used afterwards. */
  byte[] finish();

  static Hasher messageDigest(String jdkName) {
    MessageDigest md = newMessageDigest(jdkName);
    return new Hasher() {
      @Override
      public void update(byte[] b, int off, int len) {
        md.update(b, off, len);
      }

      @Override
      public void update(ByteBuffer buffer) {
        md.update(buffer);
      }

      @Override
      public byte[] finish() {
        return md.digest();
      }
    };
  }

  static Hasher crc(Checksum crc, int bytes) {
    return new Hasher() {
      @Override
      public void update(byte[] b, int off, int len) {
        crc.update(b, off, len);
      }

      @Override
      public void update(ByteBuffer buffer) {
        crc.update(buffer);
      }

      @Override
      public byte[] finish() {
        return bigEndian(crc.getValue(), bytes);
      }
    };
  }

  static MessageDigest newMessageDigest(String jdkName) {
    try {
      return MessageDigest.getInstance(jdkName);
    } catch (NoSuchAlgorithmException e) {
      // Every Java SE runtime must provide MD5, SHA-1 and SHA-256.
      throw new IllegalStateException("The JDK has no " + jdkName + " digest", e);
    }
  }

  static byte[] bigEndian(long value, int bytes) {
    byte[] out = new byte[bytes];
    for (int i = bytes - 1; i >= 0; i--) {
      out[i] = (byte) value;
      value >>>= 8;
    }
    return out;
  }

  static long fromBigEndian(byte[] value) {
    long v = 0;
    for (byte b : value) {
      v = (v << 8) | (b & 0xff);
    }
    return v;
  }
}
