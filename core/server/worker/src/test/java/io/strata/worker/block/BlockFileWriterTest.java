package io.strata.worker.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Block files written with and without Direct I/O read back exactly, at their true length. */
class BlockFileWriterTest {
  private static final Logger LOG = LoggerFactory.getLogger(BlockFileWriterTest.class);
  private static final int CHUNK = 4 << 20;
  private static final long[] LENGTHS = {0, 1, 4095, 4096, 4097, 3L * CHUNK + 17};
  private static final Path SHM = Path.of("/dev/shm");

  @TempDir Path dir;

  private static ByteBuffer alignedChunk(int size) {
    return ByteBuffer.allocateDirect(size + BlockFileWriter.ALIGNMENT - 1)
        .alignedSlice(BlockFileWriter.ALIGNMENT);
  }

  private static byte[] content(long length, long seed) {
    byte[] b = new byte[(int) length];
    new Random(seed).nextBytes(b);
    return b;
  }

  /** Writes {@code data} in chunks of {@code chunkSize}, as a copy thread does. */
  private static void writeAll(BlockFileWriter writer, byte[] data, ByteBuffer chunk, int chunkSize)
      throws IOException {
    for (int done = 0; done < data.length; done += chunkSize) {
      int n = Math.min(chunkSize, data.length - done);
      chunk.clear();
      chunk.put(data, done, n).flip();
      writer.write(chunk);
      assertFalse(chunk.hasRemaining());
    }
  }

  /** Writes every test length into {@code folder}; returns whether Direct I/O was used. */
  private static boolean roundTripEveryLength(BlockFileOpener opener, Path folder, int chunkSize)
      throws IOException {
    ByteBuffer chunk = alignedChunk(chunkSize);
    Boolean direct = null;
    for (long length : LENGTHS) {
      byte[] data = content(length, length);
      Path file = folder.resolve("block-" + length);
      try (BlockFileWriter writer = opener.open(file, "SSD", folder, false)) {
        writeAll(writer, data, chunk, chunkSize);
        assertEquals(length, writer.length());
        if (direct == null) {
          direct = writer.isDirect();
        }
        assertEquals(direct, writer.isDirect(), "one folder, one write path");
      }
      assertEquals(length, Files.size(file), "file length after close, " + length + " bytes");
      assertArrayEquals(data, Files.readAllBytes(file), "content of " + length + " bytes");
    }
    return direct;
  }

  @ParameterizedTest
  @ValueSource(ints = {CHUNK, 64 << 10})
  void blocksOnTheDiskTmpFolderReadBackExactly(int chunkSize) throws IOException {
    BlockFileOpener opener = new BlockFileOpener(true);
    boolean direct = roundTripEveryLength(opener, dir, chunkSize);
    // Either path is correct; the two facts about it must agree.
    assertNotEquals(direct, opener.refusesDirect(dir));
    assertEquals(direct ? 0 : 1, opener.refusalsLogged());
    LOG.info("write path on {}: {}", dir, direct ? "O_DIRECT" : "page cache (fallback)");
  }

  @Test
  void blocksOnDevShmReadBackExactlyAndAnyRefusalIsLoggedOnce() throws IOException {
    assertTrue(Files.isDirectory(SHM) && Files.isWritable(SHM), "/dev/shm must be usable");
    Path folder = Files.createTempDirectory(SHM, "strata-direct-test-");
    try {
      BlockFileOpener opener = new BlockFileOpener(true);
      boolean direct = roundTripEveryLength(opener, folder, CHUNK);
      assertNotEquals(direct, opener.refusesDirect(folder));
      // Six files went to the folder; a refusing tmpfs is reported once, not six times.
      assertEquals(direct ? 0 : 1, opener.refusalsLogged());
      // tmpfs refuses O_DIRECT before Linux 6.6 and takes it since.
      LOG.info(
          "write path on {}: {}",
          folder,
          direct ? "O_DIRECT (this kernel's tmpfs takes it)" : "page cache (fallback)");
    } finally {
      try (Stream<Path> walk = Files.walk(folder)) {
        for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void folderRefusingDirectIoFallsBackAndIsLoggedOncePerFolder() throws IOException {
    AtomicInteger directOpens = new AtomicInteger();
    BlockFileOpener opener =
        new BlockFileOpener(
            true,
            file -> {
              directOpens.incrementAndGet();
              throw new IOException(file + ": Invalid argument");
            });
    Path mem = Files.createDirectories(dir.resolve("mem"));
    Path ssd = Files.createDirectories(dir.resolve("ssd"));
    assertFalse(roundTripEveryLength(opener, mem, CHUNK));
    assertFalse(roundTripEveryLength(opener, ssd, 64 << 10));
    assertTrue(opener.refusesDirect(mem));
    assertTrue(opener.refusesDirect(ssd));
    assertEquals(2, opener.refusalsLogged(), "one line per refusing folder");
    assertEquals(2, directOpens.get(), "a refusing folder is not asked again");
  }

  @Test
  void directIoTurnedOffWritesThroughThePageCache() throws IOException {
    AtomicInteger directOpens = new AtomicInteger();
    BlockFileOpener opener =
        new BlockFileOpener(
            false,
            file -> {
              directOpens.incrementAndGet();
              throw new AssertionError("O_DIRECT tried although turned off");
            });
    assertFalse(roundTripEveryLength(opener, dir, CHUNK));
    assertEquals(0, directOpens.get());
    assertEquals(0, opener.refusalsLogged());
    assertFalse(opener.refusesDirect(dir));
  }

  @Test
  void directWriterRejectsBuffersItCannotUse() throws IOException {
    BlockFileOpener opener = new BlockFileOpener(true);
    Path file = dir.resolve("block");
    try (BlockFileWriter writer = opener.open(file, "SSD", dir, true)) {
      if (!writer.isDirect()) {
        // This machine's /tmp refuses O_DIRECT: any buffer goes through the page cache.
        writer.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        assertEquals(3, writer.length());
        return;
      }
      assertThrows(
          IllegalArgumentException.class,
          () -> writer.write(ByteBuffer.wrap(new byte[4096])),
          "heap buffer");
      ByteBuffer unaligned = alignedChunk(8192).position(1);
      assertThrows(
          IllegalArgumentException.class, () -> writer.write(unaligned), "misaligned position");
      ByteBuffer tight = alignedChunk(4096).limit(4096).slice(0, 100);
      assertEquals(100, tight.capacity());
      assertThrows(
          IllegalArgumentException.class,
          () -> writer.write(tight),
          "no room to pad the last chunk");
      ByteBuffer chunk = alignedChunk(8192);
      chunk.put(new byte[5000]).flip();
      writer.write(chunk);
      chunk.clear().limit(4096);
      assertThrows(
          IllegalStateException.class,
          () -> writer.write(chunk),
          "nothing may follow a padded chunk");
      assertEquals(5000, writer.length());
    }
    assertEquals(5000, Files.size(file));
  }
}
