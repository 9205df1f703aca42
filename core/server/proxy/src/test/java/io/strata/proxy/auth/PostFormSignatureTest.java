package io.strata.proxy.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.common.auth.ProxyCredentials;
import io.strata.common.auth.ProxyCredentials.Credential;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** The signature of a browser POST form: the policy signed with the credential's signing key. */
class PostFormSignatureTest {
  /** The credentials of S3's documented example ("Browser-Based Upload using HTTP POST"). */
  private static final String EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE";

  private static final String EXAMPLE_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  private static final String EXAMPLE_SIGNATURE =
      "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e";

  /** The example's policy in its exact base64 form, which its signature signs. */
  private static final String EXAMPLE_POLICY = io.strata.proxy.s3.PostPolicyTestData.POLICY;

  private static SignatureVerifier verifier(boolean sigV2) {
    ProxyCredentials credentials =
        ProxyCredentials.of(List.of(new Credential(EXAMPLE_KEY, EXAMPLE_SECRET, "carol")));
    return new SignatureVerifier(
        credentials::find,
        Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC),
        true,
        Duration.ofMinutes(15),
        sigV2);
  }

  private static Map<String, String> exampleFields() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("key", "user/user1/photo.jpg");
    f.put("x-amz-credential", EXAMPLE_KEY + "/20151229/us-east-1/s3/aws4_request");
    f.put("x-amz-algorithm", "AWS4-HMAC-SHA256");
    f.put("x-amz-date", "20151229T000000Z");
    f.put("policy", EXAMPLE_POLICY);
    f.put("x-amz-signature", EXAMPLE_SIGNATURE);
    return f;
  }

  private static S3Exception refused(S3ErrorCode code, Map<String, String> fields) {
    S3Exception e = assertThrows(S3Exception.class, () -> verifier(true).verifyPostForm(fields));
    assertEquals(code, e.code(), e::getMessage);
    return e;
  }

  @Test
  void theDocumentationsExampleIsSignedByItsKey() {
    AuthResult auth = verifier(true).verifyPostForm(exampleFields());
    assertEquals("carol", auth.user());
    assertEquals(EXAMPLE_KEY, auth.accessKey());
    assertFalse(auth.anonymous());
    assertEquals(PayloadMode.UNSIGNED, auth.payloadMode());
  }

  @Test
  void aFormWithoutPolicyOrSignatureIsUnsigned() {
    assertNull(verifier(true).verifyPostForm(Map.of("key", "k", "acl", "public-read")));
  }

  @Test
  void anotherPolicyOrSignatureDoesNotMatch() {
    Map<String, String> f = exampleFields();
    f.put("x-amz-signature", EXAMPLE_SIGNATURE.replace('8', '9'));
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, f);
    Map<String, String> g = exampleFields();
    // The policy is signed as sent: the same JSON in other base64 (a line break) is another one.
    g.put("policy", EXAMPLE_POLICY.substring(0, 76) + "\n" + EXAMPLE_POLICY.substring(76));
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, g);
    Map<String, String> h = exampleFields();
    h.put("x-amz-credential", EXAMPLE_KEY + "/20151230/us-east-1/s3/aws4_request");
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, h);
  }

  @Test
  void anUnknownKeyIsNamed() {
    Map<String, String> f = exampleFields();
    f.put("x-amz-credential", "AKIANOBODY/20151229/us-east-1/s3/aws4_request");
    S3Exception e = refused(S3ErrorCode.INVALID_ACCESS_KEY_ID, f);
    assertEquals(true, e.getMessage().contains("AKIANOBODY"));
  }

  @Test
  void missingAndMalformedFieldsAreNamed() {
    for (String name :
        List.of("x-amz-credential", "x-amz-algorithm", "x-amz-date", "policy", "x-amz-signature")) {
      Map<String, String> f = exampleFields();
      f.remove(name);
      S3Exception e = refused(S3ErrorCode.INVALID_ARGUMENT, f);
      assertEquals(name, e.details().get("ArgumentName"));
      assertEquals(
          "Bucket POST must contain a field named '"
              + name
              + "'.  If it is specified, please check the order of the fields.",
          e.getMessage());
    }
    Map<String, String> f = exampleFields();
    f.put("x-amz-algorithm", "AWS4-HMAC-SHA1");
    assertEquals(
        "x-amz-algorithm", refused(S3ErrorCode.INVALID_ARGUMENT, f).details().get("ArgumentName"));
    Map<String, String> g = exampleFields();
    g.put("x-amz-credential", EXAMPLE_KEY + "/20151229/us-east-1/ec2/aws4_request");
    assertEquals(
        "x-amz-credential", refused(S3ErrorCode.INVALID_ARGUMENT, g).details().get("ArgumentName"));
    Map<String, String> h = exampleFields();
    h.put("x-amz-date", "2015-12-29");
    assertEquals(
        "x-amz-date", refused(S3ErrorCode.INVALID_ARGUMENT, h).details().get("ArgumentName"));
  }

  @Test
  void signatureVersion2FormsSignThePolicyWithHmacSha1() throws Exception {
    Mac mac = Mac.getInstance("HmacSHA1");
    mac.init(new SecretKeySpec(EXAMPLE_SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
    String signature =
        Base64.getEncoder()
            .encodeToString(mac.doFinal(EXAMPLE_POLICY.getBytes(StandardCharsets.UTF_8)));
    Map<String, String> f = new LinkedHashMap<>();
    f.put("key", "k");
    f.put("awsaccesskeyid", EXAMPLE_KEY);
    f.put("policy", EXAMPLE_POLICY);
    f.put("signature", signature);
    assertEquals("carol", verifier(true).verifyPostForm(f).user());
    S3Exception off = assertThrows(S3Exception.class, () -> verifier(false).verifyPostForm(f));
    assertEquals(S3ErrorCode.INVALID_REQUEST, off.code());
    f.put("signature", "AAAA" + signature.substring(4));
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, f);
    f.put("x-amz-signature", EXAMPLE_SIGNATURE);
    refused(S3ErrorCode.INVALID_ARGUMENT, f);
  }
}
