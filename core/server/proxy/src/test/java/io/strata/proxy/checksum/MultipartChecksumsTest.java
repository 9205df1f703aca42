package io.strata.proxy.checksum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.proxy.checksum.MultipartChecksums.PartChecksum;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class MultipartChecksumsTest {
  private static ChecksumValue whole(ChecksumAlgorithm a, byte[] data, int from, int to) {
    BodyDigests d = BodyDigests.of(false, a);
    d.update(data, from, to - from);
    return d.checksum();
  }

  @Test
  void theMultipartEtagIsTheMd5OfThePartMd5s() {
    // Worked example: part 1 is "Hello, " and part 2 is "World!".
    //   MD5("Hello, ") = c84cabbaebee9a9631c8be234ac64c26
    //   MD5("World!")  = e509465ef513154988e088d6ad3c21bf
    //   MD5(c84c...4c26 e509...21bf as 32 bytes) = 49efe0be9260fbd0e2fe86ecd0864260
    assertEquals(
        "49efe0be9260fbd0e2fe86ecd0864260-2",
        MultipartChecksums.etag(
            List.of("\"c84cabbaebee9a9631c8be234ac64c26\"", "e509465ef513154988e088d6ad3c21bf")));
    // One part still gets "-1": the MD5 of its MD5, not its MD5.
    String single = MultipartChecksums.etag(List.of("c84cabbaebee9a9631c8be234ac64c26"));
    assertEquals("-1", single.substring(32));
    assertEquals(BodyDigests.md5Only().md5Hex().length(), single.length() - 2);
  }

  @Test
  void refusesAnEtagThatIsNotAnMd5() {
    assertThrows(IllegalArgumentException.class, () -> MultipartChecksums.etag(List.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> MultipartChecksums.etag(List.of("49efe0be9260fbd0e2fe86ecd0864260-2")));
    assertThrows(
        IllegalArgumentException.class,
        () -> MultipartChecksums.etag(List.of("zzefe0be9260fbd0e2fe86ecd0864260")));
  }

  @Test
  void compositeSha256MatchesAValueMeasuredOnS3() {
    // Three parts uploaded to S3 with SHA256 answered these part checksums, and
    // CompleteMultipartUpload answered the composite below with ChecksumType COMPOSITE.
    ChecksumValue c =
        MultipartChecksums.composite(
            ChecksumAlgorithm.SHA256,
            List.of(
                "lcKa6Boe7a167tUCN5C4OaFygGSYD8MBnBARTrdL+1w=",
                "gHjhbUT4oo2tSCtSZJdlKi+jeNXJT+VImqdPXsXvkOc=",
                "4l9PQ3zOPZ0oGFvknFX+J4zZwE4WMzO+l3r8XrbWOeM="));
    assertEquals("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", c.value());
    assertEquals(ChecksumType.COMPOSITE, c.type());
    assertEquals("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=", c.valueWithoutPartCount());
  }

  @Test
  void aCompositeCrcIsTheCrcOfThePartCrcBytes() {
    byte[] one = "first part".getBytes(StandardCharsets.UTF_8);
    byte[] two = "second part".getBytes(StandardCharsets.UTF_8);
    for (ChecksumAlgorithm a :
        List.of(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.SHA1)) {
      String p1 = whole(a, one, 0, one.length).value();
      String p2 = whole(a, two, 0, two.length).value();
      byte[] concatenated = new byte[2 * a.length()];
      System.arraycopy(a.decode(p1), 0, concatenated, 0, a.length());
      System.arraycopy(a.decode(p2), 0, concatenated, a.length(), a.length());
      ChecksumValue c = MultipartChecksums.composite(a, List.of(p1, p2));
      assertEquals(whole(a, concatenated, 0, concatenated.length).value() + "-2", c.value());
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> MultipartChecksums.composite(ChecksumAlgorithm.CRC64NVME, List.of("AAAAAAAAAAA=")));
  }

  @Test
  void aFullObjectCrcFromThePartsEqualsTheCrcOfTheWholeObject() {
    Random random = new Random(5);
    byte[] data = new byte[3 * 1024 * 1024 + 17];
    random.nextBytes(data);
    // Parts of uneven sizes, one of them empty.
    int[] cuts = {0, 1024 * 1024, 1024 * 1024, 2 * 1024 * 1024 + 5, data.length};
    for (ChecksumAlgorithm a :
        List.of(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC32C, ChecksumAlgorithm.CRC64NVME)) {
      List<PartChecksum> parts = new ArrayList<>();
      for (int i = 0; i + 1 < cuts.length; i++) {
        parts.add(
            new PartChecksum(whole(a, data, cuts[i], cuts[i + 1]).value(), cuts[i + 1] - cuts[i]));
      }
      ChecksumValue combined = MultipartChecksums.fullObject(a, parts);
      assertEquals(whole(a, data, 0, data.length), combined, a.toString());
      assertEquals(combined, MultipartChecksums.objectChecksum(a, ChecksumType.FULL_OBJECT, parts));
      assertEquals(combined.value(), combined.valueWithoutPartCount());
    }
    assertThrows(
        IllegalArgumentException.class,
        () ->
            MultipartChecksums.fullObject(
                ChecksumAlgorithm.SHA256,
                List.of(new PartChecksum("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=", 1))));
  }

  @Test
  void combiningWithAnEmptyTailKeepsTheHead() {
    byte[] data = "abc".getBytes(StandardCharsets.US_ASCII);
    for (ChecksumAlgorithm a : List.of(ChecksumAlgorithm.CRC32, ChecksumAlgorithm.CRC64NVME)) {
      long head = Hasher.fromBigEndian(a.decode(whole(a, data, 0, 3).value()));
      assertEquals(head, CrcCombine.combine(a, head, 0, 0));
      long tail = Hasher.fromBigEndian(a.decode(whole(a, data, 1, 3).value()));
      long first = Hasher.fromBigEndian(a.decode(whole(a, data, 0, 1).value()));
      assertEquals(head, CrcCombine.combine(a, first, tail, 2));
    }
  }
}
