package io.strata.master.metastore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.NameOrder;
import io.strata.common.Version;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.AddMountEntry;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LayoutEntry;
import io.strata.proto.journal.LinkName;
import io.strata.proto.journal.RenameEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metastore on a real RocksDB in a temporary folder: what each kind of journal entry does to
 * inodes, names, counters and children, that it all survives a reopen, and that a checkpoint
 * restores exactly what it copied.
 */
class InodeStoreTest {
  @TempDir Path dir;
  private long sequence;

  private InodeStore open(String name) throws IOException {
    return InodeStore.open(dir.resolve(name), 16, new SimpleMeterRegistry());
  }

  private void apply(InodeStore store, JournalEntry.Builder entry) throws IOException {
    store.apply(entry.setSequence(++sequence).build());
  }

  private static JournalEntry.Builder inode(InodeEntry.Builder n) {
    return JournalEntry.newBuilder().setInode(n);
  }

  private static InodeEntry.Builder folder(long id, long parent, String name) {
    return InodeEntry.newBuilder()
        .setId(id)
        .setParentId(parent)
        .setName(name)
        .setDirectory(true)
        .setComplete(true);
  }

  private static InodeEntry.Builder file(long id, long parent, String name) {
    return InodeEntry.newBuilder()
        .setId(id)
        .setParentId(parent)
        .setName(name)
        .setComplete(true)
        .setLength(id * 10);
  }

  private static JournalEntry.Builder delete(long id) {
    return JournalEntry.newBuilder().setDeleteInode(DeleteInodeEntry.newBuilder().setId(id));
  }

  private static JournalEntry.Builder rename(long id, long newParent, String newName) {
    return JournalEntry.newBuilder()
        .setRename(
            RenameEntry.newBuilder()
                .setId(id)
                .setNewParentId(newParent)
                .setNewName(newName)
                .setModificationTimeMs(1234));
  }

  private static List<String> names(InodeStore store, long dirId) {
    return store.children(dirId, "", 100).stream().map(InodeStore.Child::name).toList();
  }

  /** Root 1, folders /a (2) and /a/b (3), files /a/f (4) and /a/b/g (5). */
  private void tree(InodeStore store) throws IOException {
    apply(store, inode(folder(InodeStore.ROOT_ID, 0, "")));
    apply(store, inode(folder(2, 1, "a")));
    apply(store, inode(folder(3, 2, "b")));
    apply(store, inode(file(4, 2, "f")));
    apply(store, inode(file(5, 3, "g")));
  }

  @Test
  void inodesAreFoundByIdAndByNameWithCountersThatOnlyGrow() throws IOException {
    try (InodeStore store = open("m")) {
      assertEquals(InodeStore.ROOT_ID + 1, store.nextInodeId(), "an empty store");
      tree(store);
      assertEquals(5, store.inodeCount());
      assertEquals(6, store.nextInodeId());
      assertEquals(sequence, store.appliedSequence());
      assertEquals("g", store.get(5).getName());
      assertEquals(4, store.childId(2, "f"));
      assertEquals(-1, store.childId(2, "missing"));
      assertEquals(3, store.child(2, "b").getId());
      assertEquals(1, store.subdirectoryCount(2));
      assertTrue(store.hasChildren(3));

      // An inode whose data lives under a higher id moves the next id above that too.
      apply(store, inode(file(6, 1, "v").setDataId(40)));
      assertEquals(41, store.nextInodeId());
      assertEquals(6, store.contentOwner(40).getId(), "found by its data id");
      assertNull(store.contentOwner(6), "its own id no longer names its content");

      apply(store, delete(6));
      assertEquals(41, store.nextInodeId(), "a delete never lowers the next id");
      assertEquals(5, store.inodeCount());
    }
  }

  @Test
  void childrenComeInNameOrderAndPageAfterAName() throws IOException {
    try (InodeStore store = open("m")) {
      apply(store, inode(folder(InodeStore.ROOT_ID, 0, "")));
      List<String> given = List.of("b", "a", "B", "é", "a0", "z", "ab");
      long id = 10;
      for (String name : given) {
        apply(store, inode(file(id++, 1, name)));
      }
      // The order of the names' UTF-8 bytes, unsigned.
      assertEquals(List.of("B", "a", "a0", "ab", "b", "z", "é"), names(store, 1));
      assertEquals(
          List.of("ab", "b"),
          store.children(1, "a0", 2).stream().map(InodeStore.Child::name).toList());
      assertEquals(List.of(), store.children(1, "é", 10));
    }
  }

  @Test
  void theStoreListsInTheOrderEveryListingUses() throws IOException {
    try (InodeStore store = open("m")) {
      apply(store, inode(folder(InodeStore.ROOT_ID, 0, "")));
      String emoji = new String(Character.toChars(0x1f600));
      String privateUse = String.valueOf((char) 0xe000);
      List<String> names =
          new ArrayList<>(
              List.of("x" + emoji, "x" + privateUse, "x", "xa", "X", "x\u00e9", "x0", emoji));
      long id = 10;
      for (String name : names) {
        apply(store, inode(file(id++, 1, name)));
      }
      names.sort(NameOrder.COMPARATOR);
      assertEquals(names, names(store, 1), "the mount and the proxy merge listings in this order");
    }
  }

