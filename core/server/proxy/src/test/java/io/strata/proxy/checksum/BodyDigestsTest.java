package io.strata.proxy.checksum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.SdkChecksum;

class BodyDigestsTest {
  private static final byte[] CHECK = "123456789".getBytes(StandardCharsets.US_ASCII);
  private static final HexFormat HEX = HexFormat.of();

  private static BodyDigests digest(byte[] data, boolean sha256, ChecksumAlgorithm algorithm) {
    BodyDigests d = BodyDigests.of(sha256, algorithm);
    d.update(data, 0, data.length);
    return d;
  }

  private static String checksumHex(byte[] data, ChecksumAlgorithm algorithm) {
    return HEX.formatHex(
        Base64.getDecoder().decode(digest(data, false, algorithm).checksum().value()));
  }

  @Test
  void everyAlgorithmGivesItsCatalogueCheckValue() {
    assertEquals("cbf43926", checksumHex(CHECK, ChecksumAlgorithm.CRC32));
    assertEquals("e3069283", checksumHex(CHECK, ChecksumAlgorithm.CRC32C));
    assertEquals("ae8b14860a799888", checksumHex(CHECK, ChecksumAlgorithm.CRC64NVME));
    assertEquals(
        "f7c3bc1d808e04732adf679965ccc34ca7ae3441", checksumHex(CHECK, ChecksumAlgorithm.SHA1));
    assertEquals(
        "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225",
        checksumHex(CHECK, ChecksumAlgorithm.SHA256));
    BodyDigests d = digest(CHECK, true, null);
    assertEquals("25f9e794323b453885f5181f1b624d0b", d.md5Hex());
    assertEquals("15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225", d.sha256Hex());
    assertEquals(9, d.length());
  }

  @Test
  void anEmptyBodyHasTheWellKnownDigests() {
    BodyDigests d = BodyDigests.of(true, ChecksumAlgorithm.CRC32);
    assertEquals("d41d8cd98f00b204e9800998ecf8427e", d.md5Hex());
    assertEquals("1B2M2Y8AsgTpgAmY7PhCfg==", d.md5Base64());
    assertEquals("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", d.sha256Hex());
    assertEquals("AAAAAA==", d.checksum().value());
  }

  @Test
  void agreesWithTheAwsSdkChecksumsWhateverTheChunking() {
    Map<ChecksumAlgorithm, software.amazon.awssdk.checksums.spi.ChecksumAlgorithm> sdk =
        Map.of(
            ChecksumAlgorithm.CRC32, DefaultChecksumAlgorithm.CRC32,
            ChecksumAlgorithm.CRC32C, DefaultChecksumAlgorithm.CRC32C,
            ChecksumAlgorithm.SHA1, DefaultChecksumAlgorithm.SHA1,
            ChecksumAlgorithm.SHA256, DefaultChecksumAlgorithm.SHA256);
    Random random = new Random(3);
    byte[] data = new byte[300_001];
    random.nextBytes(data);
    SdkChecksum sdkMd5 = SdkChecksum.forAlgorithm(DefaultChecksumAlgorithm.MD5);
    sdkMd5.update(data, 0, data.length);
    for (var e : sdk.entrySet()) {
      SdkChecksum expected = SdkChecksum.forAlgorithm(e.getValue());
      expected.update(data, 0, data.length);

      BodyDigests ours = BodyDigests.of(true, e.getKey());
      int off = 0;
      while (off < data.length) {
        int n = Math.min(1 + random.nextInt(20_000), data.length - off);
        if (random.nextBoolean()) {
          ByteBuffer direct = ByteBuffer.allocateDirect(n).put(data, off, n).flip();
          ours.update(direct);
          assertEquals(0, direct.remaining());
        } else {
          ours.update(data, off, n);
        }
        off += n;
      }
      assertEquals(
          Base64.getEncoder().encodeToString(expected.getChecksumBytes()),
          ours.checksum().value(),
          e.getKey().toString());
      assertEquals(Base64.getEncoder().encodeToString(sdkMd5.getChecksumBytes()), ours.md5Base64());
      assertEquals(data.length, ours.length());
    }
  }

  @Test
  void aSha256ChecksumIsThePayloadHashInBase64() {
    BodyDigests d = digest(CHECK, true, ChecksumAlgorithm.SHA256);
    assertEquals(d.sha256Hex(), HEX.formatHex(Base64.getDecoder().decode(d.checksum().value())));
  }

  @Test
  void contentMd5IsVerifiedAndItsFormChecked() {
    BodyDigests d = digest(CHECK, false, null);
    d.verifyContentMd5(
        Base64.getEncoder().encodeToString(HEX.parseHex("25f9e794323b453885f5181f1b624d0b")));

    S3Exception bad =
        assertThrows(S3Exception.class, () -> d.verifyContentMd5("1B2M2Y8AsgTpgAmY7PhCfg=="));
    assertEquals(S3ErrorCode.BAD_DIGEST, bad.code());
    String[] malformedValues = {"not-base64!", "AAAA", "", "JfnnlDI7RTiF9RgfG2JNCw==AA"};
    for (String malformed : malformedValues) {
      S3Exception e = assertThrows(S3Exception.class, () -> d.verifyContentMd5(malformed));
      assertEquals(S3ErrorCode.INVALID_DIGEST, e.code(), malformed);
    }
    assertEquals(
        S3ErrorCode.INVALID_DIGEST,
        assertThrows(S3Exception.class, () -> BodyDigests.decodeContentMd5(null)).code());
  }

  @Test
  void checksumsAreVerifiedAndTheirFormChecked() {
    BodyDigests d = digest(CHECK, false, ChecksumAlgorithm.CRC32);
    d.verifyChecksum(ChecksumAlgorithm.CRC32, "y/Q5Jg==");
    S3Exception bad =
        assertThrows(
            S3Exception.class, () -> d.verifyChecksum(ChecksumAlgorithm.CRC32, "AAAAAA=="));
    assertEquals(S3ErrorCode.BAD_DIGEST, bad.code());
    assertTrue(bad.getMessage().contains("CRC32"), bad.getMessage());
    S3Exception malformed =
        assertThrows(
            S3Exception.class, () -> d.verifyChecksum(ChecksumAlgorithm.CRC32, "AAAAAAAAAAA="));
    assertEquals(S3ErrorCode.INVALID_DIGEST, malformed.code());
    assertThrows(
        IllegalStateException.class,
        () -> d.verifyChecksum(ChecksumAlgorithm.SHA1, "+PvrrDgXZR6qjUWArKXJ3ePWB7Q="));
  }

  @Test
  void aSignedPayloadHashIsVerified() {
    BodyDigests d = digest(CHECK, true, null);
    d.verifyPayloadSha256("15E2B0D3C33891EBB0F1EF609EC419420C20E320CE94C65FBC8C3312448EB225");
    S3Exception e =
        assertThrows(
            S3Exception.class,
            () ->
                d.verifyPayloadSha256(
                    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assertEquals(S3ErrorCode.XAMZ_CONTENT_SHA256_MISMATCH, e.code());
  }

  @Test
  void noBytesAreAcceptedOnceAResultWasRead() {
    BodyDigests d = BodyDigests.md5Only();
    d.update(CHECK, 0, 4);
    d.md5();
    assertThrows(IllegalStateException.class, () -> d.update(CHECK, 0, 1));
    assertThrows(IllegalStateException.class, d::sha256Hex);
    assertThrows(IllegalStateException.class, d::checksum);
  }
}
