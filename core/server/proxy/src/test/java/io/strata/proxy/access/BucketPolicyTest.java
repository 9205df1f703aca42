package io.strata.proxy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.access.BucketPolicy.Decision;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class BucketPolicyTest {
  private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

  private static BucketPolicy.Request get(String user, String key) {
    return new BucketPolicy.Request(
        user, "s3:GetObject", "arn:aws:s3:::data/" + key, null, LOOPBACK, false);
  }

  private static BucketPolicy.Request list(String prefix, InetAddress from, boolean tls) {
    return new BucketPolicy.Request("ann", "s3:ListBucket", "arn:aws:s3:::data", prefix, from, tls);
  }

  @Test
  void denyWinsOverAllowAndNothingMatchingLeavesItToTheModes() {
    BucketPolicy p =
        BucketPolicy.parse(
            """
            {"Statement": [
              {"Effect": "Allow", "Principal": "*", "Action": "s3:Get*",
               "Resource": "arn:aws:s3:::data/*"},
              {"Sid": "Secret", "Effect": "Deny", "Principal": {"AWS": ["eve"]},
               "Action": "s3:*", "Resource": "arn:aws:s3:::data/secret/*"}
            ]}""",
            "data");
    assertEquals(Decision.ALLOW, p.decide(get("ann", "secret/x")));
    assertEquals(Decision.DENY, p.decide(get("eve", "secret/x")));
    assertEquals("Secret", p.denyingStatement(get("eve", "secret/x")));
    assertEquals(Decision.ALLOW, p.decide(get(null, "open")));
    assertEquals(
        Decision.NONE,
        p.decide(
            new BucketPolicy.Request(
                "ann", "s3:PutObject", "arn:aws:s3:::data/x", null, LOOPBACK, false)));
  }

  @Test
  void conditionsOnPrefixAddressAndTransport() throws Exception {
    BucketPolicy p =
        BucketPolicy.parse(
            """
            {"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:ListBucket",
              "Resource": "arn:aws:s3:::data",
              "Condition": {"StringLike": {"s3:prefix": "home/ann/*"},
                            "IpAddress": {"aws:SourceIp": "10.1.0.0/16"},
                            "Bool": {"aws:SecureTransport": "false"}}}]}""",
            "data");
    InetAddress inside = InetAddress.getByName("10.1.2.3");
    InetAddress outside = InetAddress.getByName("10.2.0.1");
    assertEquals(Decision.ALLOW, p.decide(list("home/ann/x", inside, false)));
    assertEquals(Decision.NONE, p.decide(list("home/ann/x", outside, false)));
    assertEquals(Decision.NONE, p.decide(list("home/bob/", inside, false)));
    assertEquals(Decision.NONE, p.decide(list("home/ann/", inside, true)));
  }

  @Test
  void whatIsNotSupportedIsRefusedByName() {
    String[][] cases = {
      {"{\"Statement\": []}", "no Statement"},
      {"not json", "not valid JSON"},
      {
        "{\"Statement\": {\"Effect\": \"Allow\", \"NotPrincipal\": \"*\", \"Action\": \"s3:*\","
            + " \"Resource\": \"arn:aws:s3:::data/*\"}}",
        "NotPrincipal"
      },
      {
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"s3:*\","
            + " \"Resource\": \"arn:aws:s3:::data/*\", \"Condition\": {\"DateLessThan\":"
            + " {\"aws:CurrentTime\": \"2030-01-01T00:00:00Z\"}}}}",
        "DateLessThan"
      },
      {
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\":"
            + " \"ec2:*\", \"Resource\": \"arn:aws:s3:::data/*\"}}",
        "ec2:*"
      },
      {
        "{\"Statement\": {\"Effect\": \"Allow\", \"Principal\": \"*\", \"Action\": \"s3:*\","
            + " \"Resource\": \"arn:aws:s3:::other/*\"}}",
        "not in this bucket"
      }
    };
    for (String[] bad : cases) {
      S3Exception e = assertThrows(S3Exception.class, () -> BucketPolicy.parse(bad[0], "data"));
      assertEquals(S3ErrorCode.MALFORMED_POLICY, e.code());
      assertTrue(e.getMessage().contains(bad[1]), e.getMessage());
    }
  }

  @Test
  void wildcardsMatchRunsAndSingleCharacters() {
    assertTrue(Wildcards.matches("a*c", "abbbc"));
    assertTrue(Wildcards.matches("a?c", "abc"));
    assertTrue(Wildcards.matches("*", ""));
    assertTrue(Wildcards.matches("data/*/x", "data/a/b/x"));
    assertFalse(Wildcards.matches("a?c", "ac"));
    assertFalse(Wildcards.matches("ab", "abc"));
  }
}
