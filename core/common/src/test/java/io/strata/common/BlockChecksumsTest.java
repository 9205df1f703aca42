package io.strata.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checksums are the same however the bytes arrive, survive their file, and tell exactly which chunk
 * of a block file changed, was cut off or is missing.
 */
class BlockChecksumsTest {
  @TempDir Path dir;

  private static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void piecesOfAnySizeGiveTheChecksumsOfTheWhole() throws IOException {
    byte[] data = bytes(3 * BlockChecksums.CHUNK + 1234, 1);
    BlockChecksums whole = BlockChecksums.builder().update(data, 0, data.length).build();
    BlockChecksums.Builder pieces = BlockChecksums.builder();
    Random r = new Random(2);
    int at = 0;
    while (at < data.length) {
      int n = Math.min(data.length - at, 1 + r.nextInt(50_000));
      pieces.update(ByteBuffer.wrap(data, at, n));
      at += n;
    }
    assertEquals(-1, whole.firstDifference(pieces.build()));
    assertEquals(4, whole.chunks());
    assertEquals(1234, whole.chunkLength(3));
    Path file = Files.write(dir.resolve("block"), data);
    assertEquals(
        -1, whole.firstDifference(BlockChecksums.compute(file, ByteBuffer.allocate(7000))));
    Path kept = dir.resolve("kept");
    whole.write(kept);
    assertEquals(-1, whole.firstDifference(BlockChecksums.read(kept)));
    assertNull(BlockChecksums.read(dir.resolve("none")));
    Files.write(kept, new byte[] {1, 2, 3});
    assertThrows(IOException.class, () -> BlockChecksums.read(kept));
  }

  @Test
  void aChangedTruncatedOrEmptyBlockIsFoundAtItsChunk() throws IOException {
    byte[] data = bytes(2 * BlockChecksums.CHUNK + 10, 3);
    BlockChecksums c = BlockChecksums.builder().update(data, 0, data.length).build();
    Path file = Files.write(dir.resolve("block"), data);
    ByteBuffer scratch = ByteBuffer.allocateDirect(BlockChecksums.CHUNK);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      assertEquals(-1, c.verify(ch, 0, data.length, scratch));
    }
    data[BlockChecksums.CHUNK + 5] ^= 1;
    Files.write(file, data);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      // A read of the first chunk alone does not touch the damage.
      assertEquals(-1, c.verify(ch, 10, 100, scratch));
      assertEquals(1, c.verify(ch, 10, BlockChecksums.CHUNK, scratch));
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
      ch.truncate(BlockChecksums.CHUNK + 3);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      assertTrue(c.verify(ch, 0, data.length, scratch) >= 1);
    }
    BlockChecksums empty = BlockChecksums.builder().build();
    assertEquals(0, empty.chunks());
    assertEquals(0, empty.blockLength());
  }
}
