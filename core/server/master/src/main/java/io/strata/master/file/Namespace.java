package io.strata.master.file;

import com.google.protobuf.ByteString;
import io.strata.common.BlockIds;
import io.strata.common.LayoutFeature;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.FileInfo;
import io.strata.proto.FreeResponse;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.AddMountEntry;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.DeleteMountEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.RenameEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The file-system operations of the master on normalized namespace paths. Changes are written
 * through: the master changes the under store's metadata first (mkdir, delete, rename), then
 * journals and applies the namespace change, all under the tree's write lock, and returns only
 * once both are done. File bytes are never touched here; workers write them. Reads check a
 * path against its store first when its sync interval says the namespace's view is too old
 * (see {@link SyncPolicy}); listings are loaded and synced by {@link ListingSync}.
 *
 * <p>Every failure is a {@link StrataException} whose message names the path and, where there
 * is one, what the caller can do.
 */
public final class Namespace {
  private static final Logger LOG = LoggerFactory.getLogger(Namespace.class);
  /** Largest page a listing hands out, whatever the client asks for. */
  public static final int MAX_PAGE_SIZE = 10_000;

  private final InodeTree tree;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final ListingSync listings;

  public Namespace(InodeTree tree) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.workers = tree.workers();
    this.listings = new ListingSync(tree);
  }

  /**
   * The FileInfo of a path, loading its metadata from the under store on first access and
   * checking it there again when its sync interval says it is due.
   *
   * @param call the call's sync interval; null for the mount's or the configured one
   */
  public FileInfo getStatus(String path, SyncInterval call) throws IOException {
    return getStatus(path, call, false);
  }

  /**
   * {@link #getStatus(String, SyncInterval)}, with a complete file's blocks and the live workers
   * that hold each when {@code withBlocks}, so that a client can read it without another call.
   */
  public FileInfo getStatus(String path, SyncInterval call, boolean withBlocks)
      throws IOException {
    return tree.read(path, call, n -> tree.info(n, path, withBlocks));
  }

  /** {@link #getStatus(String, SyncInterval)} with the mount's or the configured interval. */
  public FileInfo getStatus(String path) throws IOException {
    return getStatus(path, null);
  }

  /** Where a listing starts: a directory to page through, or a single file. */
  public record Listing(long dirId, FileInfo file) {}

  /**
   * Loads a directory's children when never loaded, syncs them when due under the call's sync
   * interval (null: the mount's or the configured one), and returns where its listing starts.
   * A file is checked as {@link #getStatus} checks it.
   */
  public Listing openListing(String path, SyncInterval call) throws IOException {
    return openListing(path, call, false, false);
  }

  /**
   * {@link #openListing(String, SyncInterval)}; a file comes with its blocks when asked. With
   * {@code loadedOnly}, a directory whose children were never loaded is not loaded: the call
   * fails with FAILED_PRECONDITION, so that listing to answer lookups never changes what later
   * accesses of single paths find in the under store.
   */
  public Listing openListing(String path, SyncInterval call, boolean withBlocks,
      boolean loadedOnly) throws IOException {
    if (loadedOnly) {
      InodeEntry dir = tree.resolve(path, call);
      if (dir.getDirectory() && !dir.getChildrenLoaded()) {
        throw StrataException.failedPrecondition("The children of " + path + " were never"
            + " loaded from the under store; list it without loaded_only to load them");
      }
    }
    listings.refresh(path, call);
    Listing dir = tree.read(path, SyncInterval.NEVER,
        n -> n.getDirectory() ? new Listing(n.getId(), null) : null);
    return dir != null ? dir : new Listing(0, getStatus(path, call, withBlocks));
  }

  /**
   * Loads or syncs every directory below a path, depth first, as a listing of each would;
   * progress goes to {@code sink} about once a second and once at the end.
   *
   * @param call the sync interval of every path (null: each path's mount's or configured one)
   * @param cancelled polled during the walk; it stops quietly once this turns true
   * @throws IOException when the path itself cannot be loaded
   */
  public LoadMetadataProgress loadMetadata(String path, SyncInterval call,
      BooleanSupplier cancelled, Consumer<LoadMetadataProgress> sink) throws IOException {
    return new MetadataLoad(tree, listings, path, call, cancelled, sink).run();
  }

  /**
   * One page of a directory opened with {@link #openListing}, with each complete file's blocks
   * and their holders when {@code withBlocks}.
   */
  public InodeTree.Page listPage(long dirId, String startAfter, int limit, boolean withBlocks,
      boolean includeHidden) {
    return tree.page(dirId, startAfter, Math.min(limit, MAX_PAGE_SIZE), withBlocks,
        includeHidden);
  }

  /**
   * Makes a directory in the store, then in the namespace (with missing parents if asked). The
   * directory and every parent it makes get {@code owner} and {@code group} ("" for the
   * master's default).
   */
  public FileInfo createDirectory(String path, boolean recursive, boolean allowExists, int mode,
      String owner, String group) throws IOException {
    return tree.write(() -> {
      InodeTree.Walk w = tree.walkLoading(path);
      if (w.complete()) {
        InodeEntry existing = w.last();
        if (!existing.getDirectory()) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "A file already exists at " + path);
        }
        if (allowExists) {
          return tree.info(existing, path);
        }
        throw StrataException.alreadyExists(path);
      }
      checkParents(w, path, recursive);
      checkWritable(path);
      MountTable.Resolution r = mounts.resolve(path);
      try {
        loader.store(r.mount()).mkdirs(r.ufsUri(), recursive);
      } catch (FileAlreadyExistsException e) {
        // Created in the store behind Strata's back: adopt it.
      }
      List<JournalEntry.Builder> entries = new ArrayList<>();
      InodeEntry.Builder made = addDirectories(w, w.names().size(), mode, owner, group,
          entries);
      tree.journal(entries);
      return tree.info(made.build(), path);
    });
  }

  /**
   * Checks the deepest existing ancestor of a missing path is a directory, and that only the
   * last name is missing unless {@code recursive}.
   */
  private static void checkParents(InodeTree.Walk w, String path, boolean recursive)
      throws StrataException {
    if (!w.last().getDirectory()) {
      throw StrataException.failedPrecondition("Not a directory: " + w.pathAt(w.found())
          + " is a file, so " + path + " cannot be created");
    }
    if (w.names().size() - w.found() > 1 && !recursive) {
      throw new StrataException(ErrorCode.NOT_FOUND, "Parent directory does not exist: "
          + PathNames.parent(path)
          + " (create it first, or create parents too: `strata fs mkdir -p`)");
    }
  }

  /**
   * Adds entries for directories for the walk's missing names up to {@code depth}, all owned by
   * {@code owner} and {@code group}; the last one gets {@code mode}. Returns the deepest (the
   * walk's last inode when nothing is missing).
   */
  private InodeEntry.Builder addDirectories(InodeTree.Walk w, int depth, int mode, String owner,
      String group, List<JournalEntry.Builder> entries) {
    InodeEntry.Builder made = w.last().toBuilder();
    for (int d = w.found() + 1; d <= depth; d++) {
      made = loader.newInode(tree.newInodeId(), made.getId(), w.names().get(d - 1), true,
          d == depth ? mode : 0, owner, group);
      entries.add(InodeTree.inode(made));
    }
    return made;
  }

  /**
   * Creates an incomplete, empty file inode (a replaced file gets a new id); the store file
   * appears when a worker writes it to the returned {@code ufs_path}. The file and every parent
   * it makes get {@code owner} and {@code group} ("" for the master's default).
   */
  public FileInfo createFile(String path, boolean recursive, boolean overwrite, long blockSize,
      int mode, String owner, String group) throws IOException {
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot create a file at /: give a file path");
    }
    if (blockSize < 0) {
      throw StrataException.invalidArgument("Negative block size " + blockSize + " for " + path);
    }
    return tree.write(() -> {
      InodeTree.Walk w = tree.walkLoading(path);
      List<JournalEntry.Builder> entries = new ArrayList<>();
      long parentId;
      InodeEntry replaced = null;
      if (w.complete()) {
        replaced = w.last();
        if (replaced.getDirectory()) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "A directory already exists at " + path);
        }
        if (!overwrite) {
          throw new StrataException(ErrorCode.ALREADY_EXISTS,
              "Path already exists: " + path
                  + " (remove it first, or overwrite it: `strata fs cp -f`)");
        }
        checkWritable(path);
        // A new id, so that blocks cached for the old content are never read as the new.
        entries.add(JournalEntry.newBuilder()
            .setDeleteInode(DeleteInodeEntry.newBuilder().setId(replaced.getId())));
        parentId = replaced.getParentId();
      } else {
        checkParents(w, path, recursive);
        checkWritable(path);
        int parentDepth = w.names().size() - 1;
        if (w.found() < parentDepth) {
          MountTable.Resolution r = mounts.resolve(PathNames.parent(path));
          loader.store(r.mount()).mkdirs(r.ufsUri(), true);
        }
        parentId = addDirectories(w, parentDepth, 0, owner, group, entries).getId();
      }
      InodeEntry.Builder file = loader.newInode(tree.newInodeId(), parentId,
          PathNames.name(path), false, mode, owner, group);
      if (blockSize > 0) {
        file.setBlockSize(blockSize);
      }
      entries.add(InodeTree.inode(file));
      tree.journal(entries);
      if (replaced != null) {
        workers.removeFiles(List.of(replaced.getId()));
      }
      return tree.info(file.build(), path);
    });
  }

  /**
   * Marks a file complete with its length; repeating it with the same length is harmless.
   *
   * @param fileId the id the writer's create gave, or 0 for whatever file is at {@code path}
   * @throws StrataException STALE when {@code path} is another file now
   */
  public FileInfo completeFile(String path, long fileId, long length, String fingerprint)
      throws IOException {
    return completeFile(path, fileId, length, fingerprint, Map.of());
  }

  /**
   * As {@link #completeFile(String, long, long, String)}, the file getting {@code xattrs} as
   * its extended attributes in the same journal entry, so that no reader sees it without them.
   */
  public FileInfo completeFile(String path, long fileId, long length, String fingerprint,
      Map<String, ByteString> xattrs) throws IOException {
    Xattrs.checkNames(path, xattrs.keySet());
    Xattrs.checkSize(path, xattrs);
    return tree.write(() -> {
      InodeEntry n = tree.resolveLocked(path);
      if (n.getDirectory()) {
        throw StrataException.invalidArgument("Path is a directory: " + path);
      }
      checkSameFile(n, fileId, path, "this write was not kept: write it again");
      if (n.getComplete()) {
        if (n.getLength() == length) {
          return tree.info(n, path);
        }
        throw StrataException.failedPrecondition("File is already complete: " + path
            + " (length " + n.getLength() + "); create it again with overwrite to replace it");
      }
      if (length < 0 || BlockIds.blockCount(length, n.getBlockSize())
          > BlockIds.MAX_BLOCKS_PER_FILE) {
        throw StrataException.invalidArgument("Bad length " + length + " for " + path
            + " with block size " + n.getBlockSize());
      }
      long now = System.currentTimeMillis();
      InodeEntry.Builder done = n.toBuilder().setLength(length).setUfsFingerprint(fingerprint)
          .setComplete(true).setModificationTimeMs(now).setUfsSyncTimeMs(now);
      if (!xattrs.isEmpty()) {
        done.clearXattrs().putAllXattrs(xattrs);
      }
      tree.journal(List.of(InodeTree.inode(done)));
      return tree.info(done.build(), path);
    });
  }

  /** Fails with STALE when {@code fileId} is given (not 0) and {@code n} is another inode. */
  private static void checkSameFile(InodeEntry n, long fileId, String path, String outcome)
      throws StrataException {
    if (fileId != 0 && n.getId() != fileId) {
      throw new StrataException(ErrorCode.STALE, path + " is another file now (id " + n.getId()
          + ", not " + fileId + "): another writer replaced it; " + outcome);
    }
  }

  /**
   * Sets mode, owner, group, modification time, extended attributes and/or time to live in the
   * namespace only: the under store is not written, and the path is not checked against it (a
   * sync could replace the inode), so the id, blocks, length and fingerprint stay. A change
   * that changes nothing is not journaled. The attributes survive restarts with the journaled
   * inode; a file later replaced because its content changed in the store takes the store's
   * attributes again.
   *
   * <p>A time to live needs the cluster at metadata layout 2 (FAILED_PRECONDITION before
   * {@code strata fsadmin upgrade finalize}). One that frees is taken in a read-only mount;
   * one that deletes is refused where a delete would be (the root, a mount point).
   */
  public FileInfo setAttribute(String path, AttributeChange change) throws IOException {
    if (change.ttl() != null) {
      ClusterLayout.require(tree.store(), LayoutFeature.TTL);
    }
    change.check(path);
    if (change.deletesOnExpiry() && (path.equals(PathNames.ROOT) || mounts.at(path) != null)) {
      throw StrataException.failedPrecondition("Cannot give " + path + " a time to live that"
          + " deletes it: it is a mount point (let it free its cached blocks instead, or"
          + " unmount it)");
    }
    return tree.write(() -> {
      InodeEntry n = tree.resolveLocked(path);
      if (!change.onlyFreesOnExpiry()) {
        checkWritable(path);
      }
      InodeEntry.Builder changed = change.applyTo(n);
      Xattrs.checkSize(path, changed.getXattrsMap());
      InodeEntry after = changed.build();
      if (!after.equals(n)) {
        tree.journal(List.of(InodeTree.inode(changed)));
      }
      return tree.info(after, path);
    });
  }

  /** Deletes in the store and the namespace, and queues removal of the files' cached blocks. */
  public void delete(String path, boolean recursive) throws IOException {
    delete(path, recursive, 0);
  }

  /**
   * As {@link #delete(String, boolean)}, only when {@code path} is the file {@code fileId}
   * (0: whatever is there).
   *
   * @throws StrataException STALE, deleting nothing, when {@code path} is another file now
   */
  public void delete(String path, boolean recursive, long fileId) throws IOException {
    delete(path, recursive, fileId, false);
  }

  /**
   * As {@link #delete(String, boolean, long)}; with {@code unlessVisibleChildren}, a directory
   * is deleted (with its hidden children) only when it has no other child, checked under the
   * same lock as the delete, so a child added meanwhile is never deleted with it.
   *
   * @throws StrataException FAILED_PRECONDITION when the directory has a visible child
   */
  public void delete(String path, boolean recursive, long fileId, boolean unlessVisibleChildren)
      throws IOException {
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot delete the root directory /");
    }
    tree.write(() -> {
      InodeEntry n = tree.resolveLocked(path);
      checkSameFile(n, fileId, path, "nothing was deleted");
      if (mounts.at(path) != null) {
        throw StrataException.failedPrecondition("Cannot delete mount point " + path
            + ": unmount it instead");
      }
      List<String> below = mounts.mountPointsBelow(path);
      if (!below.isEmpty()) {
        throw StrataException.failedPrecondition("Cannot delete " + path + ": " + below.get(0)
            + " is mounted below it (unmount it first)");
      }
      checkWritable(path);
      if (unlessVisibleChildren && n.getDirectory() && tree.hasVisibleChildren(n, path)) {
        throw StrataException.failedPrecondition("Directory is not empty: " + path);
      }
      if (n.getDirectory() && !recursive && !tree.isEmpty(n, path)) {
        throw StrataException.failedPrecondition("Directory is not empty: " + path
            + " (delete it with everything below it: `strata fs rm -R`)");
      }
      MountTable.Resolution r = mounts.resolve(path);
      try {
        loader.store(r.mount()).delete(r.ufsUri(), recursive && n.getDirectory());
      } catch (NoSuchFileException e) {
        // Gone from the store already, or a file still being written: the namespace decides.
      }
      List<Long> files = new ArrayList<>();
      tree.forEachFileBelow(n, f -> files.add(f.getId()));
      tree.journal(List.of(JournalEntry.newBuilder()
          .setDeleteInode(DeleteInodeEntry.newBuilder().setId(n.getId()))));
      workers.removeFiles(files);
      return null;
    });
  }

  /** Renames in the store and the namespace within one mount; ids (so block ids) are kept. */
  public void rename(String src, String dst) throws IOException {
    if (src.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot rename the root directory /");
    }
    if (PathNames.isUnder(dst, src)) {
      throw StrataException.invalidArgument(src.equals(dst)
          ? "Cannot rename " + src + " to itself"
          : "Cannot move " + src + " under itself: " + dst);
    }
    tree.write(() -> {
      InodeEntry n = tree.resolveLocked(src);
      if (mounts.at(src) != null) {
        throw StrataException.invalidArgument("Cannot rename mount point " + src
            + ": unmount it and mount it at the new path");
      }
      List<String> below = mounts.mountPointsBelow(src);
      if (!below.isEmpty()) {
        throw StrataException.invalidArgument("Cannot rename " + src + ": mount point "
            + below.get(0) + " is below it (unmount it first)");
      }
      MountTable.Resolution from = mounts.resolve(src);
      MountTable.Resolution to = mounts.resolve(dst);
      if (from.mount().getMountId() != to.mount().getMountId()) {
        throw StrataException.invalidArgument("Cannot rename across mounts: " + src
            + " is in mount " + from.mount().getPath() + ", " + dst + " is in mount "
            + to.mount().getPath() + " (copy and delete instead)");
      }
      checkWritable(src);
      String dstParent = PathNames.parent(dst);
      InodeTree.Walk pw = tree.walkLoading(dstParent);
      if (!pw.complete()) {
        throw new StrataException(ErrorCode.NOT_FOUND, "Parent directory does not exist: "
            + dstParent + " (create it before renaming " + src + " into it)");
      }
      if (!pw.last().getDirectory()) {
        throw StrataException.failedPrecondition("Not a directory: " + dstParent);
      }
      if (tree.walkLoading(dst).complete()) {
        throw StrataException.alreadyExists(dst);
      }
      if (!n.getDirectory() && !n.getComplete()) {
        throw StrataException.failedPrecondition("File is still being written: " + src
            + " (complete it before renaming)");
      }
      UnderFileSystem store = loader.store(from.mount());
      String before = n.getDirectory() ? null : fingerprintOrNull(store, from.ufsUri());
      store.rename(from.ufsUri(), to.ufsUri());
      long now = System.currentTimeMillis();
      List<JournalEntry.Builder> entries = new ArrayList<>();
      entries.add(JournalEntry.newBuilder().setRename(RenameEntry.newBuilder()
          .setId(n.getId()).setNewParentId(pw.last().getId()).setNewName(PathNames.name(dst))
          .setModificationTimeMs(now)));
      if (before != null && before.equals(n.getUfsFingerprint())) {
        String after = fingerprintOrNull(store, to.ufsUri());
        if (after != null && !after.equals(before)) {
          // An object store renames by copying, and the copy of the same bytes can get another
          // ETag (a multipart object's is recomputed); readers compare the store's fingerprint
          // with this one. Followed only when the namespace had the store's fingerprint before
          // the rename, so that a change made behind Strata's back is never taken for it.
          entries.add(InodeTree.inode(n.toBuilder().setParentId(pw.last().getId())
              .setName(PathNames.name(dst)).setModificationTimeMs(now)
              .setUfsFingerprint(after)));
        }
      }
      tree.journal(entries);
      return null;
    });
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

  /** A file's info and every block with the live workers that hold it. */
  public GetFileBlocksResponse fileBlocks(String path) throws IOException {
    return tree.read(path, n -> {
      if (n.getDirectory()) {
        throw StrataException.invalidArgument("Path is a directory: " + path);
      }
      return GetFileBlocksResponse.newBuilder().setFile(tree.info(n, path))
          .addAllBlocks(tree.blocks(n)).build();
    });
  }

  /** Queues removal of every cached block of the file(s) at a path. */
  public FreeResponse free(String path, boolean recursive) throws IOException {
    return tree.read(path, n -> {
      if (n.getDirectory() && !recursive) {
        throw StrataException.failedPrecondition("Path is a directory: " + path
            + " (free every file below it: `strata fs free -R`)");
      }
      return free(n);
    });
  }

  /** Queues removal of every cached block of the files at or below an inode. A lock is held. */
  public FreeResponse free(InodeEntry top) {
    List<long[]> files = new ArrayList<>();
    tree.forEachFileBelow(top, f -> files.add(
        new long[] {f.getId(), f.getLength(), f.getBlockSize()}));
    WorkerRegistry.Freed freed = workers.free(files);
    return FreeResponse.newBuilder().setBlocksFreed(freed.blocks())
        .setBytesFreed(freed.bytes()).build();
  }

  /** Whether an id names an existing file (workers' block reports are checked with it). */
  public boolean isFile(long fileId) {
    return tree.isFile(fileId);
  }

  private void checkWritable(String path) throws StrataException {
    MountTable.Resolution r = mounts.resolve(path);
    if (r.mount().getReadOnly()) {
      throw new StrataException(ErrorCode.PERMISSION_DENIED, "Cannot change " + path
          + ": mount " + r.mount().getPath() + " is read-only");
    }
  }

  // ---- mounts ----

  /**
   * Mounts an under-store directory at a new path, or at an empty directory, under an existing
   * directory. The directory's metadata is loaded from the new store on first access.
   */
  public MountInfo mount(String path, String ufsUri, Map<String, String> options,
      boolean readOnly) throws IOException {
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument(
          "Cannot mount on /: the root mount is set by strata.master.root.ufs");
    }
    if (ufsUri.isEmpty()) {
      throw StrataException.invalidArgument("No under-store URI given to mount at " + path);
    }
    MountOptionPolicy.validate(path, ufsUri, options);
    // Checked before taking the lock: a remote store may be slow to answer.
    UfsStatus status;
    try {
      status = loader.store(ufsUri, options).getStatus(ufsUri);
    } catch (IllegalArgumentException e) {
      throw StrataException.invalidArgument("Cannot mount " + ufsUri + " at " + path + ": "
          + e.getMessage());
    } catch (NoSuchFileException e) {
      throw new StrataException(ErrorCode.NOT_FOUND, "Under-store directory does not exist: "
          + ufsUri + " (create it before mounting it at " + path + ")");
    }
    if (!status.directory()) {
      throw StrataException.invalidArgument("Not a directory in the under store: " + ufsUri
          + " (mount a directory)");
    }
    return tree.write(() -> {
      if (mounts.at(path) != null) {
        throw new StrataException(ErrorCode.ALREADY_EXISTS, "A mount already exists at " + path
            + " (unmount it first)");
      }
      InodeTree.Walk w = tree.walkLoading(path);
      long id;
      long parentId;
      if (w.complete()) {
        InodeEntry existing = w.last();
        if (!existing.getDirectory() || !tree.isEmpty(existing, path)) {
          throw StrataException.failedPrecondition("Cannot mount on " + path
              + ": it exists and is not an empty directory (choose a new path)");
        }
        id = existing.getId();
        parentId = existing.getParentId();
      } else {
        checkParents(w, path, false);
        id = tree.newInodeId();
        parentId = w.last().getId();
      }
      MountInfo mount = MountInfo.newBuilder().setMountId(tree.newMountId()).setPath(path)
          .setUfsUri(ufsUri).putAllOptions(options).setReadOnly(readOnly).build();
      tree.journal(List.of(
          JournalEntry.newBuilder().setAddMount(AddMountEntry.newBuilder().setMount(mount)),
          InodeTree.inode(loader.toInode(status, id, parentId, PathNames.name(path)))));
      LOG.info("Mounted {} at {}", ufsUri, path);
      return mount;
    });
  }

  /**
   * Removes a mount and every inode below its mount point from the namespace (the store is
   * untouched), and queues removal of the blocks cached for those files.
   */
  public void unmount(String path) throws IOException {
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument(
          "The root mount cannot be removed (it is set by strata.master.root.ufs)");
    }
    tree.write(() -> {
      MountInfo mount = mounts.at(path);
      if (mount == null) {
        throw new StrataException(ErrorCode.NOT_FOUND, "No mount at " + path
            + " (list the mounts to see where they are)");
      }
      List<String> below = mounts.mountPointsBelow(path);
      if (!below.isEmpty()) {
        throw StrataException.failedPrecondition("Unmount " + below.get(0)
            + " first: it is mounted below " + path);
      }
      List<JournalEntry.Builder> entries = new ArrayList<>();
      entries.add(JournalEntry.newBuilder().setDeleteMount(
          DeleteMountEntry.newBuilder().setMountId(mount.getMountId())));
      InodeTree.Walk w = tree.walk(path);
      List<Long> files = new ArrayList<>();
      if (w.complete()) {
        InodeEntry point = w.last();
        tree.forEachFileBelow(point, f -> files.add(f.getId()));
        entries.add(JournalEntry.newBuilder()
            .setDeleteInode(DeleteInodeEntry.newBuilder().setId(point.getId())));
      }
      tree.journal(entries);
      workers.removeFiles(files);
      // The enclosing store may have a directory of that name, hidden while mounted over.
      InodeTree.Walk parent = tree.walk(PathNames.parent(path));
      if (parent.complete() && parent.last().getDirectory()) {
        Optional<UfsStatus> hidden = loader.stat(mounts.resolve(path));
        if (hidden.isPresent()) {
          tree.journal(List.of(InodeTree.inode(loader.toInode(hidden.get(), tree.newInodeId(),
              parent.last().getId(), PathNames.name(path)))));
        }
      }
      LOG.info("Unmounted {} from {}", mount.getUfsUri(), path);
      return null;
    });
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
