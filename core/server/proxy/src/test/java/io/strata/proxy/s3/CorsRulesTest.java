package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.xml.CorsConfiguration;
import io.strata.proxy.xml.S3XmlParser;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CORS rules match requests as S3 matches them, and a configuration is checked as S3 checks it. */
class CorsRulesTest {
  private static CorsConfiguration.Rule rule(
      List<String> origins, List<String> methods, List<String> headers) {
    return new CorsConfiguration.Rule("r", origins, methods, headers, List.of("ETag"), 600);
  }

  private static final CorsConfiguration.Rule UPLOADS =
      rule(
          List.of("https://*.example.com"),
          List.of("PUT", "POST"),
          List.of("content-type", "x-amz-*"));
  private static final CorsConfiguration.Rule READS =
      rule(List.of("*"), List.of("GET", "HEAD"), List.of());
  private static final CorsConfiguration CONFIG = new CorsConfiguration(List.of(UPLOADS, READS));

  @Test
  void anOriginMatchesExactlyOrThroughItsOneWildcard() {
    assertTrue(CorsRules.matches("https://app.example.com", "https://app.example.com"));
    assertTrue(CorsRules.matches("https://app.example.com", "HTTPS://App.Example.com"));
    assertFalse(CorsRules.matches("https://app.example.com", "http://app.example.com"));
    assertTrue(CorsRules.matches("https://*.example.com", "https://a.b.example.com"));
    assertFalse(CorsRules.matches("https://*.example.com", "https://example.com"));
    assertFalse(CorsRules.matches("https://*.example.com", "https://evil.com/.example.com.x"));
    // The prefix and the suffix may not overlap.
    assertFalse(CorsRules.matches("ab*ba", "aba"));
    assertTrue(CorsRules.matches("ab*ba", "abba"));
    assertTrue(CorsRules.matches("*", "null"));
  }

  @Test
  void theFirstRuleAllowingOriginMethodAndEveryHeaderDecides() {
    assertSame(
        UPLOADS,
        CorsRules.firstMatch(
            CONFIG, "https://app.example.com", "PUT", List.of("content-type", "x-amz-date")));
    // A header no AllowedHeader covers: the upload rule does not match, nor does the read rule.
    assertNull(
        CorsRules.firstMatch(CONFIG, "https://app.example.com", "PUT", List.of("authorization")));
    // GET is not an upload method; the read rule allows any origin.
    assertSame(READS, CorsRules.firstMatch(CONFIG, "https://app.example.com", "GET", List.of()));
    assertSame(READS, CorsRules.firstMatch(CONFIG, "http://other.org", "HEAD", List.of()));
    // The read rule allows no header at all.
    assertNull(CorsRules.firstMatch(CONFIG, "http://other.org", "GET", List.of("x-custom")));
    assertNull(CorsRules.firstMatch(CONFIG, "http://other.org", "DELETE", List.of()));
    // Methods are compared as S3 spells them.
    assertNull(CorsRules.firstMatch(CONFIG, "http://other.org", "get", List.of()));
  }

  @Test
  void requestedHeadersAreSplitTrimmedAndLowerCased() {
    assertEquals(
        List.of("content-type", "x-amz-date"),
        CorsRules.requestedHeaders(" Content-Type ,X-Amz-Date,,"));
    assertEquals(List.of(), CorsRules.requestedHeaders(null));
  }

  @Test
  void anAnswerEchoesTheOriginUnlessTheRuleAllowsAny() {
    HttpHeaders h =
        CorsRules.responseHeaders(UPLOADS, "https://app.example.com", List.of("content-type"));
    assertEquals("https://app.example.com", h.get("Access-Control-Allow-Origin"));
    assertEquals("true", h.get("Access-Control-Allow-Credentials"));
    assertEquals("PUT, POST", h.get("Access-Control-Allow-Methods"));
    assertEquals("content-type", h.get("Access-Control-Allow-Headers"));
    assertEquals("ETag", h.get("Access-Control-Expose-Headers"));
    assertEquals("600", h.get("Access-Control-Max-Age"));
    assertEquals(CorsRules.VARY, h.get("Vary"));
    HttpHeaders any = CorsRules.responseHeaders(READS, "http://other.org", List.of());
    assertEquals("*", any.get("Access-Control-Allow-Origin"));
    assertNull(any.get("Access-Control-Allow-Credentials"));
    assertNull(any.get("Access-Control-Allow-Headers"));
  }

  @Test
  void aConfigurationBreakingS3sRulesIsRefused() {
    assertRefused(
        S3ErrorCode.INVALID_REQUEST,
        "more than one wildcard",
        "<CORSRule><AllowedOrigin>http://*.*.com</AllowedOrigin>"
            + "<AllowedMethod>GET</AllowedMethod></CORSRule>");
    assertRefused(
        S3ErrorCode.INVALID_REQUEST,
        "PATCH",
        "<CORSRule><AllowedOrigin>*</AllowedOrigin>"
            + "<AllowedMethod>PATCH</AllowedMethod></CORSRule>");
    assertRefused(
        S3ErrorCode.INVALID_REQUEST,
        "x-*-*",
        "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            + "<AllowedHeader>x-*-*</AllowedHeader></CORSRule>");
    assertRefused(
        S3ErrorCode.INVALID_REQUEST,
        "ExposeHeader",
        "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            + "<ExposeHeader>x-amz-*</ExposeHeader></CORSRule>");
    assertRefused(
        S3ErrorCode.INVALID_REQUEST,
        "longer than 255",
        "<CORSRule><ID>"
            + "i".repeat(256)
            + "</ID><AllowedOrigin>*</AllowedOrigin>"
            + "<AllowedMethod>GET</AllowedMethod></CORSRule>");
    assertRefused(S3ErrorCode.MALFORMED_XML, "no <CORSRule>", "");
    assertRefused(
        S3ErrorCode.MALFORMED_XML,
        "<AllowedMethod>",
        "<CORSRule><AllowedOrigin>*</AllowedOrigin></CORSRule>");
    assertRefused(
        S3ErrorCode.MALFORMED_XML,
        "whole number",
        "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            + "<MaxAgeSeconds>soon</MaxAgeSeconds></CORSRule>");
    String rule =
        "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>"
            + "</CORSRule>";
    assertRefused(S3ErrorCode.INVALID_REQUEST, "101 rules", rule.repeat(101));
    assertEquals(100, parse(rule.repeat(100)).rules().size());
  }

  private static CorsConfiguration parse(String rules) {
    return S3XmlParser.corsConfiguration(
        ("<CORSConfiguration>" + rules + "</CORSConfiguration>").getBytes(StandardCharsets.UTF_8));
  }

  private static void assertRefused(S3ErrorCode code, String detail, String rules) {
    S3Exception e = assertThrows(S3Exception.class, () -> parse(rules));
    assertEquals(code, e.code());
    assertTrue(e.getMessage().contains(detail), e::getMessage);
  }
}
