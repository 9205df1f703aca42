package io.strata.underfs.local;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LocalUnderFileSystemTest {
  @TempDir Path dir;
  final LocalUnderFileSystem ufs = new LocalUnderFileSystem();

  String uri(String rel) {
    return "file://" + dir.resolve(rel);
  }

  @Test
  void positionedReadReturnsExactlyTheRangeAndEndOfFile() throws Exception {
    byte[] data = new byte[10_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) i;
    }
    Files.write(dir.resolve("f"), data);
    byte[] buf = new byte[100];
    assertEquals(100, ufs.read(uri("f"), 5000, buf, 0, 100));
    for (int i = 0; i < 100; i++) {
      assertEquals(data[5000 + i], buf[i]);
    }
    assertEquals(10, ufs.read(uri("f"), 9990, buf, 0, 100), "short read at the end");
    assertEquals(-1, ufs.read(uri("f"), 10_000, buf, 0, 100));
    assertThrows(NoSuchFileException.class, () -> ufs.read(uri("missing"), 0, buf, 0, 1));
  }

  @Test
  void bufferReadGivesTheBytesOfTheArrayReadUpToAndAtTheEndOfTheFile() throws Exception {
    byte[] data = new byte[3 * 4096 + 100];
    new Random(3).nextBytes(data);
    Files.write(dir.resolve("f"), data);
    for (ByteBuffer dst :
        new ByteBuffer[] {ByteBuffer.allocateDirect(8192), ByteBuffer.allocate(8192)}) {
      String kind = dst.isDirect() ? "direct" : "heap";
      dst.position(10);
      assertEquals(8182, ufs.read(uri("f"), 777, dst), kind);
      assertEquals(8192, dst.position(), kind + ": the position moves past the bytes read");
      byte[] expected = new byte[8182];
      assertEquals(8182, ufs.read(uri("f"), 777, expected, 0, expected.length));
      assertArrayEquals(expected, bytes(dst, 10, 8182), kind);

      // A read that crosses the end of the file returns what is left.
      dst.clear();
      assertEquals(100 + 4096, ufs.read(uri("f"), 2 * 4096, dst), kind);
      assertArrayEquals(
          Arrays.copyOfRange(data, 2 * 4096, data.length), bytes(dst, 0, 100 + 4096), kind);
      dst.clear();
      assertEquals(-1, ufs.read(uri("f"), data.length, dst), kind + ": at the end");
      assertEquals(-1, ufs.read(uri("f"), data.length + 5000, dst), kind + ": past the end");
      assertEquals(0, dst.position(), kind);
      assertEquals(0, ufs.read(uri("f"), 0, dst.limit(0)), kind + ": nothing asked");
    }
    NoSuchFileException missing =
        assertThrows(
            NoSuchFileException.class,
            () -> ufs.read(uri("missing"), 0, ByteBuffer.allocateDirect(10)));
    assertEquals(uri("missing"), missing.getFile());
  }

  private static byte[] bytes(ByteBuffer buffer, int from, int length) {
    byte[] b = new byte[length];
    buffer.get(from, b);
    return b;
  }

  @Test
  void aFileAppearsUnderItsNameOnlyWhenItsStreamCloses() throws Exception {
    UfsOutputStream out = ufs.create(uri("new file #1"), false, 0640);
    out.write(new byte[] {1, 2, 3});
    assertFalse(Files.exists(dir.resolve("new file #1")));
    assertEquals(List.of(), names(""), "in-progress writes are hidden from listings");
    out.close();
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(dir.resolve("new file #1")));
    UfsStatus s = ufs.getStatus(uri("new file #1"));
    assertEquals(3, s.length());
    assertEquals(0640, s.mode());
    assertEquals(s.fingerprint(), out.fingerprint());
  }

  @Test
  void anAbortedWriteLeavesNothing() throws Exception {
    UfsOutputStream out = ufs.create(uri("aborted"), false, 0);
    out.write(42);
    out.abort();
    try (var s = Files.list(dir)) {
      assertEquals(0, s.count());
    }
  }

  @Test
  void createRefusesAnExistingFileUnlessOverwriting() throws Exception {
    Files.writeString(dir.resolve("x"), "old");
    assertThrows(FileAlreadyExistsException.class, () -> ufs.create(uri("x"), false, 0));
    try (UfsOutputStream out = ufs.create(uri("x"), true, 0)) {
      out.write("new".getBytes(UTF_8));
    }
    assertEquals("new", Files.readString(dir.resolve("x")));
  }

  @Test
  void concatJoinsTheSourcesInOrderIntoATargetThatAppearsWhole() throws Exception {
    byte[][] parts = {random(3 << 20, 1), random(1, 2), random(700_001, 3)};
    Files.createDirectories(dir.resolve("parts"));
    List<String> sources = new ArrayList<>();
    for (int i = 0; i < parts.length; i++) {
      Files.write(dir.resolve("parts/" + i), parts[i]);
      sources.add(uri("parts/" + i));
    }
    Files.createDirectories(dir.resolve("out"));
    UfsStatus s = ufs.concat(sources, uri("out/joined file"), false, 0640);
    byte[] joined = Files.readAllBytes(dir.resolve("out/joined file"));
    assertArrayEquals(concatenated(parts), joined);
    assertEquals(joined.length, s.length());
    assertEquals(0640, s.mode());
    assertEquals(ufs.getStatus(uri("out/joined file")).fingerprint(), s.fingerprint());
    assertEquals(List.of("joined file"), allFiles("out"), "no temporary file is left");
    for (int i = 0; i < parts.length; i++) {
      assertArrayEquals(
          parts[i],
          Files.readAllBytes(dir.resolve("parts/" + i)),
          "a local concatenation copies its sources");
    }
  }

  @Test
  void concatRefusesAnExistingTargetUnlessOverwritingAndLeavesNothingOnAMissingSource()
      throws Exception {
    Files.writeString(dir.resolve("a"), "aa");
    Files.writeString(dir.resolve("b"), "b");
    Files.writeString(dir.resolve("t"), "old");
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.concat(List.of(uri("a"), uri("b")), uri("t"), false, 0));
    NoSuchFileException missing =
        assertThrows(
            NoSuchFileException.class,
            () -> ufs.concat(List.of(uri("a"), uri("gone")), uri("t"), true, 0));
    assertEquals(uri("gone"), missing.getFile());
    assertEquals("old", Files.readString(dir.resolve("t")));
    ufs.concat(List.of(uri("b"), uri("a")), uri("t"), true, 0);
    assertEquals("baa", Files.readString(dir.resolve("t")));
    assertEquals(List.of("a", "b", "t"), allFiles(""), "no temporary file is left");
    assertThrows(IllegalArgumentException.class, () -> ufs.concat(List.of(), uri("u"), false, 0));
  }

  /** Every name in a folder, hidden temporary files too (listings leave those out). */
  List<String> allFiles(String rel) throws Exception {
    try (var s = Files.list(dir.resolve(rel))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static byte[] concatenated(byte[][] parts) {
    int total = 0;
    for (byte[] p : parts) {
      total += p.length;
    }
    byte[] all = new byte[total];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, all, at, p.length);
      at += p.length;
    }
    return all;
  }

  @Test
  void listingStatusMkdirsRenameAndDelete() throws Exception {
    ufs.mkdirs(uri("a/b/c"), true);
    Files.writeString(dir.resolve("a/b/f"), "12345");
    assertEquals(List.of("c", "f"), names("a/b"));
    UfsStatus f = ufs.getStatus(uri("a/b/f"));
    assertFalse(f.directory());
    assertEquals(5, f.length());
    assertTrue(ufs.getStatus(uri("a/b/c")).directory());
    String before = f.fingerprint();
    Files.writeString(dir.resolve("a/b/f"), "123456");
    assertNotEquals(before, ufs.getStatus(uri("a/b/f")).fingerprint());

    ufs.rename(uri("a/b/f"), uri("a/g"));
    assertThrows(FileAlreadyExistsException.class, () -> ufs.rename(uri("a/g"), uri("a/b")));
    assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri("a/b/f")));
    assertThrows(java.io.IOException.class, () -> ufs.delete(uri("a"), false));
    ufs.delete(uri("a"), true);
    assertFalse(ufs.exists(uri("a")));
    assertThrows(NoSuchFileException.class, () -> ufs.list(uri("a")));
  }

  List<String> names(String rel) throws Exception {
    List<String> names = new ArrayList<>();
    try (UnderFileSystem.CloseableIterator<UfsStatus> it =
        ufs.list(rel.isEmpty() ? "file://" + dir : uri(rel))) {
      it.forEachRemaining(s -> names.add(s.name()));
    }
    names.sort(null);
    return names;
  }
}
