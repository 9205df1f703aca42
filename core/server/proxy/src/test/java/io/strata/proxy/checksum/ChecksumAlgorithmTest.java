package io.strata.proxy.checksum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ChecksumAlgorithmTest {
  @Test
  void namesHeadersAndElementsAsS3Does() {
    assertEquals("x-amz-checksum-crc32", ChecksumAlgorithm.CRC32.headerName());
    assertEquals("x-amz-checksum-crc32c", ChecksumAlgorithm.CRC32C.headerName());
    assertEquals("x-amz-checksum-crc64nvme", ChecksumAlgorithm.CRC64NVME.headerName());
    assertEquals("x-amz-checksum-sha1", ChecksumAlgorithm.SHA1.headerName());
    assertEquals("x-amz-checksum-sha256", ChecksumAlgorithm.SHA256.headerName());
    assertEquals("ChecksumCRC64NVME", ChecksumAlgorithm.CRC64NVME.xmlElement());
    assertEquals("ChecksumSHA256", ChecksumAlgorithm.SHA256.xmlElement());
  }

  @Test
  void parsesAlgorithmValuesIgnoringCase() {
    assertEquals(ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.fromValue("crc32c"));
    assertEquals(ChecksumAlgorithm.CRC64NVME, ChecksumAlgorithm.fromValue("CRC64NVME"));
    assertEquals(ChecksumAlgorithm.SHA256, ChecksumAlgorithm.fromValue(" Sha256 "));
  }

  @Test
  void refusesAnUnknownAlgorithmNamingIt() {
    S3Exception e = assertThrows(S3Exception.class, () -> ChecksumAlgorithm.fromValue("MD4"));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("'MD4'"), e.getMessage());
  }

  @Test
  void findsTheAlgorithmOfAChecksumHeaderOnly() {
    assertEquals(
        Optional.of(ChecksumAlgorithm.CRC32C),
        ChecksumAlgorithm.fromHeaderName("X-Amz-Checksum-CRC32C"));
    assertEquals(Optional.empty(), ChecksumAlgorithm.fromHeaderName("x-amz-checksum-type"));
    assertEquals(Optional.empty(), ChecksumAlgorithm.fromHeaderName("x-amz-checksum-algorithm"));
    assertEquals(Optional.empty(), ChecksumAlgorithm.fromHeaderName("x-amz-checksum-mode"));
    assertEquals(Optional.empty(), ChecksumAlgorithm.fromHeaderName("content-md5"));
    S3Exception e =
        assertThrows(
            S3Exception.class, () -> ChecksumAlgorithm.fromHeaderName("x-amz-checksum-xxhash64"));
    assertEquals(S3ErrorCode.INVALID_ARGUMENT, e.code());
  }

  @Test
  void refusesTwoDifferentChecksumHeadersOnOneRequest() {
    assertEquals(
        Optional.of(ChecksumAlgorithm.SHA1),
        ChecksumAlgorithm.fromHeaderNames(
            List.of(
                "host",
                "x-amz-checksum-sha1",
                "x-amz-sdk-checksum-algorithm",
                "x-amz-checksum-sha1")));
    assertEquals(Optional.empty(), ChecksumAlgorithm.fromHeaderNames(List.of("host")));
    S3Exception e =
        assertThrows(
            S3Exception.class,
            () ->
                ChecksumAlgorithm.fromHeaderNames(
                    List.of("x-amz-checksum-crc32", "x-amz-checksum-sha256")));
    assertEquals(S3ErrorCode.INVALID_REQUEST, e.code());
  }

  @Test
  void decodesOnlyBase64OfTheRightLength() {
    assertEquals(4, ChecksumAlgorithm.CRC32.decode("y/Q5Jg==").length);
    for (String bad : new String[] {"", "not base64!", "AAAAAAAAAAA=", "y/Q5"}) {
      S3Exception e = assertThrows(S3Exception.class, () -> ChecksumAlgorithm.CRC32.decode(bad));
      assertEquals(S3ErrorCode.INVALID_DIGEST, e.code(), bad);
    }
    assertThrows(S3Exception.class, () -> ChecksumAlgorithm.CRC32.decode(null));
  }

  @Test
  void multipartTypesFollowS3sTable() {
    assertTrue(ChecksumAlgorithm.CRC32.supports(ChecksumType.COMPOSITE));
    assertTrue(ChecksumAlgorithm.CRC32C.supports(ChecksumType.FULL_OBJECT));
    assertFalse(ChecksumAlgorithm.CRC64NVME.supports(ChecksumType.COMPOSITE));
    assertTrue(ChecksumAlgorithm.CRC64NVME.supports(ChecksumType.FULL_OBJECT));
    assertFalse(ChecksumAlgorithm.SHA1.supports(ChecksumType.FULL_OBJECT));
    assertFalse(ChecksumAlgorithm.SHA256.supports(ChecksumType.FULL_OBJECT));

    assertEquals(
        ChecksumType.FULL_OBJECT,
        ChecksumType.forMultipartUpload(ChecksumAlgorithm.CRC64NVME, null));
    assertEquals(
        ChecksumType.COMPOSITE, ChecksumType.forMultipartUpload(ChecksumAlgorithm.CRC32, null));
    assertEquals(
        ChecksumType.FULL_OBJECT,
        ChecksumType.forMultipartUpload(ChecksumAlgorithm.CRC32, ChecksumType.FULL_OBJECT));
    assertEquals(
        ChecksumType.COMPOSITE, ChecksumType.forMultipartUpload(ChecksumAlgorithm.SHA256, null));
    assertEquals(
        S3ErrorCode.INVALID_REQUEST,
        assertThrows(
                S3Exception.class,
                () ->
                    ChecksumType.forMultipartUpload(
                        ChecksumAlgorithm.SHA1, ChecksumType.FULL_OBJECT))
            .code());
    assertEquals(
        S3ErrorCode.INVALID_REQUEST,
        assertThrows(
                S3Exception.class,
                () ->
                    ChecksumType.forMultipartUpload(
                        ChecksumAlgorithm.CRC64NVME, ChecksumType.COMPOSITE))
            .code());
  }

  @Test
  void parsesChecksumTypes() {
    assertEquals(ChecksumType.FULL_OBJECT, ChecksumType.fromValue("full_object"));
    assertEquals(ChecksumType.COMPOSITE, ChecksumType.fromValue("COMPOSITE"));
    assertEquals(
        S3ErrorCode.INVALID_ARGUMENT,
        assertThrows(S3Exception.class, () -> ChecksumType.fromValue("PARTIAL")).code());
  }
}
