package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.proto.MountHealth;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.AddMountEntry;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.DeleteMountEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.underfs.UfsStatus;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Mounting under-store folders at namespace paths and removing them, as {@link Namespace}'s changes
 * are made: the mount point locked for writing, journaled, with every failure a {@link
 * StrataException} naming the path and what to do. Both run on a lane (they call stores and wait
 * for their entries to apply before the next step).
 */
public final class NamespaceMounts {
  private static final Logger LOG = LoggerFactory.getLogger(NamespaceMounts.class);

  private final InodeTree tree;
  private final ChangeRunner runner;
  private final Namespace namespace;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;

  NamespaceMounts(InodeTree tree, ChangeRunner runner, Namespace namespace) {
    this.tree = tree;
    this.runner = runner;
    this.namespace = namespace;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.workers = tree.workers();
  }

  /**
   * Mounts an under-store directory at a new path, or at an empty directory, under an existing
   * directory. The directory's metadata is loaded from the new store on first access.
   */
  public CompletableFuture<MountInfo> mount(
      String path, String ufsUri, Map<String, String> options, boolean readOnly) {
    try {
      if (path.equals(PathNames.ROOT)) {
        throw StrataException.invalidArgument(
            "Cannot mount on /: the root mount is set by strata.master.root.ufs");
      }
      if (ufsUri.isEmpty()) {
        throw StrataException.invalidArgument("No under-store URI given to mount at " + path);
      }
      MountOptionPolicy.validate(path, ufsUri, options);
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(
        path,
        c -> {
          if (c.inline()) {
            throw Change.NeedsLane.INSTANCE;
          }
          // Checked before taking the lock: a remote store may be slow to answer.
          UfsStatus status;
          try {
            // A folder mounted may be a symbolic link to the real one.
            status = loader.storeToMount(path, ufsUri, options).getTargetStatus(ufsUri);
          } catch (IllegalArgumentException e) {
            throw StrataException.invalidArgument(
                "Cannot mount " + ufsUri + " at " + path + ": " + e.getMessage());
          } catch (NoSuchFileException e) {
            throw new StrataException(
                ErrorCode.NOT_FOUND,
                "Under-store directory does not exist: "
                    + ufsUri
                    + " (create it before mounting it at "
                    + path
                    + ")");
          }
          if (!status.directory()) {
            throw StrataException.invalidArgument(
                "Not a directory in the under store: " + ufsUri + " (mount a directory)");
          }
          c.lock(PathLocks.Request.writing(path));
          if (mounts.at(path) != null) {
            throw new StrataException(
                ErrorCode.ALREADY_EXISTS,
                "A mount already exists at " + path + " (unmount it first)");
          }
          Walk w = c.walkLoading(path);
          long id;
          long parentId;
          if (w.complete()) {
            InodeEntry existing = w.last();
            if (!existing.getDirectory()
                || namespace.trees().hasChild(c, existing, path, name -> true)) {
              throw StrataException.failedPrecondition(
                  "Cannot mount on "
                      + path
                      + ": it exists and is not an empty directory (choose a new path)");
            }
            id = existing.getId();
            parentId = existing.getParentId();
          } else {
            FileChanges.checkParents(w, path, false);
            id = c.newInodeId();
            parentId = w.last().getId();
          }
          MountInfo mount =
              MountInfo.newBuilder()
                  .setMountId(tree.newMountId())
                  .setPath(path)
                  .setUfsUri(ufsUri)
                  .putAllOptions(options)
                  .setReadOnly(readOnly)
                  .build();
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.put(
                          JournalEntry.newBuilder()
                              .setAddMount(AddMountEntry.newBuilder().setMount(mount))),
                      Edit.inode(loader.toInode(status, id, parentId, PathNames.name(path)))));
          return s.applied()
              .thenApply(
                  x -> {
                    LOG.info("Mounted {} at {}", ufsUri, path);
                    return mount;
                  });
        });
  }

  /**
   * Removes a mount and every inode below its mount point from the namespace (the store is
   * untouched), and queues removal of the blocks cached for those files.
   */
  public CompletableFuture<Void> unmount(String path) {
    if (path.equals(PathNames.ROOT)) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument(
              "The root mount cannot be removed (it is set by strata.master.root.ufs)"));
    }
    return runner.run(
        path,
        c -> {
          if (c.inline()) {
            throw Change.NeedsLane.INSTANCE;
          }
          c.lock(PathLocks.Request.writing(path));
          MountInfo mount = mounts.at(path);
          if (mount == null) {
            throw new StrataException(
                ErrorCode.NOT_FOUND,
                "No mount at " + path + " (list the mounts to see where they are)");
          }
          List<String> below = mounts.mountPointsBelow(path);
          if (!below.isEmpty()) {
            throw StrataException.failedPrecondition(
                "Unmount " + below.get(0) + " first: it is mounted below " + path);
          }
          List<Edit> edits = new ArrayList<>();
          edits.add(
              Edit.put(
                  JournalEntry.newBuilder()
                      .setDeleteMount(
                          DeleteMountEntry.newBuilder().setMountId(mount.getMountId()))));
          Walk w = c.walk(path);
          List<Long> files = new ArrayList<>();
          if (w.complete()) {
            InodeEntry point = w.last();
            tree.forEachFileBelow(point, f -> files.add(InodeTree.dataId(f)));
            edits.add(
                Edit.put(
                    JournalEntry.newBuilder()
                        .setDeleteInode(DeleteInodeEntry.newBuilder().setId(point.getId()))));
          }
          Namespace.join(c.commit(edits).applied());
          workers.removeFiles(files);
          loader.forget(mount);
          // The enclosing store may have a directory of that name, hidden while mounted over.
          Walk parent = c.walk(PathNames.parent(path));
          if (parent.complete() && parent.last().getDirectory()) {
            Optional<UfsStatus> hidden = c.stat(mounts.resolve(path));
            if (hidden.isPresent()) {
              Namespace.join(
                  c.commit(
                          List.of(
                              Edit.inode(
                                  loader.toInode(
                                      hidden.get(),
                                      c.newInodeId(),
                                      parent.last().getId(),
                                      PathNames.name(path)))))
                      .applied());
            }
          }
          LOG.info("Unmounted {} from {}", mount.getUfsUri(), path);
          return CompletableFuture.completedFuture(null);
        });
  }

  /** How each mount's under store answers the master, the root first. */
  public List<MountHealth> health() {
    List<MountHealth> out = new ArrayList<>();
    for (io.strata.master.ufs.StoreGuard.Health h : loader.health(mounts.all())) {
      out.add(
          MountHealth.newBuilder()
              .setPath(h.mountPath())
              .setUfsUri(h.ufsUri())
              .setAnswering(h.answering())
              .setTimeoutsInARow(h.timeoutsInARow())
              .setUnavailableUntilMs(h.answering() ? 0 : h.unavailableUntilMs())
              .setTimeouts(h.timeouts())
              .setRefused(h.refused())
              .setCallsInProgress(h.busyThreads())
              .build());
    }
    return out;
  }

  /**
   * Every mount, the root first.
   *
   * @param includeSecrets show secret option values as they are instead of masked
   * @param storeOptionsOnly leave out the options that configure Strata itself
   */
  public List<MountInfo> listMounts(boolean includeSecrets, boolean storeOptionsOnly) {
    List<MountInfo> out = new ArrayList<>();
    for (MountInfo m : mounts.all()) {
      out.add(MountOptionPolicy.view(m, includeSecrets, storeOptionsOnly));
    }
    return out;
  }
}
