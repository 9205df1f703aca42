package io.strata.proxy.auth;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The canonical request of Signature Version 4 as S3 defines it, built from a request as it
 * arrived. This is written here rather than taken from an SDK's signer because a verifier must
 * rebuild exactly what the client signed, with the client's own list of signed headers and the raw
 * bytes it sent, and the SDK signers choose their own header list and take decoded values.
 *
 * <p>Strings here hold one char per byte received (ISO-8859-1), as Netty's HTTP decoder delivers
 * the request line and header values; a char above U+00FF, which a decoder never produces, stands
 * for its UTF-8 bytes.
 */
final class CanonicalRequest {
  private static final char[] HEX_UPPER = "0123456789ABCDEF".toCharArray();

  /** A query parameter as received: percent-encoded, a missing '=' read as an empty value. */
  record QueryParam(String rawName, String rawValue) {}

  private CanonicalRequest() {}

  static List<QueryParam> parseQuery(String rawQuery) {
    List<QueryParam> params = new ArrayList<>();
    if (rawQuery == null || rawQuery.isEmpty()) {
      return params;
    }
    int start = 0;
    while (start <= rawQuery.length()) {
      int amp = rawQuery.indexOf('&', start);
      int end = amp < 0 ? rawQuery.length() : amp;
      if (end > start) {
        String part = rawQuery.substring(start, end);
        int eq = part.indexOf('=');
        params.add(
            eq < 0
                ? new QueryParam(part, "")
                : new QueryParam(part.substring(0, eq), part.substring(eq + 1)));
      }
      start = end + 1;
    }
    return params;
  }

  /**
   * The canonical URI: the raw path decoded, then every byte but the unreserved ones and {@code /}
   * percent-encoded once. S3 reads a {@code +} in a path as a space, so it is canonicalised as one;
   * no dot segments are removed and repeated slashes stay.
   */
  static String uri(String rawPath) {
    if (rawPath == null || rawPath.isEmpty()) {
      return "/";
    }
    return encode(decode(rawPath, true, "path"), true);
  }

  /**
   * The canonical query string: each parameter but {@code excluded} decoded and re-encoded, sorted
   * by name and then value.
   *
   * @param plusIsSpace whether a {@code +} in the raw query stands for a space
   * @param excluded a parameter name (as received) to leave out, or null
   */
  static String query(List<QueryParam> params, boolean plusIsSpace, String excluded) {
    List<String[]> encoded = new ArrayList<>(params.size());
    for (QueryParam p : params) {
      if (p.rawName().equals(excluded)) {
        continue;
      }
      encoded.add(
          new String[] {
            encode(decode(p.rawName(), plusIsSpace, "query"), false),
            encode(decode(p.rawValue(), plusIsSpace, "query"), false)
          });
    }
    encoded.sort(Comparator.<String[], String>comparing(e -> e[0]).thenComparing(e -> e[1]));
    StringBuilder sb = new StringBuilder();
    for (String[] e : encoded) {
      if (sb.length() > 0) {
        sb.append('&');
      }
      sb.append(e[0]).append('=').append(e[1]);
    }
    return sb.toString();
  }

  /**
   * The canonical headers block: a {@code name:value\n} line for each signed header in the client's
   * order, values trimmed with inner runs of spaces made one, repeated headers joined with commas.
   * A signed header the request lacks gets an empty value, as the client would have had none to
   * sign either way.
   */
  static String headers(List<String> signedHeaders, HttpHeaders headers) {
    StringBuilder sb = new StringBuilder();
    for (String name : signedHeaders) {
      sb.append(name).append(':');
      List<String> values = headers.getAll(name);
      for (int i = 0; i < values.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        appendTrimmed(sb, asWireChars(values.get(i)));
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  /** The canonical request's bytes, to hash. */
  static byte[] build(
      String method,
      String canonicalUri,
      String canonicalQuery,
      String canonicalHeaders,
      String signedHeadersLine,
      String payloadHash) {
    String text =
        method
            + '\n'
            + canonicalUri
            + '\n'
            + canonicalQuery
            + '\n'
            + canonicalHeaders
            + '\n'
            + signedHeadersLine
            + '\n'
            + payloadHash;
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  private static void appendTrimmed(StringBuilder sb, String value) {
    int start = 0;
    int end = value.length();
    while (start < end && isSpace(value.charAt(start))) {
      start++;
    }
    while (end > start && isSpace(value.charAt(end - 1))) {
      end--;
    }
    boolean inSpace = false;
    for (int i = start; i < end; i++) {
      char c = value.charAt(i);
      if (isSpace(c)) {
        if (!inSpace) {
          sb.append(' ');
        }
        inSpace = true;
      } else {
        sb.append(c);
        inSpace = false;
      }
    }
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x0B;
  }

  /** The value with any char above U+00FF replaced by its UTF-8 bytes, one char each. */
  private static String asWireChars(String value) {
    for (int i = 0; i < value.length(); i++) {
      if (value.charAt(i) > 0xFF) {
        return new String(value.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
      }
    }
    return value;
  }

  /**
   * Percent-decodes a raw path or query part to bytes.
   *
   * @throws S3Exception INVALID_REQUEST on a {@code %} not followed by two hex digits
   */
  static byte[] decode(String raw, boolean plusIsSpace, String where) {
    // Into a plain array: this runs for every parameter of every request (a presigned URL has
    // seven), where a ByteArrayOutputStream's synchronised per-byte writes showed as a tenth
    // of a small GET's CPU.
    byte[] out = new byte[raw.length() * 3];
    int n = 0;
    for (int i = 0; i < raw.length(); i++) {
      char c = raw.charAt(i);
      if (c == '%') {
        int hi = i + 2 < raw.length() ? Character.digit(raw.charAt(i + 1), 16) : -1;
        int lo = hi >= 0 ? Character.digit(raw.charAt(i + 2), 16) : -1;
        if (lo < 0) {
          throw new S3Exception(
              S3ErrorCode.INVALID_REQUEST,
              "The request "
                  + where
                  + " has a '%' not followed by two hex digits at offset "
                  + i
                  + ": percent-encode a literal '%' as %25");
        }
        out[n++] = (byte) ((hi << 4) | lo);
        i += 2;
      } else if (c == '+' && plusIsSpace) {
        out[n++] = ' ';
      } else if (c <= 0xFF) {
        out[n++] = (byte) c;
      } else {
        int cp = raw.codePointAt(i);
        byte[] utf8 = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(utf8, 0, out, n, utf8.length);
        n += utf8.length;
        i += Character.charCount(cp) - 1;
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** URI-encodes bytes as Signature Version 4 says: all but A-Z a-z 0-9 - _ . ~ (and /). */
  static String encode(byte[] bytes, boolean keepSlash) {
    StringBuilder sb = new StringBuilder(bytes.length + 8);
    for (byte b : bytes) {
      int c = b & 0xFF;
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '_'
          || c == '.'
          || c == '~'
          || (c == '/' && keepSlash)) {
        sb.append((char) c);
      } else {
        sb.append('%').append(HEX_UPPER[c >> 4]).append(HEX_UPPER[c & 0xF]);
      }
    }
    return sb.toString();
  }
}
