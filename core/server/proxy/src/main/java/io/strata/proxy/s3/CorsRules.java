package io.strata.proxy.s3;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.xml.CorsConfiguration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * How a bucket's CORS rules answer a cross-origin request, as S3 matches them: the first rule that
 * allows the request's origin (an AllowedOrigin with one {@code *} matches any run of characters
 * there; origins compare without regard to case, as scheme and host do), its method (exactly, as S3
 * spells methods) and, for a preflight, every header it asks for (each matched by an AllowedHeader,
 * without regard to case, {@code *} as for origins) decides the answer's headers.
 */
final class CorsRules {
  /** What every CORS answer varies with, so that caches keep one answer per origin and request. */
  static final String VARY =
      "Origin, Access-Control-Request-Headers, Access-Control-Request-Method";

  private CorsRules() {}

  /**
   * The first rule that allows the request, or null.
   *
   * @param requestHeaders the headers a preflight asks for (lower or any case); empty for an actual
   *     request
   */
  static CorsConfiguration.Rule firstMatch(
      CorsConfiguration c, String origin, String method, List<String> requestHeaders) {
    for (CorsConfiguration.Rule rule : c.rules()) {
      if (allowedOrigin(rule, origin) != null
          && rule.allowedMethods().contains(method)
          && requestHeaders.stream().allMatch(h -> allowsHeader(rule, h))) {
        return rule;
      }
    }
    return null;
  }

  /** The AllowedOrigin of {@code rule} that matches {@code origin}, or null. */
  static String allowedOrigin(CorsConfiguration.Rule rule, String origin) {
    for (String allowed : rule.allowedOrigins()) {
      if (matches(allowed, origin)) {
        return allowed;
      }
    }
    return null;
  }

  static boolean allowsHeader(CorsConfiguration.Rule rule, String header) {
    return rule.allowedHeaders().stream().anyMatch(allowed -> matches(allowed, header));
  }

  /** Whether {@code value} matches {@code pattern}, which holds one {@code *} at most; any case. */
  static boolean matches(String pattern, String value) {
    String p = pattern.toLowerCase(Locale.ROOT);
    String v = value.toLowerCase(Locale.ROOT);
    int star = p.indexOf('*');
    if (star < 0) {
      return p.equals(v);
    }
    String prefix = p.substring(0, star);
    String suffix = p.substring(star + 1);
    return v.length() >= prefix.length() + suffix.length()
        && v.startsWith(prefix)
        && v.endsWith(suffix);
  }

  /** The header names of an Access-Control-Request-Headers value; empty for none. */
  static List<String> requestedHeaders(String value) {
    List<String> out = new ArrayList<>();
    if (value != null) {
      for (String h : value.split(",")) {
        String name = h.trim();
        if (!name.isEmpty()) {
          out.add(name.toLowerCase(Locale.ROOT));
        }
      }
    }
    return out;
  }

  /**
   * The headers of an answer that {@code rule} allows: the origin ({@code *} when the rule allows
   * any, else the request's own, with credentials allowed), the rule's methods, the headers the
   * preflight asked for, the exposed headers and the max age when the rule has them.
   */
  static HttpHeaders responseHeaders(
      CorsConfiguration.Rule rule, String origin, List<String> requestHeaders) {
    HttpHeaders h = new DefaultHttpHeaders();
    if ("*".equals(allowedOrigin(rule, origin))) {
      h.set("Access-Control-Allow-Origin", "*");
    } else {
      h.set("Access-Control-Allow-Origin", origin);
      h.set("Access-Control-Allow-Credentials", "true");
    }
    h.set("Access-Control-Allow-Methods", String.join(", ", rule.allowedMethods()));
    if (!requestHeaders.isEmpty()) {
      h.set("Access-Control-Allow-Headers", String.join(", ", requestHeaders));
    }
    if (!rule.exposeHeaders().isEmpty()) {
      h.set("Access-Control-Expose-Headers", String.join(", ", rule.exposeHeaders()));
    }
    if (rule.maxAgeSeconds() != null) {
      h.set("Access-Control-Max-Age", rule.maxAgeSeconds().toString());
    }
    h.set("Vary", VARY);
    return h;
  }
}
