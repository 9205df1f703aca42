package io.strata.master.file;

import io.strata.common.error.StrataException;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;

/**
 * One part of a change as it is handed to staging ({@link ChangeStaging}): an entry as it is, or
 * the rewrite of an inode worked out from that inode as the change is staged. The second is for
 * inodes other changes may rewrite at the same time -- a folder whose times move with every name
 * added in it, a file reached by several names -- so that no rewrite undoes another.
 */
sealed interface Edit permits Edit.Put, Edit.Update, Edit.FolderChanged, Edit.Discovered {
  /** A journal entry as it is. */
  record Put(JournalEntry entry) implements Edit {}

  /**
   * A rewrite of inode {@code id} from its state when staged (null when it is gone then): the new
   * inode, or null to leave it as it is. It may fail with a StrataException, which fails the whole
   * change (nothing of it is staged).
   */
  record Update(long id, InodeUpdate update) implements Edit {}

  /**
   * Moves a folder's modification and change times to the time the change is staged, because a name
   * in it was added, removed or renamed; nothing when it is gone or not a folder. The staging clock
   * never goes back, so a folder's times follow the journal's order.
   */
  record FolderChanged(long dirId) implements Edit {}

  /**
   * A new inode a load found in its store, put only if its folder has no child of that name when
   * staged (another load may have put it first) and the folder is still there.
   */
  record Discovered(InodeEntry inode) implements Edit {}

  /** Works out an inode's rewrite from its state when staged. */
  @FunctionalInterface
  interface InodeUpdate {
    InodeEntry.Builder apply(InodeEntry current) throws StrataException;
  }

  static Edit put(JournalEntry.Builder entry) {
    return new Put(entry.clearSequence().build());
  }

  static Edit inode(InodeEntry.Builder inode) {
    return put(JournalEntry.newBuilder().setInode(inode));
  }

  static Edit update(long id, InodeUpdate update) {
    return new Update(id, update);
  }

  /** {@link FolderChanged} of each folder, once each. */
  static void foldersChanged(java.util.List<Edit> edits, long... dirIds) {
    java.util.Set<Long> done = new java.util.HashSet<>();
    for (long id : dirIds) {
      if (done.add(id)) {
        edits.add(new FolderChanged(id));
      }
    }
  }
}
