package io.strata.proxy.s3;

import io.strata.proxy.auth.UriDecoding;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The query parameters of a request, decoded. A parameter given without '=' (a sub-resource such as
 * {@code ?uploads}) is present with the value "". When a name repeats, the first value counts. '+'
 * decodes to a space or stays a plus as the signature check found the client meant it, so the proxy
 * acts on the parameters that were signed.
 */
public final class QueryParams {
  private final Map<String, String> values;

  private QueryParams(Map<String, String> values) {
    this.values = values;
  }

  public static QueryParams parse(String rawQuery, boolean plusIsSpace) {
    Map<String, String> values = new LinkedHashMap<>();
    if (rawQuery != null && !rawQuery.isEmpty()) {
      for (String part : rawQuery.split("&")) {
        if (part.isEmpty()) {
          continue;
        }
        int eq = part.indexOf('=');
        String name = decode(eq < 0 ? part : part.substring(0, eq), plusIsSpace);
        String value = eq < 0 ? "" : decode(part.substring(eq + 1), plusIsSpace);
        values.putIfAbsent(name, value);
      }
    }
    return new QueryParams(Collections.unmodifiableMap(values));
  }

  static String decode(String s, boolean plusIsSpace) {
    return UriDecoding.query(s, plusIsSpace);
  }

  public boolean has(String name) {
    return values.containsKey(name);
  }

  /** The value, or null when the parameter is absent. */
  public String get(String name) {
    return values.get(name);
  }

  public String get(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  /** An integer parameter within [min, max]; absent gives {@code fallback}. */
  public int getInt(String name, int fallback, int min, int max) {
    String v = values.get(name);
    if (v == null) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(v.trim());
      if (n < min || n > max) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "Parameter "
              + name
              + " must be an"
              + " integer between "
              + min
              + " and "
              + max
              + ", not '"
              + v
              + "'");
    }
  }

  public Map<String, String> all() {
    return values;
  }
}
