package io.strata.master.metastore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.proto.TtlAction;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The time-to-live index follows every inode change the metastore applies, and persists. */
class TtlIndexTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir Path dir;
  private long sequence;

  private InodeStore open() throws Exception {
    return InodeStore.open(dir, 100, new SimpleMeterRegistry());
  }

  private void apply(InodeStore store, JournalEntry.Builder entry) throws Exception {
    store.apply(entry.setSequence(++sequence).build());
  }

  private static JournalEntry.Builder inode(
      long id, long parent, String name, boolean dir, long mtime, long ttl, TtlAction action) {
    return JournalEntry.newBuilder()
        .setInode(
            InodeEntry.newBuilder()
                .setId(id)
                .setParentId(parent)
                .setName(name)
                .setDirectory(dir)
                .setModificationTimeMs(mtime)
                .setTtlMs(ttl)
                .setTtlAction(action));
  }

  private static List<Long> expired(InodeStore store, long now) {
    List<Long> ids = new ArrayList<>();
    store.expiredBy(now, null, 1000).forEach(e -> ids.add(e.inodeId()));
    return ids;
  }

  @Test
  void expiryIsModificationTimePlusTimeToLive() {
    InodeEntry none = InodeEntry.newBuilder().setModificationTimeMs(T0).build();
    assertEquals(-1, TtlIndex.expiryMs(none));
    assertEquals(T0 + 5, TtlIndex.expiryMs(none.toBuilder().setTtlMs(5).build()));
    assertEquals(
        Long.MAX_VALUE,
        TtlIndex.expiryMs(none.toBuilder().setTtlMs(Long.MAX_VALUE).build()),
        "an end past the last representable time never comes");
    assertEquals(
        0,
        TtlIndex.expiryMs(
            InodeEntry.newBuilder().setModificationTimeMs(-100).setTtlMs(10).build()));
  }

  @Test
  void indexFollowsSetsTouchesRenamesClearsAndDeletes() throws Exception {
    try (InodeStore store = open()) {
      apply(store, inode(InodeStore.ROOT_ID, 0, "", true, T0, 0, TtlAction.TTL_ACTION_FREE));
      apply(store, inode(2, 1, "d", true, T0, 0, TtlAction.TTL_ACTION_FREE));
      apply(store, inode(3, 2, "f", false, T0, 100, TtlAction.TTL_ACTION_DELETE));
      apply(store, inode(4, 2, "g", false, T0, 300, TtlAction.TTL_ACTION_FREE));
      assertEquals(List.of(), expired(store, T0 + 99));
      assertEquals(List.of(3L), expired(store, T0 + 100));
      assertEquals(List.of(3L, 4L), expired(store, T0 + 300));

      // A touch moves the end: the old key goes.
      apply(store, inode(3, 2, "f", false, T0 + 1000, 100, TtlAction.TTL_ACTION_DELETE));
      assertEquals(List.of(4L), expired(store, T0 + 300));
      assertEquals(List.of(4L, 3L), expired(store, T0 + 1100));

      // A rename takes a new modification time.
      apply(
          store,
          JournalEntry.newBuilder()
              .setRename(
                  RenameEntry.newBuilder()
                      .setId(4)
                      .setNewParentId(1)
                      .setNewName("moved")
                      .setModificationTimeMs(T0 + 2000)));
      assertEquals(List.of(3L), expired(store, T0 + 1100));
      assertEquals(List.of(3L, 4L), expired(store, T0 + 2300));

      apply(store, inode(4, 1, "moved", false, T0 + 2000, 0, TtlAction.TTL_ACTION_FREE));
      assertEquals(List.of(3L), expired(store, Long.MAX_VALUE), "a cleared time to live goes");

      // Deleting a directory removes the keys of everything below it.
      apply(store, inode(2, 1, "d", true, T0, 50, TtlAction.TTL_ACTION_FREE));
      assertEquals(List.of(2L, 3L), expired(store, Long.MAX_VALUE));
      apply(
          store, JournalEntry.newBuilder().setDeleteInode(DeleteInodeEntry.newBuilder().setId(2)));
      assertEquals(List.of(), expired(store, Long.MAX_VALUE));
    }
  }

  @Test
  void indexPersistsAndPagesInExpiryOrder() throws Exception {
    try (InodeStore store = open()) {
      apply(store, inode(InodeStore.ROOT_ID, 0, "", true, T0, 0, TtlAction.TTL_ACTION_FREE));
      for (int i = 0; i < 5; i++) {
        // Ids in the opposite order of their ends.
        apply(store, inode(10 - i, 1, "f" + i, false, T0 + i, 10, TtlAction.TTL_ACTION_FREE));
      }
    }
    try (InodeStore store = open()) {
      assertEquals(List.of(10L, 9L, 8L, 7L, 6L), expired(store, T0 + 100));
      List<TtlIndex.Expiry> first = store.expiredBy(T0 + 100, null, 2);
      assertEquals(
          List.of(new TtlIndex.Expiry(T0 + 10, 10), new TtlIndex.Expiry(T0 + 11, 9)), first);
      List<TtlIndex.Expiry> next = store.expiredBy(T0 + 100, first.get(1), 2);
      assertEquals(List.of(new TtlIndex.Expiry(T0 + 12, 8), new TtlIndex.Expiry(T0 + 13, 7)), next);
      assertEquals(
          List.of(new TtlIndex.Expiry(T0 + 14, 6)), store.expiredBy(T0 + 100, next.get(1), 2));
      assertEquals(5, store.inodeCount() - 1, "the index keys are not inodes");
    }
  }
}
