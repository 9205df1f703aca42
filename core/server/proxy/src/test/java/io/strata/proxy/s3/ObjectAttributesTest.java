package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.xml.ObjectAttributesResult;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** GetObjectAttributes reads its header and pages parts as S3 does. */
class ObjectAttributesTest {
  @Test
  void theHeaderNamesAttributesInOneOrSeveralValues() {
    assertEquals(
        Set.of("ETag", "ObjectSize", "Checksum"),
        ObjectAttributes.asked(List.of("ETag, ObjectSize", "Checksum,ETag")));
    S3Exception unknown =
        assertThrows(S3Exception.class, () -> ObjectAttributes.asked(List.of("ETag,Size")));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, unknown.code());
    assertTrue(unknown.getMessage().contains("'Size'"), unknown::getMessage);
    assertEquals(
        S3ErrorCode.INVALID_REQUEST,
        assertThrows(S3Exception.class, () -> ObjectAttributes.asked(List.of(" , "))).code());
    assertEquals(
        S3ErrorCode.INVALID_REQUEST,
        assertThrows(S3Exception.class, () -> ObjectAttributes.asked(List.of())).code());
  }

  @Test
  void partsArePagedAfterTheMarker() {
    long[] lengths = {10, 20, 30};
    ObjectAttributesResult.Parts first = ObjectAttributes.page(lengths, 0, 2);
    assertEquals(
        List.of(new ObjectAttributesResult.Part(1, 10), new ObjectAttributesResult.Part(2, 20)),
        first.parts());
    assertTrue(first.truncated());
    assertEquals(2, first.nextPartNumberMarker());
    assertEquals(3, first.totalPartsCount());
    ObjectAttributesResult.Parts last = ObjectAttributes.page(lengths, 2, 2);
    assertEquals(List.of(new ObjectAttributesResult.Part(3, 30)), last.parts());
    assertFalse(last.truncated());
    for (int marker : new int[] {3, 7, Integer.MAX_VALUE}) {
      ObjectAttributesResult.Parts past = ObjectAttributes.page(lengths, marker, 1000);
      assertEquals(List.of(), past.parts());
      assertFalse(past.truncated());
      assertEquals(marker, past.nextPartNumberMarker());
    }
  }
}
