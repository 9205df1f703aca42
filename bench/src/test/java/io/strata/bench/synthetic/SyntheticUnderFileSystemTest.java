package io.strata.bench.synthetic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderStores;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SyntheticUnderFileSystemTest {
  private static final String ROOT = "synthetic://files-25-fanout-10-size-100/";

  @Test
  void treeIsDirectoriesOfFanoutFilesWithTheRestInTheLast() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      UnderFileSystem ufs = stores.get(ROOT);
      assertEquals(List.of("d0", "d1", "d2"), names(ufs, ROOT));
      assertEquals(10, names(ufs, ROOT + "d0").size());
      assertEquals(List.of("f0", "f1", "f2", "f3", "f4"), names(ufs, ROOT + "d2"));
      assertTrue(ufs.getStatus(ROOT).directory());
      UfsStatus f = ufs.getStatus(ROOT + "d1/f3");
      assertEquals(100, f.length());
      assertEquals(f, ufs.getStatus(ROOT + "d1/f3"), "the same status on every call");
      assertFalse(f.fingerprint().equals(ufs.getStatus(ROOT + "d1/f4").fingerprint()));
      assertFalse(ufs.exists(ROOT + "d2/f5"));
      assertFalse(ufs.exists(ROOT + "d3"));
      assertThrows(NoSuchFileException.class, () -> ufs.getStatus(ROOT + "d0/f1/x"));
    }
  }

  @Test
  void namesArePaddedSoTheySortInNumberOrder() {
    SyntheticTree t = SyntheticTree.parse("files-10000000-fanout-1000");
    assertEquals(10_000, t.directories());
    assertEquals("d0000", t.directoryName(0));
    assertEquals("d9999", t.directoryName(9999));
    assertEquals("f999", t.fileName(999));
    assertEquals(10_010_000, t.inodes());
    assertEquals("synthetic://files-10000000-fanout-1000/", t.uri());
  }

  @Test
  void contentIsTheSameOnEveryReadAndEndsAtTheLength() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      UnderFileSystem ufs = stores.get(ROOT);
      byte[] whole = new byte[200];
      assertEquals(100, ufs.read(ROOT + "d0/f7", 0, whole, 0, 200));
      byte[] part = new byte[10];
      assertEquals(10, ufs.read(ROOT + "d0/f7", 40, part, 0, 10));
      byte[] expected = new byte[10];
      System.arraycopy(whole, 40, expected, 0, 10);
      assertArrayEquals(expected, part);
      assertEquals(-1, ufs.read(ROOT + "d0/f7", 100, part, 0, 10));
    }
  }

  @Test
  void everyWriteIsRefusedSayingTheStoreIsReadOnly() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      UnderFileSystem ufs = stores.get(ROOT);
      AccessDeniedException e =
          assertThrows(AccessDeniedException.class, () -> ufs.create(ROOT + "d0/new", false, 0644));
      assertTrue(e.getMessage().contains("read-only"), e.getMessage());
      assertThrows(AccessDeniedException.class, () -> ufs.mkdirs(ROOT + "d9", true));
      assertThrows(AccessDeniedException.class, () -> ufs.delete(ROOT + "d0", true));
      assertThrows(AccessDeniedException.class, () -> ufs.rename(ROOT + "d0", ROOT + "d9"));
    }
  }

  @Test
  void badAuthoritySaysTheExpectedForm() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new UnderStores().get("synthetic://files-ten-fanout-3/", Map.of()));
    assertTrue(e.getMessage().contains("files-<count>-fanout-"), e.getMessage());
  }

  private static List<String> names(UnderFileSystem ufs, String dir) throws Exception {
    List<String> out = new ArrayList<>();
    try (UnderFileSystem.CloseableIterator<UfsStatus> it = ufs.list(dir)) {
      it.forEachRemaining(s -> out.add(s.name()));
    }
    return out;
  }
}
