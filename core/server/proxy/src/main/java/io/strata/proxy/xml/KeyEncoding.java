package io.strata.proxy.xml;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;

/**
 * The URL encoding of keys and prefixes that S3 applies to listings requested with {@code
 * encoding-type=url}, so that keys holding characters XML 1.0 cannot carry (most C0 controls) reach
 * the client intact.
 *
 * <p>Every UTF-8 byte is percent-encoded with upper-case hex except the RFC 3986 unreserved
 * characters ({@code A-Z a-z 0-9 - . _ ~}) and {@code /}, which S3 leaves as is so that keys keep
 * their folder structure. A space is written {@code %20}: S3 itself has been measured to write
 * {@code +} for a space, but every client decoder (the AWS SDKs' form decoding, boto3's {@code
 * unquote_plus}, Go's {@code QueryUnescape}) reads {@code %20} as a space too, while a plain
 * percent-decoder would misread {@code +}; a literal {@code +} is {@code %2B} either way.
 */
public final class KeyEncoding {
  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private KeyEncoding() {}

  /** The encoding-type=url form of a key, prefix, marker or delimiter. */
  public static String urlEncode(String s) {
    return percentEncode(s, true);
  }

  /**
   * Whether a request's {@code encoding-type} asks for URL encoding.
   *
   * @param value the query parameter, or null when absent
   * @throws S3Exception INVALID_ARGUMENT for any value but {@code url}, as S3 answers
   */
  public static boolean isUrlEncoding(String value) {
    if (value == null) {
      return false;
    }
    if (value.equalsIgnoreCase("url")) {
      return true;
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "Invalid Encoding Method specified in "
            + "Request: encoding-type must be 'url', not '"
            + value
            + "'.");
  }

  static String encodeIf(boolean urlEncoding, String s) {
    return urlEncoding ? urlEncode(s) : s;
  }

  /** Percent-encodes all but the unreserved characters, and '/' when asked to keep it. */
  static String percentEncode(String s, boolean keepSlash) {
    StringBuilder out = null;
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i++) {
      int b = bytes[i] & 0xff;
      boolean plain =
          (b >= 'A' && b <= 'Z')
              || (b >= 'a' && b <= 'z')
              || (b >= '0' && b <= '9')
              || b == '-'
              || b == '.'
              || b == '_'
              || b == '~'
              || (keepSlash && b == '/');
      if (plain) {
        if (out != null) {
          out.append((char) b);
        }
        continue;
      }
      if (out == null) {
        out = new StringBuilder(bytes.length + 16);
        for (int j = 0; j < i; j++) {
          out.append((char) bytes[j]);
        }
      }
      out.append('%').append(HEX[b >>> 4]).append(HEX[b & 0xf]);
    }
    return out == null ? s : out.toString();
  }
}
