package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ByteRangeTest {
  @Test
  void rangesAreClippedToTheObject() {
    assertEquals(new ByteRange(100, 199), ByteRange.parse("bytes=100-199", 1000));
    assertEquals(new ByteRange(900, 999), ByteRange.parse("bytes=900-", 1000));
    assertEquals(new ByteRange(990, 999), ByteRange.parse("bytes=990-5000", 1000));
    assertEquals(new ByteRange(950, 999), ByteRange.parse("bytes=-50", 1000));
    assertNull(ByteRange.parse("bytes=5-3", 1000));
  }

  @Test
  void aRangeStartingPastTheEndIsUnsatisfiableOpenOrNot() {
    assertEquals(
        S3ErrorCode.INVALID_RANGE,
        assertThrows(S3Exception.class, () -> ByteRange.parse("bytes=2000-", 1000)).code());
    assertEquals(
        S3ErrorCode.INVALID_RANGE,
        assertThrows(S3Exception.class, () -> ByteRange.parse("bytes=1000-3000", 1000)).code());
  }
}
