package io.strata.master.file;

import io.strata.common.LayoutFeature;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.PersistenceState;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.LinkName;
import io.strata.underfs.UfsFileType;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a POSIX file system holds beyond files written once and folders (metadata layout 2):
 * symbolic links, FIFOs, sockets and device nodes; more names for one file (hard links); and new
 * versions of a file's content, written while readers keep reading the version they have.
 *
 * <p>Special files and links are made in the under store too where it can hold them (a local folder
 * holds every kind; HDFS symbolic links where the cluster allows them). A special file the store
 * cannot hold lives in the namespace only ({@code namespace_only}), which syncs leave alone; a hard
 * link the store cannot hold is refused with EPERM, because its names would part in the store.
 *
 * <p>A new version keeps the inode (its id is the file's POSIX inode number, its names and
 * attributes stay) and gives the content a new data id, from which its blocks are named, so that
 * blocks cached for the old content are never read as the new: {@link #beginVersion} records the id
 * being written, the writer streams the bytes to the under store, and completing the file swaps the
 * content in one journal entry. Every change locks its paths and stages its entries as {@link
 * Namespace}'s do.
 */
public final class PosixFiles {
  private static final Logger LOG = LoggerFactory.getLogger(PosixFiles.class);

  /** Longest symbolic link target, as Linux allows (PATH_MAX less the terminating NUL). */
  static final int MAX_TARGET_BYTES = 4095;

  /** Most names one file may have, as ext4 allows. */
  static final int MAX_LINKS = 65_000;

  private static final int SYMLINK_MODE = 0777;

  private final InodeTree tree;
  private final ChangeRunner runner;
  private final NameChanges names;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;

  PosixFiles(InodeTree tree, ChangeRunner runner, NameChanges names) {
    this.tree = tree;
    this.runner = runner;
    this.names = names;
    this.mounts = tree.mounts();
    this.loader = tree.loader();
  }

  /**
   * Creates a symbolic link, FIFO, socket or device node at a new path whose parent exists, in the
   * under store too where it can hold it.
   *
   * @param mode permission bits (a symbolic link's are always 0777); 0 for 0644
   * @param target a symbolic link's target, stored as given
   * @param rdev a device's number as stat(2) reports it
   */
  public CompletableFuture<FileInfo> createSpecialFile(
      String path, FileType type, int mode, String owner, String group, String target, long rdev) {
    UfsFileType kind;
    try {
      ClusterLayout.require(tree.store(), LayoutFeature.POSIX_FILES);
      kind = storeType(type, path);
      checkSpecial(path, type, mode, target);
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    int perms = type == FileType.FILE_TYPE_SYMLINK ? SYMLINK_MODE : mode;
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          Walk w = c.walkLoading(path);
          if (w.complete()) {
            InodeEntry found = w.last();
            if (c.leftByAnEarlierAttempt(found) && found.getFileType() == type) {
              // Answered once what the walk found is applied, as createDirectory does.
              FileInfo info = tree.info(found, path);
              return c.stagedAhead().thenApply(x -> info);
            }
            throw StrataException.alreadyExists(path);
          }
          FileChanges.checkParents(w, path, false);
          mounts.requireWritable(path);
          FileChanges.checkStorePath(tree, path);
          InodeEntry parent = w.last();
          MountTable.Resolution r = mounts.resolve(path);
          boolean inStore =
              makeInStore(
                  c.store(r.mount()),
                  r.ufsUri(),
                  path,
                  kind,
                  perms == 0 ? UfsMetadataLoader.DEFAULT_FILE_MODE : perms,
                  target,
                  rdev);
          InodeEntry.Builder made =
              loader
                  .newInode(
                      c.newInodeId(),
                      parent.getId(),
                      PathNames.name(path),
                      false,
                      perms,
                      owner,
                      SetGid.group(parent, group))
                  .setFileType(type)
                  .setSymlinkTarget(type == FileType.FILE_TYPE_SYMLINK ? target : "")
                  .setRdev(isDevice(type) ? rdev : 0)
                  .setComplete(true)
                  .setBlockSize(0)
                  .setLength(
                      type == FileType.FILE_TYPE_SYMLINK
                          ? target.getBytes(StandardCharsets.UTF_8).length
                          : 0)
                  .setNamespaceOnly(!inStore);
          List<Edit> edits = new ArrayList<>();
          edits.add(Edit.inode(made));
          Edit.foldersChanged(edits, parent.getId());
          ChangeStaging.Staged s = c.commit(edits);
          c.made(made.getId());
          FileInfo info = tree.info(made.build(), path);
          return s.applied().thenApply(x -> info);
        });
  }

  /** Fails with INVALID_ARGUMENT (or ENAMETOOLONG) when the request cannot be made. */
  private static void checkSpecial(String path, FileType type, int mode, String target)
      throws StrataException {
    if (type == FileType.FILE_TYPE_SYMLINK) {
      int bytes = target.getBytes(StandardCharsets.UTF_8).length;
      if (bytes == 0 || target.indexOf('\0') >= 0) {
        throw StrataException.invalidArgument(
            "Bad symbolic link target for " + path + ": give a non-empty target without NUL");
      }
      if (bytes > MAX_TARGET_BYTES) {
        throw new StrataException(
            ErrorCode.INVALID_ARGUMENT,
            PosixError.ENAMETOOLONG,
            "Symbolic link target for "
                + path
                + " is "
                + bytes
                + " bytes, over the "
                + MAX_TARGET_BYTES
                + " allowed");
      }
    }
    if (mode < 0 || mode > AttributeChange.MAX_MODE) {
      throw StrataException.invalidArgument(
          "Bad mode "
              + String.format("0%o", mode)
              + " for "
              + path
              + ": give permission bits between 0 and 07777");
    }
    if (path.equals(PathNames.ROOT)) {
      throw StrataException.alreadyExists(path);
    }
  }

  /**
   * Makes a special file in its under store; false when the store cannot hold it (it then lives in
   * the namespace only).
   */
  private static boolean makeInStore(
      UnderFileSystem store,
      String uri,
      String path,
      UfsFileType kind,
      int mode,
      String target,
      long rdev)
      throws IOException {
    try {
      if (kind == UfsFileType.SYMLINK) {
        store.createSymlink(uri, target);
      } else {
        store.createSpecialFile(uri, kind, mode, rdev);
      }
      return true;
    } catch (UnsupportedOperationException e) {
      LOG.info("{} is kept in Strata's namespace only: {}", path, e.getMessage());
      return false;
    } catch (AccessDeniedException e) {
      if (kind == UfsFileType.CHAR_DEVICE || kind == UfsFileType.BLOCK_DEVICE) {
        // Device nodes need privileges the master may not have; the namespace holds it.
        LOG.info(
            "Device node {} is kept in Strata's namespace only: the master may not make"
                + " device nodes in {} ({})",
            path,
            uri,
            e.getMessage());
        return false;
      }
      throw e;
    } catch (FileAlreadyExistsException e) {
      throw new StrataException(
          ErrorCode.ALREADY_EXISTS,
          "Path already exists in the under" + " store: " + path + " (" + uri + ")",
          e);
    }
  }

  private static UfsFileType storeType(FileType type, String path) throws StrataException {
    return switch (type) {
      case FILE_TYPE_SYMLINK -> UfsFileType.SYMLINK;
      case FILE_TYPE_FIFO -> UfsFileType.FIFO;
      case FILE_TYPE_SOCKET -> UfsFileType.SOCKET;
      case FILE_TYPE_CHAR_DEVICE -> UfsFileType.CHAR_DEVICE;
      case FILE_TYPE_BLOCK_DEVICE -> UfsFileType.BLOCK_DEVICE;
      default ->
          throw StrataException.invalidArgument(
              "Not a special file type for "
                  + path
                  + ": "
                  + type
                  + " (give SYMLINK, FIFO, SOCKET, CHAR_DEVICE or BLOCK_DEVICE; create"
                  + " files and directories with their own calls)");
    };
  }

  private static boolean isDevice(FileType type) {
    return type == FileType.FILE_TYPE_CHAR_DEVICE || type == FileType.FILE_TYPE_BLOCK_DEVICE;
  }

  /**
   * Gives the file at {@code existing} one more name, {@code path}, in the namespace and in its
   * under store. Refused with EPERM for a folder or where the store cannot hold hard links, EXDEV
   * across mounts, EMLINK past {@link #MAX_LINKS} names, and FAILED_PRECONDITION for a file still
   * being written (its bytes are not in the store yet).
   */
  public CompletableFuture<FileInfo> createHardLink(String existing, String path) {
    try {
      ClusterLayout.require(tree.store(), LayoutFeature.POSIX_FILES);
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(existing, path));
          Walk ew = c.walkLoading(existing);
          if (!ew.complete()) {
            throw StrataException.notFound(existing);
          }
          InodeEntry n = ew.last();
          if (n.getDirectory()) {
            throw new StrataException(
                ErrorCode.PERMISSION_DENIED,
                PosixError.EPERM,
                "Cannot link to " + existing + ": it is a directory");
          }
          Walk w = c.walkLoading(path);
          if (w.complete()) {
            throw StrataException.alreadyExists(path);
          }
          FileChanges.checkParents(w, path, false);
          MountTable.Resolution from = mounts.resolve(existing);
          MountTable.Resolution to = mounts.resolve(path);
          if (from.mount().getMountId() != to.mount().getMountId()) {
            throw new StrataException(
                ErrorCode.INVALID_ARGUMENT,
                PosixError.EXDEV,
                "Cannot link across mounts: "
                    + existing
                    + " is in mount "
                    + from.mount().getPath()
                    + ", "
                    + path
                    + " is in mount "
                    + to.mount().getPath());
          }
          mounts.requireWritable(path);
          FileChanges.checkStorePath(tree, path);
          if (!n.getComplete()) {
            throw StrataException.failedPrecondition(
                "File is still being written: " + existing + " (link it once it is complete)");
          }
          if (n.getLinksCount() + 1 >= MAX_LINKS) {
            throw new StrataException(
                ErrorCode.FAILED_PRECONDITION,
                PosixError.EMLINK,
                existing + " has " + (n.getLinksCount() + 1) + " names already, the most allowed");
          }
          if (!n.getNamespaceOnly()) {
            try {
              c.store(from.mount()).createHardLink(from.ufsUri(), to.ufsUri());
            } catch (UnsupportedOperationException e) {
              throw new StrataException(
                  ErrorCode.PERMISSION_DENIED,
                  PosixError.EPERM,
                  "Cannot link "
                      + path
                      + " to "
                      + existing
                      + ": the under store of mount "
                      + from.mount().getPath()
                      + " cannot hold hard links ("
                      + e.getMessage()
                      + ")");
            } catch (FileAlreadyExistsException e) {
              throw new StrataException(
                  ErrorCode.ALREADY_EXISTS,
                  "Path already exists in the" + " under store: " + path + " (" + to.ufsUri() + ")",
                  e);
            }
          }
          long nowNs = InodeTimes.nowNs();
          long folder = w.last().getId();
          LinkName name =
              LinkName.newBuilder().setParentId(folder).setName(PathNames.name(path)).build();
          List<Edit> edits = new ArrayList<>();
          edits.add(
              Edit.update(
                  n.getId(),
                  cur -> {
                    if (cur == null) {
                      throw StrataException.notFound(existing);
                    }
                    return InodeTimes.changed(cur.toBuilder(), nowNs).addLinks(name);
                  }));
          Edit.foldersChanged(edits, folder);
          ChangeStaging.Staged s = c.commit(edits);
          FileInfo info = tree.info(s.inode(n.getId()), path);
          return s.applied().thenApply(x -> info);
        });
  }

  /**
   * Begins a new version of the complete regular file at {@code path}: records a new data id as the
   * one being written (journaled, so it is never handed out again) and returns the version as the
   * writer needs it: its {@code file_id} is the data id, its {@code ufs_path} the path's,
   * incomplete and empty. Readers see the current content until the version is completed. A newer
   * begin replaces an older one, whose completion then fails with STALE.
   */
  public CompletableFuture<FileInfo> beginVersion(String path) {
    try {
      ClusterLayout.require(tree.store(), LayoutFeature.POSIX_FILES);
    } catch (StrataException e) {
      return CompletableFuture.failedFuture(e);
    }
    return runner.run(
        path,
        c -> {
          c.lock(PathLocks.Request.writing(path));
          InodeEntry n = c.resolve(path);
          if (n.getDirectory()) {
            throw new StrataException(
                ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR, "Is a directory: " + path);
          }
          if (n.getFileType() != FileType.FILE_TYPE_PLAIN) {
            throw StrataException.invalidArgument(
                "Not a regular file: "
                    + path
                    + " is a "
                    + n.getFileType()
                    + "; only regular files have content to write");
          }
          if (!n.getComplete()) {
            throw StrataException.failedPrecondition(
                "File is still being written: "
                    + path
                    + " (write a new version once it is complete)");
          }
          mounts.requireWritable(path);
          long version = c.newInodeId();
          ChangeStaging.Staged s =
              c.commit(
                  List.of(
                      Edit.update(
                          n.getId(),
                          cur -> {
                            if (cur == null) {
                              throw StrataException.notFound(path);
                            }
                            return cur.toBuilder().setWritingDataId(version);
                          })));
          FileInfo info = versionInfo(s.inode(n.getId()), path, version);
          return s.applied().thenApply(x -> info);
        });
  }

  FileInfo versionInfo(InodeEntry n, String path, long version) {
    return tree.info(n, path).toBuilder()
        .setFileId(version)
        .setComplete(false)
        .setLength(0)
        .clearBlocks()
        .setBlockCount(0)
        .setCachedBytes(0)
        .build();
  }

  /**
   * Makes version {@code version} (its bytes written to the store at {@code path}'s under-store
   * path) the content of the file {@code n} at {@code path}, with the attributes given; the old
   * content's cached blocks are queued for removal. The change holds the path's lock.
   *
   * @throws StrataException STALE when the file is not writing that version (another writer began a
   *     newer one, or {@code path} is another file now)
   */
  CompletableFuture<FileInfo> completeVersion(
      Change c,
      String path,
      InodeEntry n,
      long version,
      long length,
      String fingerprint,
      CompletedAttributes attributes)
      throws IOException {
    if (n.getWritingDataId() != version) {
      if (InodeTree.dataId(n) == version && n.getComplete() && n.getLength() == length) {
        // The same completion again (a retry after a lost answer).
        return CompletableFuture.completedFuture(tree.info(n, path));
      }
      throw new StrataException(
          ErrorCode.STALE,
          path
              + " is not writing version "
              + version
              + " now (another writer began a newer version, or the path is another file): this"
              + " write was not kept; write it again");
    }
    FileChanges.checkLength(path, length, n.getBlockSize());
    boolean relink = n.getLinksCount() > 0 && !n.getNamespaceOnly();
    if (relink) {
      // Its other names are brought to the new content in the store: on the lane.
      c.store(mounts.resolve(path).mount());
    }
    long nowNs = InodeTimes.nowNs();
    long old = InodeTree.dataId(n);
    ChangeStaging.Staged s =
        c.commit(
            List.of(
                Edit.update(
                    n.getId(),
                    cur -> {
                      if (cur == null || cur.getWritingDataId() != version) {
                        throw new StrataException(
                            ErrorCode.STALE,
                            path
                                + " is not writing version "
                                + version
                                + " now (another writer began a newer version): this write was not kept; write it"
                                + " again");
                      }
                      InodeEntry.Builder done =
                          cur.toBuilder()
                              .setDataId(version)
                              .clearWritingDataId()
                              .setLength(length)
                              .setUfsFingerprint(fingerprint)
                              .setComplete(true)
                              .setUfsSyncTimeMs(nowNs / 1_000_000L);
                      if (cur.getPersistenceState() != PersistenceState.PERSISTENCE_PERSISTED) {
                        // A version is written through: the store holds the content now.
                        done.setNamespaceOnly(false)
                            .setPersistenceState(PersistenceState.PERSISTENCE_PERSISTED);
                      }
                      attributes.applyTo(done, nowNs);
                      return done;
                    })));
    InodeEntry done = s.inode(n.getId());
    if (relink) {
      relinkOtherNames(c, path, done);
    }
    FileInfo info = tree.info(done, path);
    return s.applied()
        .thenApply(
            x -> {
              tree.workers().removeFiles(List.of(old));
              return info;
            });
  }

  /**
   * After a file's content was written to the store under {@code path}, brings its other names in
   * the store (hard links) to that content: a store's write replaces the name it writes, so the
   * others kept the old bytes. A failure leaves those names' old content in the store (the
   * namespace is right; the log says which). The change holds the path's lock, on its lane.
   */
  void relinkOtherNames(Change c, String path, InodeEntry n) {
    if (n.getLinksCount() == 0 || n.getNamespaceOnly()) {
      return;
    }
    MountTable.Resolution written = mounts.resolve(path);
    for (String other : names.paths(n)) {
      if (other.equals(path)) {
        continue;
      }
      MountTable.Resolution r = mounts.resolve(other);
      try {
        c.store(written.mount()).relink(written.ufsUri(), r.ufsUri());
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "The new content of {} did not reach its other name {} in the under store"
                + " ({}): {}",
            path,
            other,
            r.ufsUri(),
            e.toString());
      }
    }
  }
}
