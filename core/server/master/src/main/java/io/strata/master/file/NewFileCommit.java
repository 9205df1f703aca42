package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One {@link FileChanges#commitNewFile}: a new file made complete in one step from content a worker
 * already wrote to the store, run by the change runner once the request has been checked. It locks
 * the path for writing, refuses a path that is taken (removing the written content unless the file
 * there is backed by it) or that resolves elsewhere now, and journals the complete file in one
 * entry. It holds what the writer reported, so that its steps need not pass it along.
 */
final class NewFileCommit {
  private final InodeTree tree;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final Namespace.CreateFile request;
  private final String path;
  private final String ufsPath;
  private final long mountId;
  private final long length;
  private final String fingerprint;
  private final CompletedAttributes attributes;

  /**
   * @param request the path, block size, mode, owner and group (as for a create; never recursive)
   * @param ufsPath the store path the worker wrote
   * @param mountId the mount {@code ufsPath} was resolved in
   */
  NewFileCommit(
      InodeTree tree,
      Namespace.CreateFile request,
      String ufsPath,
      long mountId,
      long length,
      String fingerprint,
      CompletedAttributes attributes) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.request = request;
    this.path = request.path();
    this.ufsPath = ufsPath;
    this.mountId = mountId;
    this.length = length;
    this.fingerprint = fingerprint;
    this.attributes = attributes;
  }

  /**
   * Commits the file under the change {@code c}.
   *
   * @throws StrataException ALREADY_EXISTS when anything is at the path; FAILED_PRECONDITION when
   *     the path resolves elsewhere now (a mount changed while the content was written)
   */
  CompletableFuture<FileInfo> run(Change c) throws IOException {
    c.lock(PathLocks.Request.writing(path));
    // The parent is loaded when missing, but not the name: the store holds the content
    // just written there, which is this file, not one to load.
    c.walkLoading(PathNames.parent(path));
    Walk w = c.walk(path);
    MountTable.Resolution where = mounts.resolve(path);
    boolean samePlace = where.mount().getMountId() == mountId && where.ufsUri().equals(ufsPath);
    if (w.complete()) {
      return adoptOrRefuse(c, w.last(), where, samePlace);
    }
    FileChanges.checkParents(w, path, false);
    mounts.requireWritable(path);
    if (!samePlace) {
      throw mountsChanged(where);
    }
    InodeEntry parent = w.last();
    InodeEntry.Builder file = completedFile(c, parent);
    List<Edit> edits = new ArrayList<>();
    edits.add(Edit.inode(file));
    Edit.foldersChanged(edits, parent.getId());
    ChangeStaging.Staged s = c.commit(edits);
    FileInfo info = tree.info(file.build(), path);
    return s.applied().thenApply(x -> info);
  }

  /**
   * Answers a commit to a path that is taken: a file a sync loaded from this very content gets the
   * writer's attributes; anything else is ALREADY_EXISTS, and the content written is removed unless
   * the file at the path is backed by it.
   */
  private CompletableFuture<FileInfo> adoptOrRefuse(
      Change c, InodeEntry existing, MountTable.Resolution where, boolean samePlace)
      throws IOException {
    if (samePlace
        && FileChanges.backedByStore(existing)
        && fingerprint.equals(existing.getUfsFingerprint())
        && existing.getLength() == length) {
      // A sync of the folder found the content in the store before this call came: it
      // is this file, which gets its attributes now.
      return completeLoaded(c, existing);
    }
    if (samePlace && !FileChanges.backedByStore(existing)) {
      removeWritten(c, where);
    }
    throw new StrataException(
        ErrorCode.ALREADY_EXISTS,
        existing.getDirectory()
            ? "A directory already exists at " + path
            : "Path already exists: " + path);
  }

  /** The refusal of a commit whose path resolves to another store path or mount than written. */
  private StrataException mountsChanged(MountTable.Resolution where) {
    return StrataException.failedPrecondition(
        "The mounts changed while "
            + path
            + " was"
            + " written: it belongs in "
            + where.ufsUri()
            + " of mount "
            + where.mount().getMountId()
            + " now, not in "
            + ufsPath
            + " of mount "
            + mountId
            + "; write it again");
  }

  /**
   * The new file's inode in {@code parent}, complete with the written length and fingerprint and
   * the writer's attributes.
   */
  private InodeEntry.Builder completedFile(Change c, InodeEntry parent) throws StrataException {
    InodeEntry.Builder file =
        loader.newInode(
            c.newInodeId(),
            parent.getId(),
            PathNames.name(path),
            false,
            request.mode(),
            request.owner(),
            SetGid.group(parent, request.group()));
    Xattrs.inherit(parent, file);
    if (request.blockSize() > 0) {
      file.setBlockSize(request.blockSize());
    }
    FileChanges.checkLength(path, length, file.getBlockSize());
    long nowNs = InodeTimes.nowNs();
    file.setLength(length)
        .setUfsFingerprint(fingerprint)
        .setComplete(true)
        .setUfsSyncTimeMs(nowNs / 1_000_000L);
    attributes.applyTo(file, nowNs);
    return file;
  }

  /**
   * Gives a file a sync loaded from the content a new file's writer put in the store the attributes
   * that writer asked for, as its commit would have.
   */
  private CompletableFuture<FileInfo> completeLoaded(Change c, InodeEntry loaded)
      throws StrataException {
    long nowNs = InodeTimes.nowNs();
    ChangeStaging.Staged s =
        c.commit(
            List.of(
                Edit.update(
                    loaded.getId(),
                    cur -> {
                      if (cur == null) {
                        throw StrataException.notFound(path);
                      }
                      InodeEntry.Builder done = cur.toBuilder();
                      if (request.mode() != 0) {
                        done.setMode(request.mode());
                      }
                      if (!request.owner().isEmpty()) {
                        done.setOwner(request.owner());
                      }
                      if (!request.group().isEmpty()) {
                        done.setGroup(request.group());
                      }
                      attributes.applyTo(done, nowNs);
                      return done;
                    })));
    FileInfo info = tree.info(s.inode(loaded.getId()), path);
    return s.applied().thenApply(x -> info);
  }

  /**
   * Removes the store file a refused commit wrote, when it is still the one written (its
   * fingerprint): nothing in the namespace names it, and a later sync must not take it for a file.
   */
  private void removeWritten(Change c, MountTable.Resolution where) throws IOException {
    UnderFileSystem store = c.store(where.mount());
    String now;
    try {
      now = store.fingerprint(where.ufsUri());
    } catch (NoSuchFileException e) {
      return;
    }
    if (fingerprint.equals(now)) {
      store.delete(where.ufsUri(), false);
    }
  }
}
