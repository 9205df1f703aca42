package io.strata.master.file;

import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.underfs.UfsStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Brings inodes in line with what their under store says of them. It decides, for one inode and the
 * store's status of its path, whether the inode stays, is deleted (the store has nothing there) or
 * is replaced by a new inode with a new id (another type, or a file whose fingerprint changed), so
 * that blocks cached for old content are never read as the new. It never touches files being
 * written through Strata, mount points, paths with mount points below them, files the store cannot
 * hold (namespace only) or files with several names (hard links, whose names Strata keeps in step
 * itself).
 */
final class UfsReconciler {
  private final InodeTree tree;

  UfsReconciler(InodeTree tree) {
    this.tree = tree;
  }

  /**
   * Checks the inode at a path against its store and stages the answer; an unchanged inode is
   * remembered as checked. The change holds the path's write lock, taken before the store is asked,
   * so the store's answer is newer than every change staged for the path: the inode is checked as
   * it is now (with staged changes), whether or not it is still the one the caller saw before it
   * locked (a listing sync of its folder may have stamped or replaced it meanwhile; dropping the
   * answer then would keep a name the store no longer has). A path with no inode any more needs
   * nothing.
   */
  void checkStatus(Change c, String path) throws IOException {
    long now = System.currentTimeMillis();
    SyncPolicy policy = tree.policy();
    policy.countStatusCheck();
    Optional<UfsStatus> s = c.stat(tree.mounts().resolve(path));
    Walk w = c.walk(path);
    if (!w.complete()) {
      return;
    }
    InodeEntry current = w.last();
    List<Edit> edits = new ArrayList<>();
    List<Long> files = new ArrayList<>();
    if (reconcile(c, current, path, s, now, edits, files) == current.getId()) {
      policy.statusChecked(current.getId(), now);
    }
    if (!edits.isEmpty()) {
      // The callers wait for the commit through c.stagedAhead(), which is the same applied
      // future; only the removal of the files' blocks follows it here.
      var unused =
          c.commitDiscovered(edits).applied().thenRun(() -> tree.workers().removeFiles(files));
    }
  }

  /**
   * Adds the edits that bring one inode in line with the store's status of its path (empty: the
   * store has nothing there), and the ids of files whose cached blocks must go. Returns the id at
   * the inode's name afterwards: its own when nothing changes, a new one when it is replaced, -1
   * when it is deleted. The change holds the path's write lock (nothing below it is in flight); it
   * stages the edits and then queues the files' blocks for removal.
   */
  long reconcile(
      Change c,
      InodeEntry n,
      String path,
      Optional<UfsStatus> status,
      long syncMs,
      List<Edit> edits,
      List<Long> files) {
    if ((!n.getDirectory() && !n.getComplete()) || n.getNamespaceOnly() || n.getLinksCount() > 0) {
      return n.getId();
    }
    UfsStatus s = status.orElse(null);
    boolean replace =
        s != null
            && (s.directory() != n.getDirectory()
                || UfsMetadataLoader.fileType(s.type()) != n.getFileType()
                || (!n.getDirectory() && changed(n, s)));
    if (s != null && !replace) {
      return n.getId();
    }
    MountTable mounts = tree.mounts();
    if (mounts.at(path) != null || !mounts.mountPointsBelow(path).isEmpty()) {
      return n.getId();
    }
    tree.forEachFileBelow(n, f -> files.add(InodeTree.dataId(f)));
    edits.add(
        Edit.put(
            JournalEntry.newBuilder()
                .setDeleteInode(DeleteInodeEntry.newBuilder().setId(n.getId()))));
    if (s == null) {
      tree.policy().countDeleted();
      return -1;
    }
    InodeEntry.Builder fresh =
        tree.loader().toInode(s, c.newInodeId(), n.getParentId(), n.getName(), syncMs);
    edits.add(Edit.inode(fresh));
    tree.policy().countReplaced();
    return fresh.getId();
  }

  /**
   * Whether a file's content in the store differs from what its inode mirrors: a regular file's
   * bytes, a symbolic link's target, a device's number.
   */
  private static boolean changed(InodeEntry n, UfsStatus s) {
    switch (n.getFileType()) {
      case FILE_TYPE_SYMLINK:
        return !n.getSymlinkTarget().equals(s.symlinkTarget());
      case FILE_TYPE_CHAR_DEVICE:
      case FILE_TYPE_BLOCK_DEVICE:
        return n.getRdev() != s.rdev();
      case FILE_TYPE_FIFO:
      case FILE_TYPE_SOCKET:
        return false;
      default:
        break;
    }
    if (!n.getUfsFingerprint().isEmpty() && !s.fingerprint().isEmpty()) {
      return !n.getUfsFingerprint().equals(s.fingerprint());
    }
    return n.getLength() != s.length() || n.getModificationTimeMs() != s.modificationTimeMs();
  }
}
