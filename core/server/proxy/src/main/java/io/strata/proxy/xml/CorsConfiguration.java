package io.strata.proxy.xml;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.List;
import java.util.Objects;

/**
 * A bucket's CORS configuration: its rules in the order given, the first that matches a request
 * deciding the answer. Every instance obeys S3's rules for the document: 1 to 100 rules, each with
 * at least one origin and one method; methods among GET, PUT, HEAD, POST and DELETE; at most one
 * {@code *} in an origin or an allowed header; none in an exposed header; an ID of at most 255
 * characters. Breaking one is an {@code InvalidRequest} naming the value (a missing element is
 * MalformedXML, from the parser).
 */
public record CorsConfiguration(List<Rule> rules) {
  public static final int MAX_RULES = 100;
  public static final int MAX_ID_LENGTH = 255;

  /** The methods a rule may allow, as S3 spells them (case matters). */
  public static final List<String> METHODS = List.of("GET", "PUT", "HEAD", "POST", "DELETE");

  /**
   * One CORSRule.
   *
   * @param id the rule's ID, or null
   * @param maxAgeSeconds how long a browser may keep a preflight's answer, or null
   */
  public record Rule(
      String id,
      List<String> allowedOrigins,
      List<String> allowedMethods,
      List<String> allowedHeaders,
      List<String> exposeHeaders,
      Integer maxAgeSeconds) {
    public Rule {
      allowedOrigins = List.copyOf(allowedOrigins);
      allowedMethods = List.copyOf(allowedMethods);
      allowedHeaders = List.copyOf(allowedHeaders);
      exposeHeaders = List.copyOf(exposeHeaders);
      if (id != null && id.codePointCount(0, id.length()) > MAX_ID_LENGTH) {
        throw invalid(
            "The CORSRule ID '"
                + id
                + "' is longer than "
                + MAX_ID_LENGTH
                + " characters: shorten it");
      }
      if (allowedOrigins.isEmpty() || allowedMethods.isEmpty()) {
        throw S3XmlParser.malformed(
            "every <CORSRule> needs at least one <AllowedOrigin> and one <AllowedMethod>");
      }
      for (String origin : allowedOrigins) {
        if (wildcards(origin) > 1) {
          throw invalid(
              "AllowedOrigin \""
                  + origin
                  + "\" has more than one wildcard: an origin may hold one '*' at most");
        }
      }
      for (String method : allowedMethods) {
        if (!METHODS.contains(method)) {
          throw invalid(
              "The CORS configuration allows the unsupported HTTP method \""
                  + method
                  + "\": AllowedMethod is one of "
                  + String.join(", ", METHODS));
        }
      }
      for (String header : allowedHeaders) {
        if (wildcards(header) > 1) {
          throw invalid(
              "AllowedHeader \""
                  + header
                  + "\" has more than one wildcard: a header may hold one '*' at most");
        }
      }
      for (String header : exposeHeaders) {
        if (header.indexOf('*') >= 0) {
          throw invalid(
              "ExposeHeader \""
                  + header
                  + "\" contains a wildcard, which S3 does not accept there: name each header");
        }
      }
      if (maxAgeSeconds != null && maxAgeSeconds < 0) {
        throw invalid("MaxAgeSeconds is " + maxAgeSeconds + ": give 0 or more seconds");
      }
    }
  }

  /**
   * @throws S3Exception MalformedXML for no rule, InvalidRequest for more than {@link #MAX_RULES}
   */
  public CorsConfiguration {
    rules = List.copyOf(Objects.requireNonNull(rules, "rules"));
    if (rules.isEmpty()) {
      throw S3XmlParser.malformed("<CORSConfiguration> has no <CORSRule>");
    }
    if (rules.size() > MAX_RULES) {
      throw invalid(
          "The CORS configuration has "
              + rules.size()
              + " rules; a bucket keeps "
              + MAX_RULES
              + " at most");
    }
  }

  private static int wildcards(String s) {
    return (int) s.chars().filter(c -> c == '*').count();
  }

  private static S3Exception invalid(String message) {
    return new S3Exception(S3ErrorCode.INVALID_REQUEST, message);
  }
}
