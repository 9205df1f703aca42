package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The staged copy of a file on its own, over a computed base version: reads see the base, every
 * write and truncation, and zeros where the file grew; only written bytes take local space, and the
 * mount's bound refuses a write past it with ENOSPC.
 */
class StagedFileTest {
  @TempDir Path dir;

  private StagedFile staged(StagingArea area, long baseLength, MemorySource source)
      throws Exception {
    FileInfo base =
        FileInfo.newBuilder()
            .setFileId(7)
            .setInodeNumber(3)
            .setPath("/f")
            .setLength(baseLength)
            .setModificationTimeMs(1000)
            .setComplete(true)
            .build();
    return area.acquire(3, data -> new StagedFile(3, "/f", base, null, data, area, v -> source));
  }

  private static byte[] read(StagedFile f, long position, int len) throws Exception {
    byte[] b = new byte[len];
    int n = f.read(position, b, 0, len);
    return Arrays.copyOf(b, Math.max(0, n));
  }

  @Test
  void readsMixBaseWritesAndZeros() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 1 << 20);
    MemorySource base = new MemorySource(10_000);
    StagedFile f = staged(area, 10_000, base);
    assertArrayEquals(MemorySource.expected(0, 100), read(f, 0, 100));
    f.write(50, ByteBuffer.wrap(new byte[] {1, 2, 3}));
    byte[] want = MemorySource.expected(0, 100);
    want[50] = 1;
    want[51] = 2;
    want[52] = 3;
    assertArrayEquals(want, read(f, 0, 100));
    // Grow past the end with a hole: zeros between the old end and the write.
    f.write(12_000, ByteBuffer.wrap(new byte[] {9}));
    assertEquals(12_001, f.length());
    byte[] tail = read(f, 9_990, 2_011);
    assertArrayEquals(MemorySource.expected(9_990, 10), Arrays.copyOf(tail, 10));
    for (int i = 10; i < 2_010; i++) {
      assertEquals(0, tail[i], "byte " + (9_990 + i));
    }
    assertEquals(9, tail[2_010]);
    assertEquals(-1, f.read(12_001, new byte[1], 0, 1));
    assertTrue(f.dirty());
    // Only written bytes take local space.
    assertEquals(4, area.heldBytes());
  }

  @Test
  void truncationHidesTheBaseBeyondTheCutEvenWhenGrownAgain() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 1 << 20);
    StagedFile f = staged(area, 10_000, new MemorySource(10_000));
    f.write(100, ByteBuffer.wrap(new byte[] {7, 7}));
    f.truncate(50);
    assertEquals(50, f.length());
    assertEquals(0, area.heldBytes());
    f.truncate(200);
    byte[] all = read(f, 0, 200);
    assertArrayEquals(MemorySource.expected(0, 50), Arrays.copyOf(all, 50));
    for (int i = 50; i < 200; i++) {
      assertEquals(0, all[i], "byte " + i + " reads as a zero once cut away");
    }
  }

  @Test
  void randomWritesMatchAnArrayModel() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 64 << 20);
    int size = 1 << 20;
    StagedFile f = staged(area, size, new MemorySource(size));
    byte[] model = MemorySource.expected(0, size);
    Random random = new Random(3);
    for (int i = 0; i < 500; i++) {
      int at = random.nextInt(size + 4096);
      byte[] chunk = new byte[1 + random.nextInt(8192)];
      random.nextBytes(chunk);
      f.write(at, ByteBuffer.wrap(chunk));
      if (at + chunk.length > model.length) {
        model = Arrays.copyOf(model, at + chunk.length);
      }
      System.arraycopy(chunk, 0, model, at, chunk.length);
    }
    assertEquals(model.length, f.length());
    assertArrayEquals(model, read(f, 0, model.length));
  }

  @Test
  void aWritePastTheBoundIsRefusedWithNoSpaceAndChangesNothing() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 1000);
    StagedFile f = staged(area, 0, new MemorySource(0));
    f.write(0, ByteBuffer.wrap(new byte[800]));
    StrataException e =
        assertThrows(StrataException.class, () -> f.write(800, ByteBuffer.wrap(new byte[300])));
    assertEquals(PosixError.ENOSPC, e.posix());
    assertTrue(e.getMessage().contains("strata.fuse.write.staging.max.size"), e.getMessage());
    assertEquals(800, f.length());
    assertEquals(800, area.heldBytes());
    // Rewriting bytes already held takes no more room.
    f.write(0, ByteBuffer.wrap(new byte[800]));
    assertEquals(800, area.heldBytes());
  }

  @Test
  void aDirtyCopyIsKeptWithItsNoteAndACleanOneIsRemoved() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 1 << 20);
    StagedFile dirty = staged(area, 10, new MemorySource(10));
    dirty.write(0, ByteBuffer.wrap(new byte[] {1}));
    Path kept = area.release(dirty);
    assertNotNull(kept);
    assertTrue(Files.exists(kept));
    assertEquals(1, area.reportLeftovers());
    FileInfo other =
        FileInfo.newBuilder()
            .setFileId(8)
            .setInodeNumber(4)
            .setPath("/g")
            .setLength(10)
            .setComplete(true)
            .build();
    StagedFile clean =
        area.acquire(
            4, data -> new StagedFile(4, "/g", other, null, data, area, v -> new MemorySource(10)));
    Path data = clean.data();
    assertNull(area.release(clean));
    assertFalse(Files.exists(data));
    assertEquals(1, area.reportLeftovers());
  }

  @Test
  void handlesOfOneFileShareOneCopy() throws Exception {
    StagingArea area = new StagingArea(dir.resolve("s"), 1 << 20);
    StagedFile a = staged(area, 10, new MemorySource(10));
    StagedFile b = staged(area, 10, new MemorySource(10));
    assertTrue(a == b);
    a.write(0, ByteBuffer.wrap(new byte[] {5}));
    assertEquals(5, read(b, 0, 1)[0]);
    assertNull(area.release(a));
    assertEquals(1, area.fileCount());
    assertNotNull(area.release(b));
    assertEquals(0, area.fileCount());
  }
}
