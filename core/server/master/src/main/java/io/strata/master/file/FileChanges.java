package io.strata.master.file;

import io.strata.common.BlockIds;
import io.strata.common.LayoutFeature;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.FileInfo;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The changes that make and fill names: folders, files created and completed, and attributes set.
 * Each locks its path for writing (and, when it makes missing parents, the first of them), calls
 * the under store only where it must (a folder made there), stages its entries and completes when
 * they are applied; see {@link Namespace}.
 */
final class FileChanges {
  private final InodeTree tree;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final ChangeRunner runner;
  private final NameChanges names;
  private final PosixFiles posix;

  FileChanges(InodeTree tree, ChangeRunner runner, NameChanges names, PosixFiles posix) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.workers = tree.workers();
    this.runner = runner;
    this.names = names;
    this.posix = posix;
  }

  /**
   * Locks {@code path} for writing, and when parents must be made too (recursive), the first of
   * them, and walks it loading what is missing.
   */
  static Walk lockForCreate(Change c, String path, boolean recursive) throws IOException {
    PathLocks.Request locks = PathLocks.Request.writing(path);
    while (true) {
      c.lock(locks);
      Walk w = c.walkLoading(path);
      if (w.complete() || !recursive || !w.last().getDirectory()) {
        return w;
      }
      String firstMissing = w.pathAt(w.found() + 1);
      if (locks.writes(firstMissing)) {
        return w;
      }
      // Another change could make the same missing folder: hold it for writing.
      locks = locks.plusWrite(firstMissing);
    }
  }

  /**
   * Makes a directory in the store, then in the namespace (with missing parents if asked). The
   * directory and every parent it makes get {@code owner} and {@code group} ("" for the master's
   * default).
   */
  CompletableFuture<FileInfo> createDirectory(Namespace.CreateDirectory d) {
    String path = d.path();
    boolean recursive = d.recursive();
    return runner.run(
        path,
        c -> {
          Walk w = lockForCreate(c, path, recursive);
          if (w.complete()) {
            InodeEntry existing = w.last();
            if (!existing.getDirectory()) {
              throw new StrataException(
                  ErrorCode.ALREADY_EXISTS, "A file already exists at " + path);
            }
            if (d.allowExists() || c.leftByAnEarlierAttempt(existing)) {
              // What the walk found may be staged and not yet applied (an earlier attempt's
              // change still in flight): answer only once it is, so nothing is acknowledged that a
              // lost lead could still drop.
              FileInfo info = tree.info(existing, path);
              return c.stagedAhead().thenApply(x -> info);
            }
            throw StrataException.alreadyExists(path);
          }
          checkParents(w, path, recursive);
          checkWritable(path);
          checkStorePath(tree, path);
          MountTable.Resolution r = mounts.resolve(path);
          try {
            c.store(r.mount()).mkdirs(r.ufsUri(), recursive);
          } catch (FileAlreadyExistsException e) {
            // Created in the store behind Strata's back: adopt it.
          }
          List<Edit> edits = new ArrayList<>();
          InodeEntry.Builder made =
              addDirectories(c, w, w.names().size(), d.mode(), d.owner(), d.group(), edits);
          Edit.foldersChanged(edits, w.last().getId());
          ChangeStaging.Staged s = c.commit(edits);
          c.made(made.getId());
          FileInfo info = tree.info(made.build(), path);
          return s.applied().thenApply(x -> info);
        });
  }

  /**
   * Checks the deepest existing ancestor of a missing path is a directory, and that only the last
   * name is missing unless {@code recursive}.
   */
  static void checkParents(Walk w, String path, boolean recursive) throws StrataException {
    if (!w.last().getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.ENOTDIR,
          "Not a directory: "
              + w.pathAt(w.found())
              + " is a file, so "
              + path
              + " cannot be created");
    }
    if (w.names().size() - w.found() > 1 && !recursive) {
      throw new StrataException(
          ErrorCode.NOT_FOUND,
          "Parent directory does not exist: "
              + PathNames.parent(path)
              + " (create it first, or create parents too: `strata fs mkdir -p`)");
    }
  }

  /**
   * Adds edits for directories for the walk's missing names up to {@code depth}, all owned by
   * {@code owner} and {@code group}; the last one gets {@code mode}. Returns the deepest (the
   * walk's last inode when nothing is missing).
   */
  private InodeEntry.Builder addDirectories(
      Change c, Walk w, int depth, int mode, String owner, String group, List<Edit> edits) {
    InodeEntry.Builder made = w.last().toBuilder();
    for (int d = w.found() + 1; d <= depth; d++) {
      InodeEntry parent = made.build();
      int m = d == depth ? mode : 0;
      made =
          loader.newInode(
              c.newInodeId(),
              made.getId(),
              w.names().get(d - 1),
              true,
              SetGid.directoryMode(parent, m == 0 ? UfsMetadataLoader.DEFAULT_DIR_MODE : m),
              owner,
              SetGid.group(parent, group));
      Xattrs.inherit(parent, made);
      edits.add(Edit.inode(made));
    }
    return made;
  }

  /**
   * Creates an incomplete, empty file inode (a replaced file gets a new id); the store file appears
   * when a worker writes it to the returned {@code ufs_path}. The file and every parent it makes
   * get the request's owner and group ("" for the master's default). With {@code newVersion},
   * begins a new version of the complete file at the path instead ({@link
   * PosixFiles#beginVersion}).
   */
  CompletableFuture<FileInfo> createFile(Namespace.CreateFile r) {
    if (r.newVersion()) {
      return beginNewVersion(r);
    }
    try {
      checkNewFileRequest(r);
      if (r.cacheOnly()) {
        ClusterLayout.require(tree.store(), LayoutFeature.CACHE_ONLY_FILES);
      }
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(r.path(), c -> createFileLocked(c, r));
  }

  /**
   * Begins a new version of the complete file at the request's path; a new version always goes to
   * the under store, so a cache-only write type is refused.
   */
  private CompletableFuture<FileInfo> beginNewVersion(Namespace.CreateFile r) {
    if (r.cacheOnly()) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument(
              "A new version of"
                  + " "
                  + r.path()
                  + " is written through to the under store: write types"
                  + " ASYNC_THROUGH and MUST_CACHE apply to new files only"));
    }
    return posix.beginVersion(r.path());
  }

  /**
   * Fails with INVALID_ARGUMENT when a new file cannot be made as asked: at the root, or with a
   * negative block size.
   */
  private static void checkNewFileRequest(Namespace.CreateFile r) throws StrataException {
    String path = r.path();
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot create a file at /: give a file path");
    }
    if (r.blockSize() < 0) {
      throw StrataException.invalidArgument(
          "Negative block size " + r.blockSize() + " for " + path);
    }
  }

  /**
   * Where a created file's name goes: the folder that holds it (whose extended attributes the file
   * inherits), and the file it replaces (null when the path was free) with whether that file lost
   * its last name, so that its blocks go once the change is applied.
   */
  private record NewFileSlot(InodeEntry parent, InodeEntry replaced, boolean replacedGone) {}

  /** The create itself, run by the change runner once the request has been checked. */
  private CompletableFuture<FileInfo> createFileLocked(Change c, Namespace.CreateFile r)
      throws IOException {
    String path = r.path();
    Walk w = lockForCreate(c, path, r.recursive());
    List<Edit> edits = new ArrayList<>();
    long nowNs = InodeTimes.nowNs();
    NewFileSlot slot =
        w.complete() ? replaceExisting(c, w, r, nowNs, edits) : makeMissingParents(c, w, r, edits);
    InodeEntry.Builder file = newFileInode(c, w, r, slot);
    edits.add(Edit.inode(file));
    // The folder that gets a new name: the parent, or the deepest one that existed.
    Edit.foldersChanged(edits, slot.replaced() != null ? slot.parent().getId() : w.last().getId());
    ChangeStaging.Staged s = c.commit(edits);
    FileInfo info = tree.info(file.build(), path);
    long gone = slot.replacedGone() ? InodeTree.dataId(slot.replaced()) : -1;
    return s.applied()
        .thenApply(
            x -> {
              if (gone >= 0) {
                workers.removeFiles(List.of(gone));
              }
              return info;
            });
  }

  /**
   * Takes the name of the file at the walk's end for a new file, when the request overwrites: adds
   * the edits that remove the name from the old file, and deletes the old content from the store
   * when the new one is to stay out of it.
   */
  private NewFileSlot replaceExisting(
      Change c, Walk w, Namespace.CreateFile r, long nowNs, List<Edit> edits) throws IOException {
    String path = r.path();
    InodeEntry replaced = w.last();
    if (replaced.getDirectory()) {
      throw new StrataException(ErrorCode.ALREADY_EXISTS, "A directory already exists at " + path);
    }
    if (!r.overwrite()) {
      throw new StrataException(
          ErrorCode.ALREADY_EXISTS,
          "Path already exists: "
              + path
              + " (remove it first, or overwrite it: `strata fs cp -f`)");
    }
    checkWritable(path);
    InodeEntry parent = w.parentOfLast();
    // A new inode, so that blocks cached for the old content are never read as the new.
    // A file with other names (hard links) keeps them, with its old content.
    boolean replacedGone =
        names.removeName(replaced, parent.getId(), PathNames.name(path), nowNs, edits);
    if (r.cacheOnly() && backedByStore(replaced)) {
      // The new content stays out of the store for now: the old one must not stay under
      // the name, where a rename would leave it behind for a sync to load again.
      deleteStoreFile(c, mounts.resolve(path));
    }
    return new NewFileSlot(parent, replaced, replacedGone);
  }

  /**
   * Readies a free path for a new file: checks its parents, makes the missing ones in the store and
   * adds their edits (with the request's owner and group), when the request is recursive.
   */
  private NewFileSlot makeMissingParents(Change c, Walk w, Namespace.CreateFile r, List<Edit> edits)
      throws IOException {
    String path = r.path();
    checkParents(w, path, r.recursive());
    checkWritable(path);
    checkStorePath(tree, path);
    int parentDepth = w.names().size() - 1;
    if (w.found() < parentDepth) {
      MountTable.Resolution pr = mounts.resolve(PathNames.parent(path));
      c.store(pr.mount()).mkdirs(pr.ufsUri(), true);
    }
    InodeEntry madeParent =
        addDirectories(c, w, parentDepth, 0, r.owner(), r.group(), edits).build();
    return new NewFileSlot(madeParent, null, false);
  }

  /**
   * The new file's incomplete, empty inode in {@code slot}'s folder, with the request's mode,
   * owner, block size and write type; its group follows a set-group-ID folder that existed.
   */
  private InodeEntry.Builder newFileInode(
      Change c, Walk w, Namespace.CreateFile r, NewFileSlot slot) {
    long parentId = slot.parent().getId();
    InodeEntry parent = parentId == w.last().getId() ? w.last() : null;
    InodeEntry.Builder file =
        loader.newInode(
            c.newInodeId(),
            parentId,
            PathNames.name(r.path()),
            false,
            r.mode(),
            r.owner(),
            parent == null ? r.group() : SetGid.group(parent, r.group()));
    Xattrs.inherit(slot.parent(), file);
    if (r.blockSize() > 0) {
      file.setBlockSize(r.blockSize());
    }
    if (r.cacheOnly()) {
      file.setNamespaceOnly(true).setPersistenceState(r.persistence());
    }
    if (r.lease()) {
      file.setLeased(true);
    }
    return file;
  }

  /**
   * Marks a file complete with its length, or makes the new version {@code fileId} of it (begun by
   * {@link PosixFiles#beginVersion}) its content; with the attributes the writer set meanwhile, all
   * in one journal entry. Repeating it with the same length is harmless.
   *
   * @param fileId the id the writer's create gave, or 0 for whatever file is at {@code path}
   * @throws StrataException STALE when {@code path} is another file now, or the version is no
   *     longer the one being written (another writer began a newer one)
   */
  CompletableFuture<FileInfo> completeFile(
      String path, long fileId, long length, String fingerprint, CompletedAttributes attributes) {
    try {
      Xattrs.checkNames(path, attributes.xattrs().keySet());
      Xattrs.checkValues(path, attributes.xattrs());
      Xattrs.checkSize(path, attributes.xattrs());
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          InodeEntry n = c.resolve(path);
          if (n.getDirectory()) {
            throw StrataException.invalidArgument("Path is a directory: " + path);
          }
          if (fileId != 0 && fileId != n.getId()) {
            if (n.getWritingDataId() == fileId || InodeTree.dataId(n) == fileId) {
              return posix.completeVersion(c, path, n, fileId, length, fingerprint, attributes);
            }
            Change.checkSameFile(n, fileId, path, "this write was not kept: write it again");
          }
          if (n.getComplete()) {
            if (n.getLength() == length) {
              // Answered once the completion found is applied (it may be a retried call's own,
              // still in flight).
              FileInfo info = tree.info(n, path);
              return c.stagedAhead().thenApply(x -> info);
            }
            throw StrataException.failedPrecondition(
                "File is already complete: "
                    + path
                    + " (length "
                    + n.getLength()
                    + "); create it again with overwrite to replace it");
          }
          checkLength(path, length, n.getBlockSize());
          boolean relink = n.getLinksCount() > 0 && !n.getNamespaceOnly();
          if (relink) {
            // Its other names are brought to the new content in the store: on the lane.
            c.store(mounts.resolve(path).mount());
          }
          long nowNs = InodeTimes.nowNs();
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.update(
                          n.getId(),
                          cur -> {
                            if (cur == null) {
                              throw StrataException.notFound(path);
                            }
                            InodeEntry.Builder done =
                                cur.toBuilder()
                                    .setLength(length)
                                    .setUfsFingerprint(fingerprint)
                                    .setComplete(true)
                                    .clearLeased()
                                    .setUfsSyncTimeMs(nowNs / 1_000_000L);
                            attributes.applyTo(done, nowNs);
                            return done;
                          })));
          InodeEntry completed = s.inode(n.getId());
          if (relink) {
            posix.relinkOtherNames(c, path, completed);
          }
          FileInfo info = tree.info(completed, path);
          return s.applied().thenApply(x -> info);
        });
  }

  /**
   * Makes a new file complete in one step, from content a worker already wrote without overwriting
   * at the store path {@code path} resolves to: the create and the completion of a writer that
   * makes, writes and closes a file at one time. Anything at the path is ALREADY_EXISTS (so of two
   * writers of one name exactly one succeeds); the store file just written is removed then, unless
   * the file at the path is backed by it.
   *
   * @param r the path, block size, mode, owner and group (as for a create; never recursive)
   * @param ufsPath the store path the worker wrote
   * @param mountId the mount {@code ufsPath} was resolved in
   * @throws StrataException FAILED_PRECONDITION when the path resolves elsewhere now (a mount
   *     changed while the content was written)
   */
  CompletableFuture<FileInfo> commitNewFile(
      Namespace.CreateFile r,
      String ufsPath,
      long mountId,
      long length,
      String fingerprint,
      CompletedAttributes attributes) {
    String path = r.path();
    try {
      checkNewFileRequest(r);
      Xattrs.checkNames(path, attributes.xattrs().keySet());
      Xattrs.checkValues(path, attributes.xattrs());
      Xattrs.checkSize(path, attributes.xattrs());
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    NewFileCommit commit =
        new NewFileCommit(tree, r, ufsPath, mountId, length, fingerprint, attributes);
    return runner.run(path, commit::run);
  }

  /** Whether a name's entry is a complete file whose content is its store file. */
  static boolean backedByStore(InodeEntry n) {
    return !n.getDirectory() && n.getComplete() && !n.getNamespaceOnly();
  }

  /** Deletes the store file at a resolved path; one that is not there is no error. */
  private static void deleteStoreFile(Change c, MountTable.Resolution where) throws IOException {
    try {
      c.store(where.mount()).delete(where.ufsUri(), false);
    } catch (NoSuchFileException e) {
      // Gone already: nothing to do.
    }
  }

  /** Fails with INVALID_ARGUMENT when a file cannot have {@code length} bytes. */
  static void checkLength(String path, long length, long blockSize) throws StrataException {
    if (length < 0 || BlockIds.blockCount(length, blockSize) > BlockIds.MAX_BLOCKS_PER_FILE) {
      throw StrataException.invalidArgument(
          "Bad length " + length + " for " + path + " with block size " + blockSize);
    }
  }

  /**
   * Sets mode, owner, group, modification time, extended attributes and/or time to live in the
   * namespace only: the under store is not written, and the path is not checked against it (a sync
   * could replace the inode), so the id, blocks, length and fingerprint stay. A change that changes
   * nothing is not journaled. The attributes survive restarts with the journaled inode; a file
   * later replaced because its content changed in the store takes the store's attributes again.
   *
   * <p>A time to live needs the cluster at metadata layout 2 (FAILED_PRECONDITION before {@code
   * strata fsadmin upgrade finalize}). One that frees is taken in a read-only mount; one that
   * deletes is refused where a delete would be (the root, a mount point).
   */
  CompletableFuture<FileInfo> setAttribute(String path, AttributeChange change) {
    try {
      if (change.ttl() != null) {
        ClusterLayout.require(tree.store(), LayoutFeature.TTL);
      }
      change.check(path);
      if (change.deletesOnExpiry() && (path.equals(PathNames.ROOT) || mounts.at(path) != null)) {
        throw StrataException.failedPrecondition(
            "Cannot give "
                + path
                + " a time to live"
                + " that deletes it: it is a mount point (let it free its cached blocks instead, or"
                + " unmount it)");
      }
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          InodeEntry n = c.resolve(path);
          if (!change.onlyFreesOnExpiry()) {
            checkWritable(path);
          }
          long nowNs = InodeTimes.nowNs();
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.update(
                          n.getId(),
                          cur -> {
                            if (cur == null) {
                              throw StrataException.notFound(path);
                            }
                            InodeEntry.Builder changed = change.applyTo(cur);
                            Xattrs.checkSize(path, changed.getXattrsMap());
                            if (change.changesInode()) {
                              // As POSIX file systems do, even when the values stay as they were.
                              InodeTimes.changed(changed, nowNs);
                            }
                            return changed.build().equals(cur) ? null : changed;
                          })));
          InodeEntry after = s.inode(n.getId());
          FileInfo info = tree.info(after != null ? after : c.view().get(n.getId()), path);
          return s.applied().thenApply(x -> info);
        });
  }

  void checkWritable(String path) throws StrataException {
    mounts.requireWritable(path);
  }

  /**
   * Fails with ENAMETOOLONG when the under store of {@code path} cannot hold an entry there because
   * its own path would be too long (a local folder's absolute path past 64 KiB).
   */
  static void checkStorePath(InodeTree tree, String path) throws IOException {
    MountTable.Resolution r = tree.mounts().resolve(path);
    if (tree.loader().store(r.mount()).pathTooLong(r.ufsUri())) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          PosixError.ENAMETOOLONG,
          "Path too long for its under store: "
              + path
              + " would be "
              + r.ufsUri()
              + " there, past the store's limit; choose a shorter path");
    }
  }
}
