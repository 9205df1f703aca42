package io.strata.proxy.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * SHA-256, HMAC-SHA256 and lower-case hex, as Signature Version 4 uses them, and HMAC-SHA1 as
 * Signature Version 2 does.
 */
final class Digests {
  /** The hex SHA-256 of no bytes, which chunk signatures carry in place of a header hash. */
  static final String EMPTY_SHA256_HEX =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Digests() {}

  static MessageDigest newSha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      // Every Java runtime must provide SHA-256.
      throw new IllegalStateException(e);
    }
  }

  static byte[] sha256(byte[] data) {
    return newSha256().digest(data);
  }

  static byte[] hmacSha256(byte[] key, String data) {
    return hmacSha256(key, data.getBytes(StandardCharsets.UTF_8));
  }

  static byte[] hmacSha256(byte[] key, byte[] data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data);
    } catch (GeneralSecurityException e) {
      // Every Java runtime must provide HmacSHA256, and it takes keys of any length.
      throw new IllegalStateException(e);
    }
  }

  static byte[] hmacSha1(byte[] key, String data) {
    try {
      Mac mac = Mac.getInstance("HmacSHA1");
      mac.init(new SecretKeySpec(key, "HmacSHA1"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      // Every Java runtime must provide HmacSHA1, and it takes keys of any length.
      throw new IllegalStateException(e);
    }
  }

  static String hex(byte[] bytes) {
    char[] out = new char[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xF];
      out[2 * i + 1] = HEX[bytes[i] & 0xF];
    }
    return new String(out);
  }

  static boolean isHex(String s, int length) {
    if (s.length() != length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (Character.digit(s.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * Compares two hex signatures in time that does not depend on where they differ, ignoring the
   * case of the letters.
   */
  static boolean signaturesEqual(String expected, String provided) {
    return MessageDigest.isEqual(
        expected.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII),
        provided.toLowerCase(Locale.ROOT).getBytes(StandardCharsets.US_ASCII));
  }

  /**
   * Compares two base64 signatures, exactly (base64 is case-sensitive), in time that does not
   * depend on where they differ.
   */
  static boolean base64SignaturesEqual(String expected, String provided) {
    return MessageDigest.isEqual(
        expected.getBytes(StandardCharsets.UTF_8), provided.getBytes(StandardCharsets.UTF_8));
  }
}
