package io.strata.underfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The buffer read every store inherits, over a store that has only the array read. */
class DefaultBufferReadTest {
  @TempDir Path dir;

  /** Reads through the local store's array read and counts the calls; nothing else works. */
  static final class ArrayOnlyStore implements UnderFileSystem {
    final LocalUnderFileSystem local = new LocalUnderFileSystem();
    int arrayReads;

    @Override
    public int read(String path, long position, byte[] buffer, int offset, int length)
        throws IOException {
      arrayReads++;
      return local.read(path, position, buffer, offset, length);
    }

    @Override
    public String scheme() {
      return "file";
    }

    @Override
    public UfsStatus getStatus(String path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean exists(String path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CloseableIterator<UfsStatus> list(String path) {
      throw new UnsupportedOperationException();
    }

    @Override
    public UfsOutputStream create(String path, boolean overwrite, int mode) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void mkdirs(String path, boolean recursive) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void delete(String path, boolean recursive) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void rename(String src, String dst) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  @Test
  void bufferReadIsOneArrayReadOfTheWholeRange() throws Exception {
    byte[] data = new byte[100_000];
    new Random(9).nextBytes(data);
    Files.write(dir.resolve("f"), data);
    String uri = "file://" + dir.resolve("f");
    ArrayOnlyStore store = new ArrayOnlyStore();
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocateDirect(65_536), ByteBuffer.allocate(65_536)}) {
      String kind = dst.isDirect() ? "direct" : "heap";
      store.arrayReads = 0;
      dst.position(36);
      assertEquals(65_500, store.read(uri, 1000, dst), kind);
      assertEquals(1, store.arrayReads, kind + ": one call for the whole range");
      assertEquals(65_536, dst.position(), kind);
      assertArrayEquals(Arrays.copyOfRange(data, 1000, 66_500), bytes(dst, 36, 65_500), kind);

      dst.clear();
      assertEquals(100_000 - 60_000, store.read(uri, 60_000, dst), kind + ": crosses the end");
      assertArrayEquals(Arrays.copyOfRange(data, 60_000, 100_000), bytes(dst, 0, 40_000), kind);
      dst.clear();
      assertEquals(-1, store.read(uri, 100_000, dst), kind + ": at the end");
      assertEquals(0, dst.position(), kind);
    }
    assertThrows(
        NoSuchFileException.class,
        () -> store.read("file://" + dir.resolve("missing"), 0, ByteBuffer.allocate(1)));
  }

  private static byte[] bytes(ByteBuffer buffer, int from, int length) {
    byte[] b = new byte[length];
    buffer.get(from, b);
    return b;
  }
}
