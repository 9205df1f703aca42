package io.strata.proxy.auth;

import java.nio.charset.StandardCharsets;

/**
 * Decodes request paths and query parameters exactly as the signature check canonicalises them, so
 * that the proxy acts on the very key and parameters that were signed: percent-escapes and raw
 * bytes as UTF-8, and a '+' as a space in paths (as S3 reads them) and in queries when the client
 * meant it so ({@link AuthResult#queryPlusIsSpace()}).
 */
public final class UriDecoding {
  private UriDecoding() {}

  /** A raw path (or path segment) decoded to text. */
  public static String path(String raw) {
    return new String(CanonicalRequest.decode(raw, true, "path"), StandardCharsets.UTF_8);
  }

  /** A raw query name or value decoded to text. */
  public static String query(String raw, boolean plusIsSpace) {
    return new String(CanonicalRequest.decode(raw, plusIsSpace, "query"), StandardCharsets.UTF_8);
  }
}
