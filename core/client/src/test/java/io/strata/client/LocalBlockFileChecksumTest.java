package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockChecksums;
import io.strata.common.BlockFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A block file read on this host is checked against the checksums its worker keeps: reads of whole
 * chunks and of parts of chunks, into arrays and buffers, mapped or not, all refuse a changed chunk
 * and pass the others.
 */
class LocalBlockFileChecksumTest {
  @TempDir Path tier;

  private Path block(long id, byte[] bytes) throws IOException {
    Files.createDirectories(BlockFiles.committedDir(tier));
    Files.createDirectories(BlockFiles.checksumsDir(tier));
    BlockChecksums.builder()
        .update(bytes, 0, bytes.length)
        .build()
        .write(BlockFiles.checksums(tier, id));
    return Files.write(BlockFiles.committed(tier, id), bytes);
  }

  private static byte[] random(int n) {
    byte[] b = new byte[n];
    new Random(n).nextBytes(b);
    return b;
  }

  @Test
  void aChangedChunkIsRefusedWhicheverWayItIsRead() throws IOException {
    // One block under the mapping size, one over it.
    for (int size :
        new int[] {5 * BlockChecksums.CHUNK + 17, (int) LocalBlockFile.MAP_MIN + 5000}) {
      byte[] bytes = random(size);
      Path file = block(size, bytes);
      int chunk = BlockChecksums.CHUNK;
      try (var unused = new Closer(LocalBlockFile.open(file, size, true))) {
        byte[] all = new byte[size];
        assertTrue(unused.file.read(0, all, 0, size));
        assertArrayEquals(bytes, all);
      }
      byte[] changed = bytes.clone();
      changed[2 * chunk + 9] ^= 1;
      Files.write(file, changed);
      try (var c = new Closer(LocalBlockFile.open(file, size, true))) {
        byte[] part = new byte[100];
        // Chunks 0, 1 and 3 are whole; any read touching chunk 2 fails.
        assertTrue(c.file.read(chunk + 5, part, 0, 100));
        assertArrayEquals(Arrays.copyOfRange(bytes, chunk + 5, chunk + 105), part);
        assertThrows(IOException.class, () -> c.file.read(2L * chunk + 1, part, 0, 10));
        assertThrows(
            IOException.class, () -> c.file.read(chunk, new byte[3 * chunk], 0, 3 * chunk));
        assertThrows(
            IOException.class, () -> c.file.read(2L * chunk, ByteBuffer.allocateDirect(chunk)));
        assertThrows(IOException.class, () -> c.file.read(2L * chunk, ByteBuffer.allocate(chunk)));
        ByteBuffer fine = ByteBuffer.allocateDirect(chunk);
        assertTrue(c.file.read(3L * chunk, fine));
        assertArrayEquals(Arrays.copyOfRange(bytes, 3 * chunk, 4 * chunk), bytes(fine.flip()));
      }
      // Verification off: the bytes are what the file holds.
      try (var c = new Closer(LocalBlockFile.open(file, size, false))) {
        byte[] part = new byte[10];
        assertTrue(c.file.read(2L * chunk + 5, part, 0, 10));
        assertArrayEquals(Arrays.copyOfRange(changed, 2 * chunk + 5, 2 * chunk + 15), part);
      }
    }
  }

  @Test
  void aBlockWithoutChecksumsIsReadUnverified() throws IOException {
    byte[] bytes = random(70_000);
    Path file = block(7, bytes);
    Files.delete(BlockFiles.checksums(tier, 7));
    try (var c = new Closer(LocalBlockFile.open(file, bytes.length, true))) {
      byte[] all = new byte[bytes.length];
      assertTrue(c.file.read(0, all, 0, all.length));
      assertArrayEquals(bytes, all);
    }
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  /** Closes a block file at the end of a try block. */
  private record Closer(LocalBlockFile file) implements AutoCloseable {
    @Override
    public void close() {
      file.close();
    }
  }
}
