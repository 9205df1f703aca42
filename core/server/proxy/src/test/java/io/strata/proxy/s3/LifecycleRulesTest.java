package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.xml.LifecycleConfiguration;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.TagSet;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lifecycle configurations are parsed and checked as S3 checks them, answered back as they were
 * put, and give the expiry S3 would: the earliest of the rules that select a key, counted in days
 * rounded up to midnight UTC.
 */
class LifecycleRulesTest {
  private static final String NS = " xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"";

  private static LifecycleConfiguration parse(String rules) {
    return S3XmlParser.lifecycleConfiguration(
        ("<LifecycleConfiguration" + NS + ">" + rules + "</LifecycleConfiguration>")
            .getBytes(StandardCharsets.UTF_8));
  }

  private static io.strata.proxy.s3.S3Exception refused(String rules) {
    return assertThrows(io.strata.proxy.s3.S3Exception.class, () -> parse(rules));
  }

  private static final String RULES =
      "<Rule><ID>logs</ID><Filter><Prefix>logs/</Prefix></Filter><Status>Enabled</Status>"
          + "<Expiration><Days>30</Days></Expiration></Rule>"
          + "<Rule><ID>tmp</ID><Filter><And><Prefix>tmp/</Prefix>"
          + "<Tag><Key>kind</Key><Value>scratch</Value></Tag>"
          + "<ObjectSizeGreaterThan>10</ObjectSizeGreaterThan></And></Filter>"
          + "<Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>"
          + "<Rule><ID>old</ID><Filter></Filter><Status>Enabled</Status>"
          + "<NoncurrentVersionExpiration><NoncurrentDays>7</NoncurrentDays>"
          + "<NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>"
          + "<AbortIncompleteMultipartUpload><DaysAfterInitiation>3</DaysAfterInitiation>"
          + "</AbortIncompleteMultipartUpload></Rule>"
          + "<Rule><ID>off</ID><Prefix>logs/</Prefix><Status>Disabled</Status>"
          + "<Expiration><Days>1</Days></Expiration></Rule>"
          + "<Rule><ID>markers</ID><Filter><Prefix></Prefix></Filter><Status>Enabled</Status>"
          + "<Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>"
          + "</Rule>";

  @Test
  void aConfigurationIsAnsweredAsItWasPut() {
    LifecycleConfiguration c = parse(RULES);
    assertEquals(5, c.rules().size());
    LifecycleConfiguration.Rule tmp = c.rules().get(1);
    assertEquals("tmp/", tmp.filter().prefix());
    assertEquals(List.of(new TagSet.Tag("kind", "scratch")), tmp.filter().tags());
    assertEquals(10L, tmp.filter().sizeGreaterThan());
    assertTrue(c.rules().get(3).filter().legacyPrefix());
    assertFalse(c.rules().get(3).enabled());
    LifecycleConfiguration again =
        S3XmlParser.lifecycleConfiguration(S3XmlWriter.lifecycleConfiguration(c));
    assertEquals(c, again);
  }

