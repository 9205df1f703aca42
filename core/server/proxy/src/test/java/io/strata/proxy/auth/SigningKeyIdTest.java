package io.strata.proxy.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The cache key of signing keys never puts its secret into text a log line could print. */
class SigningKeyIdTest {
  private static final String SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

  @Test
  void itsTextLeavesTheSecretOut() {
    SigV4Verifier.SigningKeyId id = new SigV4Verifier.SigningKeyId(SECRET, "20261129", "us-east-1");
    String text = id.toString();
    assertFalse(text.contains(SECRET), text);
    assertFalse(String.format("cache miss for %s", id).contains(SECRET));
    assertTrue(text.contains("20261129") && text.contains("us-east-1"), text);
  }

  @Test
  void keysOfOtherSecretsStayApart() {
    assertEquals(
        new SigV4Verifier.SigningKeyId(SECRET, "20261129", "us-east-1"),
        new SigV4Verifier.SigningKeyId(SECRET, "20261129", "us-east-1"));
    assertNotEquals(
        new SigV4Verifier.SigningKeyId(SECRET, "20261129", "us-east-1"),
        new SigV4Verifier.SigningKeyId(SECRET + "x", "20261129", "us-east-1"));
  }
}