  @Test
  void aRenameMovesTheNameAndTheSubdirectoryCounts() throws IOException {
    try (InodeStore store = open("m")) {
      tree(store);
      apply(store, rename(3, 1, "top"));
      assertEquals(-1, store.childId(2, "b"));
      assertEquals(3, store.childId(1, "top"));
      InodeEntry moved = store.get(3);
      assertEquals(1, moved.getParentId());
      assertEquals("top", moved.getName());
      assertEquals(1234, moved.getModificationTimeMs());
      assertEquals(0, store.subdirectoryCount(2));
      assertEquals(2, store.subdirectoryCount(1), "a and top");
      assertEquals(5, store.childId(3, "g"), "its children move with it");

      IOException missing = assertThrows(IOException.class, () -> apply(store, rename(99, 1, "x")));
      assertTrue(
          missing.getMessage().contains("inode 99, which does not exist"), missing.toString());
    }
  }

  @Test
  void aDeleteTakesTheSubtreeAndEveryNameOfItsFiles() throws IOException {
    try (InodeStore store = open("m")) {
      tree(store);
      // /a/b/g gets a second name in the root (a hard link).
      apply(
          store,
          inode(file(5, 3, "g").addLinks(LinkName.newBuilder().setParentId(1).setName("g-link"))));
      assertEquals(5, store.childId(1, "g-link"));

      apply(store, delete(2));
      assertNull(store.get(2));
      assertNull(store.get(3));
      assertNull(store.get(4));
      assertNull(store.get(5));
      assertEquals(-1, store.childId(1, "a"));
      assertEquals(-1, store.childId(1, "g-link"), "no name is left pointing at nothing");
      assertEquals(1, store.inodeCount(), "the root only");
      assertFalse(store.hasChildren(1));
      assertEquals(0, store.subdirectoryCount(1));

      apply(store, delete(77));
      assertEquals(1, store.inodeCount(), "deleting what is gone changes nothing");
    }
  }

  @Test
  void everythingAppliedSurvivesAReopen() throws IOException {
    try (InodeStore store = open("m")) {
      tree(store);
      apply(
          store,
          JournalEntry.newBuilder()
              .setAddMount(
                  AddMountEntry.newBuilder()
                      .setMount(
                          MountInfo.newBuilder()
                              .setMountId(7)
                              .setPath("/a")
                              .setUfsUri("file:///tmp/x"))));
    }
    try (InodeStore store = open("m")) {
      assertEquals(sequence, store.appliedSequence());
      assertEquals(5, store.inodeCount());
      assertEquals(6, store.nextInodeId());
      assertEquals(8, store.nextMountId());
      assertEquals(List.of("/a"), store.mounts().stream().map(MountInfo::getPath).toList());
      assertEquals(List.of("b", "f"), names(store, 2));
      assertEquals(50, store.get(5).getLength());
    }
  }

  @Test
  void aCheckpointRestoresExactlyWhatItCopied() throws IOException {
    Path checkpoint = dir.resolve("checkpoint");
    try (InodeStore leader = open("leader")) {
      tree(leader);
      leader.checkpointTo(checkpoint);
      apply(leader, delete(3));
    }
    try (InodeStore follower = open("follower")) {
      apply(follower, inode(folder(InodeStore.ROOT_ID, 0, "")));
      apply(follower, inode(file(9, 1, "only-here")));
      follower.replaceWith(checkpoint);
      assertEquals(-1, follower.childId(1, "only-here"), "what it held before is gone");
      assertNull(follower.get(9));
      assertEquals(5, follower.inodeCount());
      assertEquals(5, follower.appliedSequence(), "the checkpoint's place in the journal");
      assertEquals(5, follower.childId(3, "g"), "the later delete is not in the checkpoint");
      assertEquals(List.of("b", "f"), names(follower, 2));
    }
  }

  @Test
  void layoutEntriesRaiseTheLayoutAndOnesFromANewerReleaseAreRefused() throws IOException {
    try (InodeStore store = open("m")) {
      int start = store.layoutVersion();
      apply(
          store,
          JournalEntry.newBuilder()
              .setLayout(
                  LayoutEntry.newBuilder()
                      .setLayoutVersion(Version.LAYOUT_VERSION)
                      .setRelease("this")));
      assertEquals(Math.max(start, Version.LAYOUT_VERSION), store.layoutVersion());

      long before = store.appliedSequence();
      IOException newer =
          assertThrows(
              IOException.class,
              () ->
                  apply(
                      store,
                      JournalEntry.newBuilder()
                          .setLayout(
                              LayoutEntry.newBuilder()
                                  .setLayoutVersion(Version.LAYOUT_VERSION + 1)
                                  .setRelease("9.9.9"))));
      assertTrue(newer.getMessage().contains("run release 9.9.9 or newer"), newer.toString());
      assertEquals(before, store.appliedSequence(), "a refused entry is not applied");

      IOException empty =
          assertThrows(IOException.class, () -> apply(store, JournalEntry.newBuilder()));
      assertTrue(
          empty.getMessage().contains("no change this release understands"), empty.toString());
    }
  }
}
