package io.strata.master.file;

import com.google.protobuf.ByteString;
import io.strata.common.BlockIds;
import io.strata.common.LayoutFeature;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
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
import java.util.Set;
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
  private final NameChanges names;
  private final PosixFiles posix;
  private final NamespaceMounts mountOps;

  public Namespace(InodeTree tree) {
    this.tree = tree;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
    this.workers = tree.workers();
    this.listings = new ListingSync(tree);
    this.names = new NameChanges(tree);
    this.posix = new PosixFiles(tree, this, names);
    this.mountOps = new NamespaceMounts(tree);
  }

  /** Symbolic links, special files, hard links and new versions of a file's content. */
  public PosixFiles posix() {
    return posix;
  }

  /** Mounting and unmounting under stores. */
  public NamespaceMounts mounts() {
    return mountOps;
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
      checkStorePath(path);
      MountTable.Resolution r = mounts.resolve(path);
      try {
        loader.store(r.mount()).mkdirs(r.ufsUri(), recursive);
      } catch (FileAlreadyExistsException e) {
        // Created in the store behind Strata's back: adopt it.
      }
      List<JournalEntry.Builder> entries = new ArrayList<>();
      long nowNs = InodeTimes.nowNs();
      InodeEntry.Builder made = addDirectories(w, w.names().size(), mode, owner, group,
          entries);
      names.foldersChanged(entries, nowNs, w.last().getId());
      tree.journal(entries);
      return tree.info(made.build(), path);
    });
  }

  /**
   * Checks the deepest existing ancestor of a missing path is a directory, and that only the
   * last name is missing unless {@code recursive}.
   */
  static void checkParents(InodeTree.Walk w, String path, boolean recursive)
      throws StrataException {
    if (!w.last().getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
          "Not a directory: " + w.pathAt(w.found()) + " is a file, so " + path
          + " cannot be created");
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
      InodeEntry parent = made.build();
      int m = d == depth ? mode : 0;
      made = loader.newInode(tree.newInodeId(), made.getId(), w.names().get(d - 1), true,
          SetGid.directoryMode(parent, m == 0 ? UfsMetadataLoader.DEFAULT_DIR_MODE : m), owner,
          SetGid.group(parent, group));
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
    return createFile(path, recursive, overwrite, blockSize, mode, owner, group, false);
  }

  /**
   * As {@link #createFile(String, boolean, boolean, long, int, String, String)}; with
   * {@code newVersion}, begins a new version of the complete file at {@code path} instead
   * ({@link PosixFiles#beginVersion}).
   */
  public FileInfo createFile(String path, boolean recursive, boolean overwrite, long blockSize,
      int mode, String owner, String group, boolean newVersion) throws IOException {
    if (newVersion) {
      return posix.beginVersion(path);
    }
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot create a file at /: give a file path");
    }
    if (blockSize < 0) {
      throw StrataException.invalidArgument("Negative block size " + blockSize + " for " + path);
    }
    return tree.write(() -> {
      InodeTree.Walk w = tree.walkLoading(path);
      List<JournalEntry.Builder> entries = new ArrayList<>();
      long nowNs = InodeTimes.nowNs();
      long parentId;
      InodeEntry replaced = null;
      boolean replacedGone = false;
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
        parentId = w.inodes().get(w.found() - 1).getId();
        // A new inode, so that blocks cached for the old content are never read as the new.
        // A file with other names (hard links) keeps them, with its old content.
        replacedGone = names.removeName(replaced, parentId, PathNames.name(path), nowNs,
            entries);
      } else {
        checkParents(w, path, recursive);
        checkWritable(path);
        checkStorePath(path);
        int parentDepth = w.names().size() - 1;
        if (w.found() < parentDepth) {
          MountTable.Resolution r = mounts.resolve(PathNames.parent(path));
          loader.store(r.mount()).mkdirs(r.ufsUri(), true);
        }
        parentId = addDirectories(w, parentDepth, 0, owner, group, entries).getId();
      }
      InodeEntry parent = parentId == w.last().getId() ? w.last() : null;
      InodeEntry.Builder file = loader.newInode(tree.newInodeId(), parentId,
          PathNames.name(path), false, mode, owner,
          parent == null ? group : SetGid.group(parent, group));
      if (blockSize > 0) {
        file.setBlockSize(blockSize);
      }
      entries.add(InodeTree.inode(file));
      // The folder that gets a new name: the parent, or the deepest one that existed.
      names.foldersChanged(entries, nowNs, replaced != null ? parentId : w.last().getId());
      tree.journal(entries);
      if (replacedGone) {
        workers.removeFiles(List.of(InodeTree.dataId(replaced)));
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
    return completeFile(path, fileId, length, fingerprint, CompletedAttributes.of(xattrs));
  }

  /**
   * Marks a file complete with its length, or makes the new version {@code fileId} of it
   * (begun by {@link PosixFiles#beginVersion}) its content; with the attributes the writer
   * set meanwhile, all in one journal entry. Repeating it with the same length is harmless.
   *
   * @throws StrataException STALE when {@code path} is another file now, or the version is no
   *     longer the one being written (another writer began a newer one)
   */
  public FileInfo completeFile(String path, long fileId, long length, String fingerprint,
      CompletedAttributes attributes) throws IOException {
    Xattrs.checkNames(path, attributes.xattrs().keySet());
    Xattrs.checkSize(path, attributes.xattrs());
    return tree.write(() -> {
      InodeEntry n = tree.resolveLocked(path);
      if (n.getDirectory()) {
        throw StrataException.invalidArgument("Path is a directory: " + path);
      }
      if (fileId != 0 && fileId != n.getId()) {
        if (n.getWritingDataId() == fileId || InodeTree.dataId(n) == fileId) {
          return posix.completeVersion(path, n, fileId, length, fingerprint, attributes);
        }
        checkSameFile(n, fileId, path, "this write was not kept: write it again");
      }
      if (n.getComplete()) {
        if (n.getLength() == length) {
          return tree.info(n, path);
        }
        throw StrataException.failedPrecondition("File is already complete: " + path
            + " (length " + n.getLength() + "); create it again with overwrite to replace it");
      }
      checkLength(path, length, n.getBlockSize());
      long nowNs = InodeTimes.nowNs();
      InodeEntry.Builder done = n.toBuilder().setLength(length).setUfsFingerprint(fingerprint)
          .setComplete(true).setUfsSyncTimeMs(nowNs / 1_000_000L);
      attributes.applyTo(done, nowNs);
      tree.journal(List.of(InodeTree.inode(done)));
      posix.relinkOtherNames(path, done.build());
      return tree.info(done.build(), path);
    });
  }

  /** Fails with INVALID_ARGUMENT when a file cannot have {@code length} bytes. */
  static void checkLength(String path, long length, long blockSize) throws StrataException {
    if (length < 0 || BlockIds.blockCount(length, blockSize) > BlockIds.MAX_BLOCKS_PER_FILE) {
      throw StrataException.invalidArgument("Bad length " + length + " for " + path
          + " with block size " + blockSize);
    }
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
      if (change.changesInode()) {
        // As POSIX file systems do, even when the values stay as they were.
        InodeTimes.changed(changed, InodeTimes.nowNs());
      }
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
      InodeTree.Walk w = tree.walkLoading(path);
      if (!w.complete()) {
        throw StrataException.notFound(path);
      }
      InodeEntry n = w.last();
      InodeEntry parent = w.inodes().get(w.found() - 1);
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
        throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTEMPTY,
            "Directory is not empty: " + path
            + " (delete it with everything below it: `strata fs rm -R`)");
      }
      MountTable.Resolution r = mounts.resolve(path);
      try {
        loader.store(r.mount()).delete(r.ufsUri(), recursive && n.getDirectory());
      } catch (NoSuchFileException e) {
        // Gone from the store already, a file still being written, or one the store does not
        // hold (namespace only): the namespace decides.
      }
      long nowNs = InodeTimes.nowNs();
      List<JournalEntry.Builder> entries = new ArrayList<>();
      // Files with names outside the subtree live on by them, with their blocks.
      Set<Long> survivors = names.detachSurvivors(n, nowNs, entries);
      List<Long> files = new ArrayList<>();
      if (names.removeName(n, parent.getId(), PathNames.name(path), nowNs, entries)) {
        tree.forEachFileBelow(n, f -> {
          if (!survivors.contains(f.getId())) {
            files.add(InodeTree.dataId(f));
          }
        });
      }
      names.foldersChanged(entries, nowNs, parent.getId());
      tree.journal(entries);
      workers.removeFiles(files);
      return null;
    });
  }

  /** Renames in the store and the namespace within one mount; ids (so block ids) are kept. */
  public void rename(String src, String dst) throws IOException {
    rename(src, dst, false);
  }

  /**
   * Renames in the store and the namespace within one mount; ids (so block ids) are kept, and
   * so is the modification time (the change time moves), as rename(2) does. With
   * {@code replace}, an existing destination is replaced in the same step: a non-directory by
   * a non-directory, an empty directory by a directory (FAILED_PRECONDITION with ENOTDIR,
   * EISDIR or ENOTEMPTY otherwise); two names of one file leave both as they are.
   */
  public void rename(String src, String dst, boolean replace) throws IOException {
    if (src.equals(PathNames.ROOT)) {
      throw StrataException.invalidArgument("Cannot rename the root directory /");
    }
    if (src.equals(dst)) {
      if (replace) {
        getStatus(src, SyncInterval.NEVER);
        return;
      }
      throw StrataException.invalidArgument("Cannot rename " + src + " to itself");
    }
    if (PathNames.isUnder(dst, src)) {
      throw new StrataException(ErrorCode.INVALID_ARGUMENT, PosixError.EINVAL,
          "Cannot move " + src + " under itself: " + dst);
    }
    tree.write(() -> {
      InodeTree.Walk sw = tree.walkLoading(src);
      if (!sw.complete()) {
        throw StrataException.notFound(src);
      }
      InodeEntry n = sw.last();
      long srcParent = sw.inodes().get(sw.found() - 1).getId();
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
        throw new StrataException(ErrorCode.INVALID_ARGUMENT, PosixError.EXDEV,
            "Cannot rename across mounts: " + src + " is in mount " + from.mount().getPath()
            + ", " + dst + " is in mount " + to.mount().getPath() + " (copy and delete instead)");
      }
      checkWritable(src);
      String dstParent = PathNames.parent(dst);
      InodeTree.Walk pw = tree.walkLoading(dstParent);
      if (!pw.complete()) {
        throw new StrataException(ErrorCode.NOT_FOUND, "Parent directory does not exist: "
            + dstParent + " (create it before renaming " + src + " into it)");
      }
      if (!pw.last().getDirectory()) {
        throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
            "Not a directory: " + dstParent);
      }
      long dstParentId = pw.last().getId();
      checkStorePath(dst);
      InodeTree.Walk dw = tree.walkLoading(dst);
      InodeEntry replaced = dw.complete() ? dw.last() : null;
      if (replaced != null) {
        if (!replace) {
          throw StrataException.alreadyExists(dst);
        }
        if (replaced.getId() == n.getId()) {
          // Two names of one file: rename(2) does nothing.
          return null;
        }
        checkReplaceable(n, replaced, dst);
      }
      if (!n.getDirectory() && !n.getComplete()) {
        throw StrataException.failedPrecondition("File is still being written: " + src
            + " (complete it before renaming)");
      }
      UnderFileSystem store = loader.store(from.mount());
      String before = n.getDirectory() || n.getNamespaceOnly() ? null
          : fingerprintOrNull(store, from.ufsUri());
      if (!n.getNamespaceOnly()) {
        // A target only the namespace holds is not in the store's way.
        if (replaced != null && !replaced.getNamespaceOnly()) {
          store.rename(from.ufsUri(), to.ufsUri(), true);
        } else {
          store.rename(from.ufsUri(), to.ufsUri());
        }
      } else if (replaced != null && !replaced.getNamespaceOnly()) {
        deleteInStore(store, to.ufsUri());
      }

      long nowNs = InodeTimes.nowNs();
      String dstName = PathNames.name(dst);
      List<JournalEntry.Builder> entries = new ArrayList<>();
      List<Long> files = new ArrayList<>();
      if (replaced != null
          && names.removeName(replaced, dstParentId, dstName, nowNs, entries)) {
        tree.forEachFileBelow(replaced, f -> files.add(InodeTree.dataId(f)));
      }
      InodeEntry.Builder moved = NameChanges.moved(n, srcParent, PathNames.name(src),
          dstParentId, dstName);
      InodeTimes.changed(moved, nowNs);
      if (n.getLinksCount() > 0) {
        // A file with several names: which of its names moved is in the inode itself.
        entries.add(InodeTree.inode(moved));
      } else {
        entries.add(JournalEntry.newBuilder().setRename(RenameEntry.newBuilder()
            .setId(n.getId()).setNewParentId(dstParentId).setNewName(dstName)
            .setModificationTimeMs(n.getModificationTimeMs()).setChangeTimeNs(nowNs)));
      }
      if (before != null && before.equals(n.getUfsFingerprint())) {
        String after = fingerprintOrNull(store, to.ufsUri());
        if (after != null && !after.equals(before)) {
          // An object store renames by copying, and the copy of the same bytes can get another
          // ETag (a multipart object's is recomputed); readers compare the store's fingerprint
          // with this one. Followed only when the namespace had the store's fingerprint before
          // the rename, so that a change made behind Strata's back is never taken for it.
          entries.add(InodeTree.inode(moved.setUfsFingerprint(after)));
        }
      }
      names.foldersChanged(entries, nowNs, srcParent, dstParentId);
      tree.journal(entries);
      workers.removeFiles(files);
      return null;
    });
  }

  /** Fails, with the POSIX error rename(2) gives, when {@code n} may not replace {@code old}. */
  private void checkReplaceable(InodeEntry n, InodeEntry old, String dst) throws IOException {
    if (mounts.at(dst) != null || !mounts.mountPointsBelow(dst).isEmpty()) {
      throw StrataException.failedPrecondition("Cannot replace " + dst + ": a mount point is"
          + " at or below it (unmount it first)");
    }
    if (n.getDirectory() && !old.getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR,
          "Cannot replace " + dst + " by a directory: it is not a directory");
    }
    if (!n.getDirectory() && old.getDirectory()) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR,
          "Cannot replace directory " + dst + " by a file");
    }
    if (old.getDirectory() && !tree.isEmpty(old, dst)) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, PosixError.ENOTEMPTY,
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
        new long[] {InodeTree.dataId(f), f.getLength(), f.getBlockSize()}));
    WorkerRegistry.Freed freed = workers.free(files);
    return FreeResponse.newBuilder().setBlocksFreed(freed.blocks())
        .setBytesFreed(freed.bytes()).build();
  }

  /** Whether an id names an existing file (workers' block reports are checked with it). */
  public boolean isFile(long fileId) {
    return tree.isFile(fileId);
  }

  private void checkWritable(String path) throws StrataException {
    mounts.requireWritable(path);
  }

  /**
   * Fails with ENAMETOOLONG when the under store of {@code path} cannot hold an entry there
   * because its own path would be too long (a local folder's absolute path past 64 KiB).
   */
  void checkStorePath(String path) throws IOException {
    MountTable.Resolution r = mounts.resolve(path);
    if (loader.store(r.mount()).pathTooLong(r.ufsUri())) {
      throw new StrataException(ErrorCode.INVALID_ARGUMENT, PosixError.ENAMETOOLONG,
          "Path too long for its under store: " + path + " would be " + r.ufsUri()
          + " there, past the store's limit; choose a shorter path");
    }
  }
}
