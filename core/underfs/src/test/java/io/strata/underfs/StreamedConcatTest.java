package io.strata.underfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stream copy that any store can concatenate with, and that the others fall back to. */
class StreamedConcatTest {
  @TempDir Path dir;
  final UnderFileSystem ufs = new LocalUnderFileSystem();

  String uri(String name) {
    return "file://" + dir.resolve(name);
  }

  @Test
  void copiesEverySourceInOrderThroughCreateAcrossReadChunks() throws Exception {
    byte[][] parts = {
      random(StreamedConcat.CHUNK + 5, 4), random(StreamedConcat.CHUNK, 5), random(10, 6)
    };
    List<String> sources = new ArrayList<>();
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (int i = 0; i < parts.length; i++) {
      Files.write(dir.resolve("s" + i), parts[i]);
      sources.add(uri("s" + i));
      all.writeBytes(parts[i]);
    }
    UfsStatus s = StreamedConcat.write(ufs, sources, uri("joined"), false, 0600);
    assertArrayEquals(all.toByteArray(), Files.readAllBytes(dir.resolve("joined")));
    assertEquals(ufs.getStatus(uri("joined")), s);
    assertEquals(0600, s.mode());
    for (int i = 0; i < parts.length; i++) {
      assertArrayEquals(parts[i], Files.readAllBytes(dir.resolve("s" + i)));
    }
  }

  @Test
  void aMissingSourceAbortsTheTargetAndAnExistingTargetIsKept() throws Exception {
    Files.writeString(dir.resolve("a"), "a");
    Files.writeString(dir.resolve("t"), "old");
    NoSuchFileException e =
        assertThrows(
            NoSuchFileException.class,
            () -> StreamedConcat.write(ufs, List.of(uri("a"), uri("gone")), uri("t"), true, 0));
    assertEquals(uri("gone"), e.getFile());
    assertThrows(
        java.nio.file.FileAlreadyExistsException.class,
        () -> StreamedConcat.write(ufs, List.of(uri("a")), uri("t"), false, 0));
    assertEquals("old", Files.readString(dir.resolve("t")));
    try (var s = Files.list(dir)) {
      assertEquals(
          List.of("a", "t"),
          s.map(p -> p.getFileName().toString()).sorted().toList(),
          "the aborted copy left a temporary file");
    }
    assertThrows(
        IllegalArgumentException.class,
        () -> StreamedConcat.write(ufs, List.of(uri("a"), uri("t")), uri("t"), true, 0));
  }

  static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }
}