  @Test
  void whatS3RefusesIsRefusedWithTheReason() {
    String days0 =
        "<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>0</Days>"
            + "</Expiration></Rule>";
    assertEquals("InvalidArgument", refused(days0).code().code());
    String notMidnight =
        "<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration>"
            + "<Date>2027-01-01T10:00:00Z</Date></Expiration></Rule>";
    assertTrue(refused(notMidnight).getMessage().contains("midnight"));
    String transition =
        "<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Transition><Days>30</Days>"
            + "<StorageClass>GLACIER</StorageClass></Transition></Rule>";
    io.strata.proxy.s3.S3Exception t = refused(transition);
    assertEquals("NotImplemented", t.code().code());
    assertTrue(t.getMessage().contains("one storage class"), t.getMessage());
    String noAction = "<Rule><ID>a</ID><Filter/><Status>Enabled</Status></Rule>";
    assertTrue(refused(noAction).getMessage().contains("At least one action"));
    String sameIds =
        "<Rule><ID>a</ID><Filter/><Status>Enabled</Status><Expiration><Days>1</Days>"
            + "</Expiration></Rule><Rule><ID>a</ID><Filter/><Status>Enabled</Status>"
            + "<Expiration><Days>2</Days></Expiration></Rule>";
    assertTrue(refused(sameIds).getMessage().contains("unique"));
    String markerWithTag =
        "<Rule><ID>a</ID><Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter>"
            + "<Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true"
            + "</ExpiredObjectDeleteMarker></Expiration></Rule>";
    assertTrue(refused(markerWithTag).getMessage().contains("tags"));
    String twoConditions =
        "<Rule><ID>a</ID><Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag>"
            + "</Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>";
    assertEquals("MalformedXML", refused(twoConditions).code().code());
    String badStatus =
        "<Rule><ID>a</ID><Filter/><Status>On</Status><Expiration><Days>1</Days>"
            + "</Expiration></Rule>";
    assertEquals("MalformedXML", refused(badStatus).code().code());
    assertEquals("MalformedXML", refused("").code().code());
  }

  @Test
  void daysAreRoundedUpToMidnightUtcAndTheEarliestRuleWins() {
    LifecycleRules rules = new LifecycleRules(parse(RULES), Duration.ofDays(1));
    long written = Instant.parse("2026-01-15T10:30:00Z").toEpochMilli();
    LifecycleRules.Expiry logs = rules.current("logs/a", 100, TagSet.empty(), written);
    assertEquals(Instant.parse("2026-02-15T00:00:00Z").toEpochMilli(), logs.atMs());
    assertEquals("logs", logs.ruleId());
    assertNull(rules.current("data/a", 100, TagSet.empty(), written));
    TagSet scratch = TagSet.fromHeader("kind=scratch");
    LifecycleRules.Expiry tmp = rules.current("tmp/a", 100, scratch, written);
    assertEquals(Instant.parse("2026-01-17T00:00:00Z").toEpochMilli(), tmp.atMs());
    // The tag and the size both have to match.
    assertNull(rules.current("tmp/a", 100, TagSet.empty(), written));
    assertNull(rules.current("tmp/a", 10, scratch, written));
    assertTrue(rules.removesLoneDeleteMarker("any/key"));
    assertTrue(rules.expiresKeysBelow("logs/2026/"));
    assertFalse(rules.expiresKeysBelow("data/"));
  }

  @Test
  void noncurrentVersionsExpireBeyondTheNewestOnesKept() {
    LifecycleRules rules = new LifecycleRules(parse(RULES), Duration.ofSeconds(1));
    long replaced = 1_000_000L;
    assertNull(rules.noncurrent("k", 1, TagSet.empty(), replaced, 0));
    assertNull(rules.noncurrent("k", 1, TagSet.empty(), replaced, 1));
    LifecycleRules.Expiry third = rules.noncurrent("k", 1, TagSet.empty(), replaced, 2);
    assertNotNull(third);
    // A short test day is not rounded.
    assertEquals(replaced + 7_000, third.atMs());
    assertEquals("old", third.ruleId());
    assertEquals(replaced + 3_000, rules.upload("k", replaced).atMs());
  }

  @Test
  void aDateRuleExpiresEverythingItSelectsOnThatDay() {
    LifecycleRules rules =
        new LifecycleRules(
            parse(
                "<Rule><ID>d</ID><Filter/><Status>Enabled</Status><Expiration>"
                    + "<Date>2027-03-01T00:00:00.000Z</Date></Expiration></Rule>"),
            Duration.ofDays(1));
    long at = Instant.parse("2027-03-01T00:00:00Z").toEpochMilli();
    assertEquals(at, rules.current("a", 1, TagSet.empty(), 0).atMs());
    assertEquals(at, rules.current("b", 1, TagSet.empty(), at + 5).atMs());
    assertFalse(rules.expiresNoncurrent());
  }
}
