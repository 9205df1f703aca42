package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.proto.BlockInfo;
import io.strata.proto.FileInfo;
import io.strata.proto.PersistenceState;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespace's side of persisting a file that is in a worker's cache only (write types
 * ASYNC_THROUGH and MUST_CACHE) in two steps, so that no lock is held while a worker writes the
 * bytes. {@link #plan} reads what to write and names a hidden temporary store path beside the file;
 * a worker writes the blocks there; {@link #publish} then, holding the path's write lock, moves the
 * temporary file to the file's name in the store and journals the file as persisted, but only when
 * the file is still that content at a path of the same mount. A file deleted, replaced or given a
 * new version meanwhile is never published: its temporary file is deleted instead. Because the move
 * happens under the lock, a file written through at the same name meanwhile is never overwritten by
 * older content.
 */
public final class PersistChanges {
  private static final Logger LOG = LoggerFactory.getLogger(PersistChanges.class);

  /**
   * Marks the temporary file as one the stores leave out of listings (their own temporary files
   * carry it), so that a sync never takes it for a file.
   */
  private static final String TEMP_MARKER = UnderFileSystem.TEMP_MARKER + "persist-";

  private final InodeTree tree;
  private final ChangeRunner runner;
  private final PosixFiles posix;

  PersistChanges(InodeTree tree, ChangeRunner runner, PosixFiles posix) {
    this.tree = tree;
    this.runner = runner;
    this.posix = posix;
  }

  /** What to write for one file, and where: read under no lock. */
  public record Plan(
      InodeEntry file,
      String path,
      MountTable.Resolution where,
      String tempUfsUri,
      List<BlockInfo> blocks) {}

  /**
   * The plan of persisting the file of inode {@code id}; empty when there is nothing to write (it
   * is gone, a directory, incomplete, in its store already, or MUST_CACHE and not {@code
   * evenNotPersisted}).
   */
  Optional<Plan> plan(long id, boolean evenNotPersisted) {
    InodeEntry n = tree.store().peek(id);
    String path = n == null ? null : tree.pathOf(id);
    if (path == null || n.getDirectory() || !n.getComplete()) {
      return Optional.empty();
    }
    PersistenceState state = n.getPersistenceState();
    if (state == PersistenceState.PERSISTENCE_PERSISTED
        || (state == PersistenceState.PERSISTENCE_NOT_PERSISTED && !evenNotPersisted)) {
      return Optional.empty();
    }
    MountTable.Resolution where = tree.mounts().resolve(path);
    return Optional.of(
        new Plan(n, path, where, tempUri(where.ufsUri(), InodeTree.dataId(n)), tree.blocks(n)));
  }

  /** A hidden name beside {@code ufsUri}, the same for every attempt at one content. */
  static String tempUri(String ufsUri, long dataId) {
    String name = PathNames.name(ufsUri);
    return ufsUri.substring(0, ufsUri.length() - name.length()) + "." + name + TEMP_MARKER + dataId;
  }

  /**
   * Moves what a worker wrote at the plan's temporary path to the file's name and journals the file
   * persisted with the store's fingerprint, its other names (hard links) brought to the content in
   * the store too; completes with the file's info. When the file changed meanwhile (see the class),
   * deletes the temporary file and completes empty.
   */
  CompletableFuture<Optional<FileInfo>> publish(Plan plan) {
    long id = plan.file().getId();
    String path = tree.pathOf(id);
    if (path == null) {
      discard(plan);
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          UnderFileSystem store = c.store(plan.where().mount());
          InodeEntry now = c.view().get(id);
          MountTable.Resolution where = tree.mounts().resolve(path);
          if (now == null
              || !path.equals(c.view().pathOf(id))
              || !sameContent(plan.file(), now)
              || where.mount().getMountId() != plan.where().mount().getMountId()) {
            discard(store, plan.tempUfsUri());
            return CompletableFuture.completedFuture(Optional.empty());
          }
          store.rename(plan.tempUfsUri(), where.ufsUri(), true);
          String fingerprint = store.fingerprint(where.ufsUri());
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.update(
                          id,
                          cur -> {
                            if (cur == null || !sameContent(plan.file(), cur)) {
                              return null;
                            }
                            return cur.toBuilder()
                                .setNamespaceOnly(false)
                                .setPersistenceState(PersistenceState.PERSISTENCE_PERSISTED)
                                .setUfsFingerprint(fingerprint)
                                .setUfsSyncTimeMs(System.currentTimeMillis());
                          })));
          InodeEntry done = s.inode(id);
          if (done == null) {
            return CompletableFuture.completedFuture(Optional.empty());
          }
          if (done.getLinksCount() > 0) {
            posix.relinkOtherNames(c, path, done);
          }
          FileInfo info = tree.info(done, path);
          return s.applied().thenApply(x -> Optional.of(info));
        });
  }

  /** Whether {@code now} is still the not-persisted content {@code seen} was. */
  private static boolean sameContent(InodeEntry seen, InodeEntry now) {
    return InodeTree.dataId(now) == InodeTree.dataId(seen)
        && now.getComplete()
        && now.getLength() == seen.getLength()
        && now.getPersistenceState() != PersistenceState.PERSISTENCE_PERSISTED;
  }

  /** Deletes a plan's temporary file outside a change (the file is gone from the namespace). */
  void discard(Plan plan) {
    try {
      discard(tree.loader().store(plan.where().mount()), plan.tempUfsUri());
    } catch (IOException e) {
      LOG.warn(
          "Cannot delete the temporary file {} of a persist: {}", plan.tempUfsUri(), e.toString());
    }
  }

  private static void discard(UnderFileSystem store, String tempUri) throws IOException {
    try {
      store.delete(tempUri, false);
    } catch (NoSuchFileException e) {
      // Never written, or deleted already.
    }
  }
}
