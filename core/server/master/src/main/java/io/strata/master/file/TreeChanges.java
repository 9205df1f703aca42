package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Predicate;

/**
 * Deletes: a name and the subtree below it. A delete locks its path for writing, changes the under
 * store first, stages its entries and completes when they are applied, queueing removal of the
 * blocks of the files that went; see {@link Namespace}. Renames are {@link RenameChanges}.
 */
final class TreeChanges {
  private static <T> CompletableFuture<T> done(T value) {
    return CompletableFuture.completedFuture(value);
  }

  private final InodeTree tree;
  private final MountTable mounts;
  private final WorkerRegistry workers;
  private final ChangeRunner runner;
  private final NameChanges names;

  TreeChanges(InodeTree tree, ChangeRunner runner, NameChanges names) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.workers = tree.workers();
    this.runner = runner;
    this.names = names;
  }

  /**
   * Deletes in the store and the namespace, and queues removal of the files' cached blocks.
   * Completes with whether it deleted (false only when {@code expected} did not match).
   */
  CompletableFuture<Boolean> delete(String path, Namespace.Delete d) {
    if (path.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument("Cannot delete the root directory /"));
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          Walk w = c.walkLoading(path);
          if (!w.complete()) {
            if (d.expected() != null) {
              return done(false);
            }
            throw StrataException.notFound(path);
          }
          InodeEntry n = w.last();
          InodeEntry parent = w.parentOfLast();
          if (d.expected() != null && !d.expected().equals(n)) {
            return done(false);
          }
          Change.checkSameFile(n, d.fileId(), path, "nothing was deleted");
          if (mounts.at(path) != null) {
            throw StrataException.failedPrecondition(
                "Cannot delete mount point " + path + ": unmount it instead");
          }
          List<String> below = mounts.mountPointsBelow(path);
          if (!below.isEmpty()) {
            throw StrataException.failedPrecondition(
                "Cannot delete "
                    + path
                    + ": "
                    + below.get(0)
                    + " is mounted below it (unmount it first)");
          }
          mounts.requireWritable(path);
          if (d.unlessVisibleChildren()
              && n.getDirectory()
              && hasChild(c, n, path, name -> !PathNames.isHidden(name))) {
            throw new StrataException(
                ErrorCode.FAILED_PRECONDITION,
                PosixError.ENOTEMPTY,
                "Directory is not empty: " + path);
          }
          if (n.getDirectory() && !d.recursive() && hasChild(c, n, path, name -> true)) {
            throw new StrataException(
                ErrorCode.FAILED_PRECONDITION,
                PosixError.ENOTEMPTY,
                "Directory is not empty: "
                    + path
                    + " (delete it with everything below it: `strata fs rm -R`)");
          }
          MountTable.Resolution r = mounts.resolve(path);
          try {
            c.store(r.mount()).delete(r.ufsUri(), d.recursive() && n.getDirectory());
          } catch (NoSuchFileException e) {
            // Gone from the store already, a file still being written, or one the store does not
            // hold (namespace only): the namespace decides.
          }
          long nowNs = InodeTimes.nowNs();
          List<Edit> edits = new ArrayList<>();
          // Files with names outside the subtree live on by them, with their blocks.
          Set<Long> survivors = names.detachSurvivors(n, nowNs, edits);
          List<Long> files = new ArrayList<>();
          if (names.removeName(n, parent.getId(), PathNames.name(path), nowNs, edits)) {
            tree.forEachFileBelow(
                n,
                f -> {
                  if (!survivors.contains(f.getId())) {
                    files.add(InodeTree.dataId(f));
                  }
                });
          }
          Edit.foldersChanged(edits, parent.getId());
          ChangeStaging.Staged s = c.commit(edits);
          return s.applied()
              .thenApply(
                  x -> {
                    workers.removeFiles(files);
                    return true;
                  });
        });
  }

  /**
   * Whether a directory has a child whose name {@code counts}, in the namespace and -- when its
   * children were never loaded -- in its under store. The caller holds the directory's write lock,
   * so nothing below it is in flight.
   */
  boolean hasChild(Change c, InodeEntry dir, String path, Predicate<String> counts)
      throws IOException {
    for (InodeStore.Child child : tree.store().children(dir.getId(), "", 2)) {
      if (counts.test(child.name())) {
        return true;
      }
    }
    if (dir.getChildrenLoaded()) {
      return false;
    }
    MountTable.Resolution r = mounts.resolve(path);
    try (UnderFileSystem.CloseableIterator<UfsStatus> it = c.store(r.mount()).list(r.ufsUri())) {
      while (it.hasNext()) {
        String name = it.next().name();
        if (UfsMetadataLoader.validName(name) && counts.test(name)) {
          return true;
        }
      }
      return false;
    } catch (NoSuchFileException e) {
      return false;
    }
  }
}
