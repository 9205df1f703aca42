package io.strata.master.metastore;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.proto.PersistenceState;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persist index holds exactly the complete files TO_BE_PERSISTED, oldest first, through every
 * inode change the metastore applies, and survives a reopen.
 */
class PersistIndexTest {
  @TempDir Path dir;
  private long sequence;

  private InodeStore open() throws Exception {
    return InodeStore.open(dir, 100, new SimpleMeterRegistry());
  }

  private void apply(InodeStore store, JournalEntry.Builder entry) throws Exception {
    store.apply(entry.setSequence(++sequence).build());
  }

  private static JournalEntry.Builder inode(
      long id, long parent, String name, boolean dir, boolean complete, PersistenceState state) {
    return JournalEntry.newBuilder()
        .setInode(
            InodeEntry.newBuilder()
                .setId(id)
                .setParentId(parent)
                .setName(name)
                .setDirectory(dir)
                .setComplete(complete)
                .setNamespaceOnly(state != PersistenceState.PERSISTENCE_PERSISTED)
                .setPersistenceState(state));
  }

  @Test
  void indexFollowsCompletionPersistRenameAndDelete() throws Exception {
    PersistenceState waits = PersistenceState.PERSISTENCE_TO_BE_PERSISTED;
    try (InodeStore store = open()) {
      apply(
          store,
          inode(InodeStore.ROOT_ID, 0, "", true, true, PersistenceState.PERSISTENCE_PERSISTED));
      apply(store, inode(2, 1, "d", true, true, PersistenceState.PERSISTENCE_PERSISTED));
      // Being written: not yet.
      apply(store, inode(5, 2, "b", false, false, waits));
      apply(store, inode(3, 2, "a", false, true, waits));
      apply(store, inode(4, 2, "must", false, true, PersistenceState.PERSISTENCE_NOT_PERSISTED));
      apply(store, inode(6, 2, "plain", false, true, PersistenceState.PERSISTENCE_PERSISTED));
      assertEquals(List.of(3L), store.waitingToPersist(0, 100));

      apply(store, inode(5, 2, "b", false, true, waits));
      assertEquals(List.of(3L, 5L), store.waitingToPersist(0, 100), "oldest (lowest id) first");
      assertEquals(List.of(5L), store.waitingToPersist(3, 100), "pages start after an id");
      assertEquals(List.of(3L), store.waitingToPersist(0, 1));

      apply(
          store,
          JournalEntry.newBuilder()
              .setRename(RenameEntry.newBuilder().setId(5).setNewParentId(1).setNewName("moved")));
      assertEquals(List.of(3L, 5L), store.waitingToPersist(0, 100), "a rename keeps it");

      apply(store, inode(3, 2, "a", false, true, PersistenceState.PERSISTENCE_PERSISTED));
      assertEquals(List.of(5L), store.waitingToPersist(0, 100), "a persisted file goes");
    }
    try (InodeStore store = open()) {
      assertEquals(List.of(5L), store.waitingToPersist(0, 100), "the index persists");
      apply(
          store, JournalEntry.newBuilder().setDeleteInode(DeleteInodeEntry.newBuilder().setId(5)));
      apply(store, inode(7, 2, "c", false, true, waits));
      apply(
          store, JournalEntry.newBuilder().setDeleteInode(DeleteInodeEntry.newBuilder().setId(2)));
      assertEquals(
          List.of(), store.waitingToPersist(0, 100), "a deleted file goes, also with its folder");
    }
  }
}
