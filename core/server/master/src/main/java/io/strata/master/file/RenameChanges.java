package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renames, as rename(2) does them: a name moved within one mount, replacing what is at the
 * destination when asked. A rename locks both paths for writing, moves the name in the under store
 * first, stages its entries and completes when they are applied, queueing removal of the blocks of
 * a replaced file; see {@link Namespace}.
 */
final class RenameChanges {
  private static final Logger LOG = LoggerFactory.getLogger(RenameChanges.class);

  private final InodeTree tree;
  private final MountTable mounts;
  private final WorkerRegistry workers;
  private final ChangeRunner runner;
  private final NameChanges names;
  private final TreeChanges trees;

  RenameChanges(InodeTree tree, ChangeRunner runner, NameChanges names, TreeChanges trees) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.workers = tree.workers();
    this.runner = runner;
    this.names = names;
    this.trees = trees;
  }

  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  /**
   * Renames in the store and the namespace within one mount; ids (so block ids) are kept, and so is
   * the modification time (the change time moves), as rename(2) does. With {@code replace}, an
   * existing destination is replaced in the same step: a non-directory by a non-directory, an empty
   * directory by a directory (FAILED_PRECONDITION with ENOTDIR, EISDIR or ENOTEMPTY otherwise); two
   * names of one file leave both as they are.
   */
  CompletableFuture<Void> rename(String src, String dst, boolean replace) {
    if (src.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot rename the root directory /"));
    }
    if (src.equals(dst)) {
      // Namespace#rename answers a replacing rename of a name onto itself.
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot rename " + src + " to itself"));
    }
    if (PathNames.isUnder(dst, src)) {
      return CompletableFuture.failedFuture(
          new StrataException(
              ErrorCode.INVALID_ARGUMENT,
              PosixError.EINVAL,
              "Cannot move " + src + " under itself: " + dst));
    }
    return runner.run(src, c -> renameLocked(c, src, dst, replace));
  }

  /** The rename itself, run by the change runner. */
  private CompletableFuture<Void> renameLocked(Change c, String src, String dst, boolean replace)
      throws IOException {
    c.lock(PathLocks.Request.writing(src, dst));
    Walk sw = c.walkLoading(src);
    if (!sw.complete()) {
      throw StrataException.notFound(src);
    }
    InodeEntry n = sw.last();
    long srcParent = sw.parentOfLast().getId();
    checkMovable(src);
    MountTable.Resolution from = mounts.resolve(src);
    MountTable.Resolution to = mounts.resolve(dst);
    checkSameMount(src, dst, from, to);
    mounts.requireWritable(src);
    long dstParentId = destinationFolder(c, src, dst);
    FileChanges.checkStorePath(tree, dst);
    Walk dw = c.walkLoading(dst);
    InodeEntry replaced = dw.complete() ? dw.last() : null;
    if (replaced != null) {
      if (!replace) {
        throw StrataException.alreadyExists(dst);
      }
      if (replaced.getId() == n.getId()) {
        // Two names of one file: rename(2) does nothing.
        return done(null);
      }
      checkReplaceable(c, n, replaced, dst);
    }
    if (!n.getDirectory() && !n.getComplete()) {
      throw StrataException.failedPrecondition(
          "File is still being written: " + src + " (complete it before renaming)");
    }
    UnderFileSystem store = c.store(from.mount());
    String before =
        n.getDirectory() || n.getNamespaceOnly() ? null : fingerprintOrNull(store, from.ufsUri());
    moveInStore(store, n, replaced, from, to, src, dst);

    long nowNs = InodeTimes.nowNs();
    String dstName = PathNames.name(dst);
    String srcName = PathNames.name(src);
    List<Edit> edits = new ArrayList<>();
    List<Long> files = new ArrayList<>();
    if (replaced != null && names.removeName(replaced, dstParentId, dstName, nowNs, edits)) {
      tree.forEachFileBelow(replaced, f -> files.add(InodeTree.dataId(f)));
    }
    String fingerprint = fingerprintAfterMove(store, n, before, to);
    if (n.getLinksCount() > 0 || fingerprint != null) {
      // A file with several names: which of its names moved is in the inode itself.
      edits.add(
          Edit.update(
              n.getId(),
              cur -> {
                if (cur == null) {
                  throw StrataException.notFound(src);
                }
                InodeEntry.Builder moved =
                    NameChanges.moved(cur, srcParent, srcName, dstParentId, dstName);
                InodeTimes.changed(moved, nowNs);
                return fingerprint == null ? moved : moved.setUfsFingerprint(fingerprint);
              }));
    } else {
      edits.add(
          Edit.put(
              JournalEntry.newBuilder()
                  .setRename(
                      RenameEntry.newBuilder()
                          .setId(n.getId())
                          .setNewParentId(dstParentId)
                          .setNewName(dstName)
                          .setModificationTimeMs(n.getModificationTimeMs())
                          .setChangeTimeNs(nowNs))));
    }
    Edit.foldersChanged(edits, srcParent, dstParentId);
    ChangeStaging.Staged s = c.commit(edits);
    return s.applied()
        .thenApply(
            x -> {
              workers.removeFiles(files);
              return null;
            });
  }

  /** Fails when {@code src} is a mount point or has one below it. */
  private void checkMovable(String src) throws StrataException {
    if (mounts.at(src) != null) {
      throw StrataException.invalidArgument(
          "Cannot rename mount point " + src + ": unmount it and mount it at the new path");
    }
    List<String> below = mounts.mountPointsBelow(src);
    if (!below.isEmpty()) {
      throw StrataException.invalidArgument(
          "Cannot rename "
              + src
              + ": mount point "
              + below.get(0)
              + " is below it (unmount it first)");
    }
  }

  /**
   * Fails with EXDEV when the two paths are in different mounts, as rename(2) does across file
   * systems.
   */
  private static void checkSameMount(
      String src, String dst, MountTable.Resolution from, MountTable.Resolution to)
      throws StrataException {
    if (from.mount().getMountId() != to.mount().getMountId()) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          PosixError.EXDEV,
          "Cannot rename across mounts: "
              + src
              + " is in mount "
              + from.mount().getPath()
              + ", "
              + dst
              + " is in mount "
              + to.mount().getPath()
              + " (copy and delete instead)");
    }
  }

  /** The id of the folder {@code dst} goes into; fails when it is missing or not a folder. */
  private long destinationFolder(Change c, String src, String dst) throws IOException {
    String dstParent = PathNames.parent(dst);
    Walk pw = c.walkLoading(dstParent);
    if (!pw.complete()) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "Parent directory does not exist: "
              + dstParent
              + " (create it before renaming "
              + src
              + " into it)");
    }
    if (!pw.last().getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR, "Not a directory: " + dstParent);
    }
    return pw.last().getId();
  }

  /** Moves the name in the under store, replacing what the store has at the destination. */
  private static void moveInStore(
      UnderFileSystem store,
      InodeEntry n,
      InodeEntry replaced,
      MountTable.Resolution from,
      MountTable.Resolution to,
      String src,
      String dst)
      throws IOException {
    if (!n.getNamespaceOnly()) {
      try {
        // A target only the namespace holds is not in the store's way.
        if (replaced != null && !replaced.getNamespaceOnly()) {
          store.rename(from.ufsUri(), to.ufsUri(), true);
        } else {
          store.rename(from.ufsUri(), to.ufsUri());
        }
      } catch (NoSuchFileException e) {
        // The store moved it already: an earlier attempt of this rename whose answer was
        // lost with the leader that made it (the client's retry reaches a new leader).
        if (store.exists(from.ufsUri()) || !store.exists(to.ufsUri())) {
          throw e;
        }
        LOG.info("{} was moved to {} in the under store already; the namespace follows", src, dst);
      }
    } else if (replaced != null && !replaced.getNamespaceOnly()) {
      deleteInStore(store, to.ufsUri());
    }
  }

  /**
   * The fingerprint the moved file has in the store, when the move changed it; null when it did not
   * or cannot be told.
   */
  private static String fingerprintAfterMove(
      UnderFileSystem store, InodeEntry n, String before, MountTable.Resolution to) {
    String after = null;
    if (before != null && before.equals(n.getUfsFingerprint())) {
      String now = fingerprintOrNull(store, to.ufsUri());
      // An object store renames by copying, and the copy of the same bytes can get another
      // ETag (a multipart object's is recomputed); readers compare the store's fingerprint
      // with this one. Followed only when the namespace had the store's fingerprint before
      // the rename, so that a change made behind Strata's back is never taken for it.
      if (now != null && !now.equals(before)) {
        after = now;
      }
    }
    return after;
  }

  /** Fails, with the POSIX error rename(2) gives, when {@code n} may not replace {@code old}. */
  private void checkReplaceable(Change c, InodeEntry n, InodeEntry old, String dst)
      throws IOException {
    if (mounts.at(dst) != null || !mounts.mountPointsBelow(dst).isEmpty()) {
      throw StrataException.failedPrecondition(
          "Cannot replace " + dst + ": a mount point is" + " at or below it (unmount it first)");
    }
    if (n.getDirectory() && !old.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.ENOTDIR,
          "Cannot replace " + dst + " by a directory: it is not a directory");
    }
    if (!n.getDirectory() && old.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.EISDIR,
          "Cannot replace directory " + dst + " by a file");
    }
    if (old.getDirectory() && trees.hasChild(c, old, dst, name -> true)) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.ENOTEMPTY,
          "Cannot replace " + dst + ": the directory is not empty");
    }
  }

  /** Deletes a file or empty directory from a store; one already gone is fine. */
  private static void deleteInStore(UnderFileSystem store, String uri) throws IOException {
    try {
      store.delete(uri, false);
    } catch (NoSuchFileException e) {
      // Never written there (namespace only, or still being written): nothing to remove.
    }
  }

  /** A path's fingerprint in its store; null when the store cannot tell it now. */
  private static String fingerprintOrNull(UnderFileSystem store, String uri) {
    try {
      return store.fingerprint(uri);
    } catch (IOException e) {
      LOG.debug("Cannot read the fingerprint of {}: {}", uri, e.toString());
      return null;
    }
  }
}
