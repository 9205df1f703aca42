package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netty.handler.codec.http.HttpHeaders;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What a POST form's fields stand for, and how its answer is addressed. */
class PostObjectsTest {
  @Test
  void fieldsBecomeThePutObjectHeadersTheyStandFor() {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("key", "a/b");
    f.put("acl", "public-read");
    f.put("content-type", "image/png");
    f.put("cache-control", "max-age=60");
    f.put("x-amz-meta-colour", "bleu clair é");
    f.put("success_action_status", "201");
    f.put("x-amz-checksum-crc32", "AAAAAA==");
    f.put(
        "tagging",
        "<Tagging><TagSet><Tag><Key>team</Key><Value>ml</Value></Tag></TagSet></Tagging>");
    f.put("policy", "e30=");
    HttpHeaders h = PostObjects.headers(f);
    assertEquals("public-read", h.get("x-amz-acl"));
    assertEquals("image/png", h.get("Content-Type"));
    assertEquals("max-age=60", h.get("Cache-Control"));
    assertEquals("team=ml", h.get("x-amz-tagging"));
    assertEquals("AAAAAA==", h.get("x-amz-checksum-crc32"));
    // The value's UTF-8 bytes, one char a byte, as a header sent raw carries them.
    assertEquals(
        "bleu clair é",
        new String(
            h.get("x-amz-meta-colour").getBytes(StandardCharsets.ISO_8859_1),
            StandardCharsets.UTF_8));
    assertNull(h.get("key"));
    assertNull(h.get("policy"));
    assertNull(h.get("success_action_status"));
    assertEquals(ChecksumAlgorithm.CRC32, PostObjects.checksumAlgorithm(h));
    // Stored as a PUT's headers would be.
    assertNotNull(ObjectMetadata.fromRequest(h).get("user.colour"));
  }

  @Test
  void aLineBreakInAFieldThatBecomesAHeaderIsRefused() {
    S3Exception e =
        assertThrows(
            S3Exception.class, () -> PostObjects.headers(Map.of("x-amz-meta-a", "one\r\ntwo")));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, e.code());
    assertEquals("x-amz-meta-a", e.details().get("ArgumentName"));
    S3Exception name =
        assertThrows(S3Exception.class, () -> PostObjects.headers(Map.of("x-amz-meta-a b", "one")));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, name.code());
    // Fields that are no header may hold anything.
    PostObjects.headers(Map.of("x-ignore-notes", "one\r\ntwo"));
  }

  @Test
  void theFileNameIsWhatFollowsTheLastSlash() {
    assertEquals("file.txt", PostObjects.baseName("C:\\Program Files\\directory1\\file.txt"));
    assertEquals("b.jpg", PostObjects.baseName("/home/a/b.jpg"));
    assertEquals("plain", PostObjects.baseName("plain"));
    assertEquals("", PostObjects.baseName(null));
  }

  @Test
  void onlyAnAbsoluteHttpUrlIsARedirect() {
    assertNotNull(PostObjects.redirectTarget("https://example.com/done.html"));
    assertNotNull(PostObjects.redirectTarget("http://example.com/done?x=1"));
    assertNull(PostObjects.redirectTarget("/relative"));
    assertNull(PostObjects.redirectTarget("javascript:alert(1)"));
    assertNull(PostObjects.redirectTarget("http://exa mple.com/"));
    assertNull(PostObjects.redirectTarget(""));
    assertNull(PostObjects.redirectTarget(null));
  }
}
