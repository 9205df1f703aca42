package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The policy of a browser POST upload, checked as S3 checks it. */
class PostPolicyTest {
  static final String AWS_EXAMPLE_POLICY = PostPolicyTestData.POLICY;

  private static String b64(String json) {
    return Base64.getEncoder().encodeToString(json.getBytes(StandardCharsets.UTF_8));
  }

  /** The example's fields, lower-cased and with ${filename} replaced, as PostObjects gives them. */
  private static Map<String, String> exampleFields() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("key", "user/user1/photo.jpg");
    f.put("acl", "public-read");
    f.put(
        "success_action_redirect",
        "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html");
    f.put("content-type", "image/jpeg");
    f.put("x-amz-meta-uuid", "14365123651274");
    f.put("x-amz-server-side-encryption", "AES256");
    f.put("x-amz-credential", "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request");
    f.put("x-amz-algorithm", "AWS4-HMAC-SHA256");
    f.put("x-amz-date", "20151229T000000Z");
    f.put("x-amz-meta-tag", "");
    f.put("policy", AWS_EXAMPLE_POLICY);
    f.put("x-amz-signature", "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e");
    f.put("bucket", "sigv4examplebucket");
    return f;
  }

  private static S3Exception refused(S3ErrorCode code, String message, Executable call) {
    S3Exception e = assertThrows(S3Exception.class, call);
    assertEquals(code, e.code(), e::getMessage);
    assertEquals(message, e.getMessage());
    return e;
  }

  @Test
  void theDocumentationsExampleAllowsItsOwnForm() {
    PostPolicy p = PostPolicy.parse(AWS_EXAMPLE_POLICY);
    assertEquals(Instant.parse("2015-12-30T12:00:00Z"), p.expiration());
    assertEquals(11, p.conditions().size());
    p.checkExpiration(Instant.parse("2015-12-30T11:59:59Z"));
    p.checkFields(exampleFields());
    assertNull(p.lengthRange());
  }

  @Test
  void anExpiredPolicyIsRefused() {
    PostPolicy p = PostPolicy.parse(AWS_EXAMPLE_POLICY);
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy expired.",
        () -> p.checkExpiration(Instant.parse("2015-12-30T12:00:00Z")));
  }

  @Test
  void aFailedConditionIsNamedAsThePolicyWroteIt() {
    PostPolicy p = PostPolicy.parse(AWS_EXAMPLE_POLICY);
    Map<String, String> f = exampleFields();
    f.put("key", "user/user2/photo.jpg");
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy Condition failed: [\"starts-with\", \"$key\","
            + " \"user/user1/\"]",
        () -> p.checkFields(f));
    Map<String, String> g = exampleFields();
    g.put("acl", "public-read-write");
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy Condition failed: {\"acl\": \"public-read\"}",
        () -> p.checkFields(g));
    Map<String, String> h = exampleFields();
    h.put("bucket", "another");
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy Condition failed: {\"bucket\":"
            + " \"sigv4examplebucket\"}",
        () -> p.checkFields(h));
  }

  @Test
  void everyFieldMustBeNamedByACondition() {
    PostPolicy p = PostPolicy.parse(AWS_EXAMPLE_POLICY);
    Map<String, String> f = exampleFields();
    f.put("x-amz-meta-extra", "1");
    f.put("cache-control", "no-cache");
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Extra input fields: x-amz-meta-extra, cache-control",
        () -> p.checkFields(f));
    // ... but for those S3 does not check.
    Map<String, String> g = exampleFields();
    g.put("x-ignore-submit", "Upload");
    g.put("file", "");
    p.checkFields(g);
  }

  @Test
  void aMissingFieldIsEmptyAndNamesCompareWithoutRegardToCase() {
    PostPolicy p =
        PostPolicy.parse(
            b64(
                "{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\": ["
                    + "[\"EQ\", \"$Key\", \"k\"], {\"X-Amz-Meta-Colour\": \"\"},"
                    + " [\"starts-with\", \"$success_action_status\", \"\"]]}"));
    p.checkFields(Map.of("key", "k"));
    p.checkFields(Map.of("key", "k", "success_action_status", "201"));
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy Condition failed: [\"EQ\", \"$Key\", \"k\"]",
        () -> p.checkFields(Map.of("key", "K")));
    refused(
        S3ErrorCode.ACCESS_DENIED,
        "Invalid according to Policy: Policy Condition failed: {\"X-Amz-Meta-Colour\": \"\"}",
        () -> p.checkFields(Map.of("key", "k", "x-amz-meta-colour", "red")));
  }

  @Test
  void contentLengthRangesIntersect() {
    PostPolicy p =
        PostPolicy.parse(
            b64(
                "{\"expiration\": \"2030-01-01T00:00:00.000Z\", \"conditions\": ["
                    + "[\"content-length-range\", 1, 1048576],"
                    + " [\"content-length-range\", \"10\", \"2000000\"]]}"));
    PostPolicy.LengthRange r = p.lengthRange();
    assertEquals(10, r.min());
    assertEquals(1048576, r.max());
    // A range names no field.
    p.checkFields(Map.of());
  }

  @Test
  void aPolicyThatIsNotOneIsInvalid() {
    refused(
        S3ErrorCode.INVALID_POLICY_DOCUMENT,
        "Invalid Policy: Policy missing expiration.",
        () -> PostPolicy.parse(b64("{\"conditions\": []}")));
    refused(
        S3ErrorCode.INVALID_POLICY_DOCUMENT,
        "Invalid Policy: Policy missing conditions.",
        () -> PostPolicy.parse(b64("{\"expiration\": \"2030-01-01T00:00:00Z\"}")));
    S3Exception e = assertThrows(S3Exception.class, () -> PostPolicy.parse("not base64 at all!"));
    assertEquals(S3ErrorCode.INVALID_POLICY_DOCUMENT, e.code());
    e = assertThrows(S3Exception.class, () -> PostPolicy.parse(b64("{\"expiration\": ")));
    assertEquals(S3ErrorCode.INVALID_POLICY_DOCUMENT, e.code());
    e =
        assertThrows(
            S3Exception.class,
            () -> PostPolicy.parse(b64("{\"expiration\": \"tomorrow\", \"conditions\": []}")));
    assertTrue(e.getMessage().contains("'tomorrow'"), e.getMessage());
    e =
        assertThrows(
            S3Exception.class,
            () ->
                PostPolicy.parse(
                    b64(
                        "{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\":"
                            + " [[\"ends-with\", \"$key\", \"x\"]]}")));
    assertTrue(e.getMessage().contains("unknown operator 'ends-with'"), e.getMessage());
    e =
        assertThrows(
            S3Exception.class,
            () ->
                PostPolicy.parse(
                    b64(
                        "{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\":"
                            + " [[\"eq\", \"key\", \"x\"]]}")));
    assertTrue(e.getMessage().contains("must start with '$'"), e.getMessage());
    e =
        assertThrows(
            S3Exception.class,
            () ->
                PostPolicy.parse(
                    b64(
                        "{\"expiration\": \"2030-01-01T00:00:00Z\", \"conditions\":"
                            + " [[\"content-length-range\", 10, 1]]}")));
    assertEquals(S3ErrorCode.INVALID_POLICY_DOCUMENT, e.code());
  }
}
