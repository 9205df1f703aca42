package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TagSetTest {
  @Test
  void parsesTheTaggingHeader() {
    assertEquals(Map.of("k1", "v1", "k2", "v2"), TagSet.fromHeader("k1=v1&k2=v2").asMap());
    assertEquals(
        List.of("k1", "k2"), List.copyOf(TagSet.fromHeader("k1=v1&k2=v2").asMap().keySet()));
    TagSet t = TagSet.fromHeader("a+b=c%20d&%C3%A9=%26%3D%2B&flag&empty=");
    assertEquals(
        List.of(
            new TagSet.Tag("a b", "c d"),
            new TagSet.Tag("\u00e9", "&=+"),
            new TagSet.Tag("flag", ""),
            new TagSet.Tag("empty", "")),
        t.tags());
    assertTrue(TagSet.fromHeader("").isEmpty());
    assertTrue(TagSet.fromHeader(null).isEmpty());
  }

  @Test
  void refusesDuplicateKeysAndBadEncodingInTheHeaderAsS3Does() {
    S3Exception dup = assertThrows(S3Exception.class, () -> TagSet.fromHeader("a=&a="));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, dup.code());
    assertTrue(
        dup.getMessage()
            .startsWith(
                "The header 'x-amz-tagging' shall be encoded as "
                    + "UTF-8 then URLEncoded URL query parameters without tag name duplicates."));
    assertEquals(
        S3ErrorCode.INVALID_ARGUMENT,
        assertThrows(S3Exception.class, () -> TagSet.fromHeader("a=%zz")).code());
    assertEquals(
        S3ErrorCode.INVALID_TAG,
        assertThrows(S3Exception.class, () -> TagSet.fromHeader("=v")).code());
  }

  @Test
  void appliesTheObjectTagLimits() {
    List<TagSet.Tag> ten = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      ten.add(new TagSet.Tag("k" + i, "v"));
    }
    assertEquals(10, new TagSet(ten).tags().size());
    ten.add(new TagSet.Tag("k10", "v"));
    S3Exception e = assertThrows(S3Exception.class, () -> new TagSet(ten));
    assertEquals("InvalidTag", e.code().code());

    // Lengths count Unicode characters, not UTF-16 units or bytes.
    String emoji = "\uD83D\uDE00";
    new TagSet(List.of(new TagSet.Tag(emoji.repeat(128), emoji.repeat(256))));
    assertThrows(
        S3Exception.class, () -> new TagSet(List.of(new TagSet.Tag(emoji.repeat(129), ""))));
    assertThrows(
        S3Exception.class, () -> new TagSet(List.of(new TagSet.Tag("k", emoji.repeat(257)))));
  }

  @Test
  void theHeaderFormRoundTrips() {
    TagSet t =
        new TagSet(
            List.of(
                new TagSet.Tag("a b", "c+d"),
                new TagSet.Tag("x&y=z", "%"),
                new TagSet.Tag("\u00e9\uD83D\uDE00", ""),
                new TagSet.Tag("path/with:colon", "@-_.~")));
    String header = t.toHeader();
    assertEquals(
        "a%20b=c%2Bd&x%26y%3Dz=%25&%C3%A9%F0%9F%98%80=&path%2Fwith%3Acolon=%40-_.~", header);
    assertEquals(t, TagSet.fromHeader(header));
    assertEquals("", TagSet.empty().toHeader());
  }
}
