package io.strata.proxy.checksum;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Crc64NvmeTest {
  private static long crc(byte[] data) {
    Crc64Nvme c = new Crc64Nvme();
    c.update(data, 0, data.length);
    return c.getValue();
  }

  /** The definition, one bit at a time: slow, obviously right, independent of the tables. */
  private static long bitwise(byte[] data) {
    long crc = ~0L;
    for (byte b : data) {
      crc ^= b & 0xff;
      for (int i = 0; i < 8; i++) {
        crc = (crc & 1) != 0 ? (crc >>> 1) ^ 0x9A6C9329AC4BC9B5L : crc >>> 1;
      }
    }
    return ~crc;
  }

  @Test
  void matchesTheCatalogueCheckValue() {
    assertEquals(0xAE8B14860A799888L, crc("123456789".getBytes(StandardCharsets.US_ASCII)));
  }

  @Test
  void matchesPublishedVectors() {
    // Vectors of the NVM Command Set specification and of the AWS checksum library's tests.
    assertEquals(0L, crc(new byte[0]));
    assertEquals(0xCF3473434D4ECF3BL, crc(new byte[32]));
    byte[] ascending = new byte[32];
    for (int i = 0; i < 32; i++) {
      ascending[i] = (byte) i;
    }
    assertEquals(0xB9D9D4A8492CBD7FL, crc(ascending));
    assertEquals(0x6482D367EB22B64EL, crc(new byte[4096]));
    byte[] ones = new byte[4096];
    Arrays.fill(ones, (byte) 0xff);
    assertEquals(0xC0DDBA7302ECA3ACL, crc(ones));
  }

  @Test
  void matchesTheValueS3ClientsSendForAKnownString() {
    byte[] value = Hasher.bigEndian(crc("Hello, World!\n".getBytes(StandardCharsets.UTF_8)), 8);
    assertEquals("SoXXbx67KpE=", ChecksumAlgorithm.CRC64NVME.encode(value));
  }

  @Test
  void slicedTablesAgreeWithTheBitwiseDefinition() {
    Random random = new Random(7);
    for (int len : new int[] {1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4097}) {
      byte[] data = new byte[len];
      random.nextBytes(data);
      assertEquals(bitwise(data), crc(data), "length " + len);
    }
  }

  @Test
  void anySplitOfTheInputGivesTheSameValue() {
    Random random = new Random(11);
    byte[] data = new byte[100_000];
    random.nextBytes(data);
    long whole = crc(data);

    Crc64Nvme pieces = new Crc64Nvme();
    int off = 0;
    while (off < data.length) {
      int n = Math.min(random.nextInt(300), data.length - off);
      if (n == 1) {
        pieces.update(data[off]);
      } else if (n % 3 == 0) {
        ByteBuffer direct = ByteBuffer.allocateDirect(n).put(data, off, n).flip();
        pieces.update(direct);
        assertEquals(0, direct.remaining());
      } else if (n % 3 == 1) {
        pieces.update(ByteBuffer.wrap(data, off, n).slice());
      } else {
        pieces.update(data, off, n);
      }
      off += n;
    }
    assertEquals(whole, pieces.getValue());

    pieces.reset();
    pieces.update(data, 0, data.length);
    assertEquals(whole, pieces.getValue());
  }
}
