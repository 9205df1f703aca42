package io.strata.fuse;

import com.google.protobuf.ByteString;
import io.strata.client.CreateOptions;
import io.strata.client.FileCompletion;
import io.strata.client.FileOutStream;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The calls of a mount that change files and the namespace: writes anywhere in a file, through a
 * local staging copy ({@link StagedFile}) written through to the cluster on close and fsync; files,
 * folders, symbolic links, special files and hard links made; removal; rename over existing
 * entries; mode, ownership, times and extended attributes. Each answers 0 or throws a {@link
 * StrataException} whose code or POSIX error gives the errno, and keeps the mount's metadata cache
 * true to what it changed, so the mount's own changes are visible to it at once.
 *
 * <p>Writes: every handle of a file shares one staged copy (by inode number), so all see what any
 * wrote; readers of the file in the cluster (other mounts, the S3 proxy) see its previous version
 * until a close or fsync writes the copy through as the file's new version, never a mix. A failed
 * write-through is reported to that close or fsync and the copy stays for another try; a copy still
 * not written through when its last handle goes is kept on local disk and named in the log, never
 * dropped. Attribute changes of a file whose copy is not written through yet are kept with it and
 * set in the same master call that completes it (tar gives a file its mode, owner and times right
 * after writing it).
 *
 * <p>Permission checks are the kernel's (the mount runs with {@code default_permissions}); this
 * class records the caller as the owner of what it creates.
 */
final class MountWrites {
  private static final Logger LOG = LoggerFactory.getLogger(MountWrites.class);
  private static final int O_ACCMODE = 3;
  private static final int O_RDONLY = 0;
  private static final int O_EXCL = 0200;
  private static final int O_TRUNC = 01000;
  static final int S_IFMT = 0170000;
  static final int S_IFREG = 0100000;
  static final int S_IFIFO = 0010000;
  static final int S_IFSOCK = 0140000;
  static final int S_IFCHR = 0020000;
  static final int S_IFBLK = 0060000;

  private final FileSystem fs;
  private final MetadataCache metadata;
  private final UserNames names;
  private final StagingArea staging;
  private final Aliases aliases;
  private final KernelEntries kernel;
  private final MountPaths paths;
  private final io.micrometer.core.instrument.Counter writtenThrough;

  /** Names libfuse gave files unlinked while open: {@code .fuse_hidden} and a number. */
  static final String HIDDEN_PREFIX = ".fuse_hidden";

  /** Hidden names per inode (see {@link #hiddenNames}). */
  private final java.util.concurrent.ConcurrentMap<Long, java.util.concurrent.atomic.AtomicInteger>
      hidden = new java.util.concurrent.ConcurrentHashMap<>();

  private final io.micrometer.core.instrument.Counter writeThroughFailures;

  /**
   * Inode numbers of files created here and not committed yet: far above any the master gives (it
   * counts up from 1), so that no two files of the mount ever show the same number.
   */
  static final long PROVISIONAL_INODES = 1L << 62;

  private final java.util.concurrent.atomic.AtomicLong provisionalInodes =
      new java.util.concurrent.atomic.AtomicLong();
  private final ShownInodes shownInodes = new ShownInodes();

  MountWrites(
      FileSystem fs,
      MetadataCache metadata,
      UserNames names,
      StagingArea staging,
      Aliases aliases,
      KernelEntries kernel,
      MountPaths paths,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this.fs = fs;
    this.metadata = metadata;
    this.names = names;
    this.staging = staging;
    this.aliases = aliases;
    this.kernel = kernel;
    this.paths = paths;
    this.writtenThrough = writeThroughs(registry, "written");
    this.writeThroughFailures = writeThroughs(registry, "failed");
  }

  private static io.micrometer.core.instrument.Counter writeThroughs(
      io.micrometer.core.instrument.MeterRegistry registry, String outcome) {
    return io.micrometer.core.instrument.Counter.builder(
            io.strata.common.metrics.MetricNames.FUSE_WRITE_THROUGHS)
        .tag("outcome", outcome)
        .description(
            "Staged copies written through to the cluster on close or fsync, by"
                + " outcome (written, or failed and kept for another try)")
        .register(registry);
  }

  /** The inode number this mount shows for a file or folder (see {@link ShownInodes}). */
  long shownInode(FileInfo f) {
    return shownInodes.of(f);
  }

  /** Whether open flags ask for writing. */
  static boolean writes(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY;
  }

  /** The stable identity of a file: its inode number (its file id from older masters). */
  static long inodeOf(FileInfo f) {
    return f.getInodeNumber() != 0 ? f.getInodeNumber() : f.getFileId();
  }

  /** The staged copy of a file, when one is open on this mount; else null. */
  StagedFile staged(FileInfo f) {
    return f.getDirectory() ? null : staging.get(inodeOf(f));
  }

  StagingArea staging() {
    return staging;
  }

  // ---- files written through a staged copy ----

  /**
   * Creates {@code path} and opens it for writing. The master learns of the file when it is first
   * closed or synced, in one call that commits it with its content and attributes ({@link
   * #writeThrough}); until then it exists in this mount only, where every process sees it at once
   * ({@link PendingCreates}), with a provisional inode number that becomes the master's at that
   * commit. With {@code O_EXCL} an existing path is EEXIST now, and a name another client takes
   * before the commit is EEXIST at that close; otherwise an existing file is opened as open(2)
   * would.
   */
  WriteHandle create(String path, long mode, int flags, Caller caller) throws IOException {
    FileInfo existing = existingOrNull(path);
    if (existing != null) {
      if ((flags & O_EXCL) != 0) {
        throw new StrataException(ErrorCode.ALREADY_EXISTS, "File exists: " + path);
      }
      return openForWrite(path, existing, flags);
    }
    String parent = PathNames.parent(path);
    FileInfo folder = parent == null ? null : metadata.get(parent);
    if (folder == null || !folder.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR, "Not a directory: " + parent);
    }
    String group = names.groupName(caller.gid());
    if ((folder.getMode() & 02000) != 0) {
      // A set-group-ID folder gives new entries its group, as the master will at the commit.
      group = folder.getGroup();
    }
    long inode = PROVISIONAL_INODES | provisionalInodes.incrementAndGet();
    long nowNs = StagingArea.nowNs();
    FileInfo entry =
        FileInfo.newBuilder()
            .setPath(path)
            .setName(PathNames.name(path))
            .setFileId(inode)
            .setInodeNumber(inode)
            .setMode((int) (mode & 07777))
            .setOwner(names.userName(caller.uid()))
            .setGroup(group)
            .setLinkCount(1)
            .setModificationTimeMs(nowNs / 1_000_000L)
            .setModificationTimeNs(nowNs)
            .setChangeTimeNs(nowNs)
            .setAccessTimeNs(nowNs)
            .build();
    StagedFile file =
        staging.acquire(
            inode, data -> new StagedFile(inode, path, null, entry, data, staging, this::openBase));
    if ((flags & O_EXCL) != 0) {
      file.createdExclusive();
    }
    if ((mode & 07777) == 0) {
      // The master takes a mode of 0 for its default: the mode asked comes with the content.
      file.setPending(0, null, null, null, null);
    }
    metadata.pendingCreates().add(path, entry);
    folderChanged(path);
    return new WriteHandle(file, flags, true);
  }

  /** The status of {@code path}, or null when nothing is there. */
  private FileInfo existingOrNull(String path) throws StrataException {
    try {
      return metadata.get(path);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }

  /**
   * Whether a status is a provisional one this mount gave a file it created and has not committed
   * yet.
   */
  static boolean provisional(FileInfo f) {
    return !f.getDirectory() && (inodeOf(f) & PROVISIONAL_INODES) != 0;
  }

  /**
   * Opens an existing file for writing: its staged copy (made now, from the version {@code info}
   * describes, unless one is open already); {@code O_TRUNC} empties it.
   */
  WriteHandle openForWrite(String path, FileInfo info, int flags) throws IOException {
    if (info.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR, "Is a directory: " + path);
    }
    long inode = inodeOf(info);
    if (staging.get(inode) == null && !info.getComplete()) {
      throw StrataException.failedPrecondition(
          "File is being written by another client: "
              + path
              + " (open it once that writer closed it)");
    }
    StagedFile file =
        staging.acquire(
            inode, data -> new StagedFile(inode, path, info, null, data, staging, this::openBase));
    boolean truncate = (flags & O_TRUNC) != 0;
    if (truncate) {
      try {
        file.truncate(0);
      } catch (IOException | RuntimeException e) {
        release(new WriteHandle(file, flags, false));
        throw e;
      }
    }
    return new WriteHandle(file, flags, truncate);
  }

  /** A reader of a version of a file, opened at its first read. */
  private PositionedSource openBase(FileInfo version) {
    return new LazyFileSource(
        version.getPath(),
        version.getFileId(),
        version.getLength(),
        () -> LazyFileSource.Opened.of(fs.openFile(version)));
  }

  /**
   * Writes a staged copy through to the cluster when it has changes: the first content of a new
   * file (which commits the file to the master), or a new version of an existing one. The new
   * status goes into the metadata cache, and the file's other names are dropped from the caches.
   */
  void writeThrough(StagedFile file) throws IOException {
    long mark = metadata.mark();
    boolean wasNew = file.isNew();
    long provisionalInode = file.inode();
    FileInfo done;
    try {
      // The staged copy holds every byte until a write-through succeeds: a worker that is away
      // is waited for, or another one taken.
      done = fs.writeRetrying(() -> writeThroughOnce(file, wasNew));
    } catch (IOException | RuntimeException e) {
      writeThroughFailures.increment();
      throw e;
    }
    if (done == null) {
      return;
    }
    writtenThrough.increment();
    if (wasNew) {
      shownInodes.committed(provisionalInode, inodeOf(done));
      staging.committed(file, inodeOf(done));
      metadata.pendingCreates().remove(file.path(), provisionalInode);
    }
    metadata.putOwn(file.path(), done, mark);
    otherNamesChanged(file.inode(), file.path());
  }

  /**
   * One write-through; a new file whose name another client took meanwhile is written as a new
   * version of that file unless it was created with O_EXCL (then EEXIST, and this mount sees the
   * other file at the name from now on).
   */
  private FileInfo writeThroughOnce(StagedFile file, boolean wasNew) throws IOException {
    try {
      return file.writeThrough(this::openStream);
    } catch (StrataException e) {
      if (!wasNew || e.code() != ErrorCode.ALREADY_EXISTS) {
        throw e;
      }
      String path = file.path();
      metadata.pendingCreates().remove(path, file.inode());
      metadata.invalidate(path);
      FileInfo taken = existingOrNull(path);
      if (file.exclusive() || taken == null || taken.getDirectory()) {
        throw new StrataException(
            ErrorCode.ALREADY_EXISTS,
            path
                + " was created here, but"
                + " another client made "
                + (taken != null && taken.getDirectory() ? "a folder" : "a file")
                + " of that name before it was first closed"
                + (file.exclusive() ? " (it was created exclusively, O_EXCL)" : "")
                + ": "
                + e.getMessage(),
            e);
      }
      LOG.info(
          "{} was made by another client before this mount's new file of that name was"
              + " first closed; this content becomes its new version",
          path);
      file.becomeVersionOf(taken);
      return file.writeThrough(this::openStream);
    }
  }

  /**
   * The stream that writes a staged copy: a new file's entry, or a new version of an existing file.
   * A cluster not yet finalized for new versions (or a master of an older release) gets the file
   * written anew instead, with its mode and owner (a new inode number then).
   */
  private FileOutStream openStream(StagedFile file) throws IOException {
    FileInfo created = file.created();
    if (created != null) {
      return fs.writeNewFile(
          file.path(),
          CreateOptions.defaults()
              .mode(created.getMode())
              .owner(created.getOwner())
              .group(created.getGroup()));
    }
    try {
      return fs.createFile(file.path(), CreateOptions.defaults().newVersion(true));
    } catch (StrataException e) {
      boolean older =
          e.code() == ErrorCode.UNIMPLEMENTED
              || (e.code() == ErrorCode.FAILED_PRECONDITION
                  && e.getMessage() != null
                  && e.getMessage().contains("upgrade finalize"));
      if (!older) {
        throw e;
      }
      LOG.info(
          "Writing {} anew rather than as a new version (the cluster is not finalized"
              + " for new versions yet): {}",
          file.path(),
          e.getMessage());
      FileInfo base = file.base();
      return fs.createFile(
          file.path(),
          CreateOptions.defaults()
              .overwrite(true)
              .mode(base.getMode())
              .owner(base.getOwner())
              .group(base.getGroup()));
    }
  }

  /** close(2) of a handle: writes the file through when this handle changed it. */
  void flush(WriteHandle handle) throws IOException {
    if (handle.changed()) {
      writeThrough(handle.file());
      handle.writtenThrough();
    }
  }

  /** fsync(2): writes the file through when it has changes, whoever made them. */
  void fsync(WriteHandle handle) throws IOException {
    writeThrough(handle.file());
    handle.writtenThrough();
  }

  /**
   * The kernel is done with a handle. Changes it made that no close wrote through (a failed
   * write-through) get one more try; the file's copy goes with its last handle, and a copy that
   * still holds changes is kept on disk and named in the log.
   */
  void release(WriteHandle handle) {
    if (!handle.release()) {
      return;
    }
    StagedFile file = handle.file();
    if (handle.changed() && file.dirty() && !file.isUnlinked()) {
      try {
        writeThrough(file);
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "Writing {} through failed again after its last close: {}", file.path(), e.toString());
      }
    }
    boolean wasNew = file.isNew();
    long inode = file.inode();
    try {
      Path kept = staging.release(file);
      if (wasNew && staging.get(inode) == null) {
        // Never committed: the name goes with the copy (kept on disk when it held changes),
        // from the kernel too, which would otherwise show it for its entry timeout. A release
        // holds no folder's lock, so the name is dropped now.
        metadata.pendingCreates().remove(file.path(), inode);
        metadata.invalidate(file.path());
        folderChanged(file.path());
        String inMount = paths.toMount(file.path());
        if (inMount != null) {
          kernel.invalidateEntryNow(inMount);
        }
      }
      if (kept != null) {
        LOG.error(
            "{} was closed with changes that could not be written through to the"
                + " cluster; they are kept in {} (the bytes written, at their offsets; see {} for"
                + " the file) and the file in Strata keeps its previous content",
            file.path(),
            kept,
            kept.resolveSibling(kept.getFileName().toString().replace(".data", ".info")));
      }
    } catch (IOException e) {
      LOG.warn("Cannot close the staged copy of {}: {}", file.path(), e.toString());
    }
  }

  /**
   * After {@code caller} wrote or truncated through {@code handle}: privileges the write kills go
   * (set-user-ID and set-group-ID bits, as Linux drops them), and the file's other names show its
   * new size.
   */
  void written(WriteHandle handle, Caller caller) {
    StagedFile file = handle.file();
    FileCompletion pending = file.pendingAttributes();
    FileInfo status = file.status();
    int mode = pending.mode() != null ? pending.mode() : status.getMode();
    if ((mode & 06000) != 0) {
      String group = pending.group() != null ? pending.group() : status.getGroup();
      int after = caller.modeAfterWrite(mode, names.gid(group));
      if (after != mode) {
        file.setPending(after, null, null, null, null);
      }
    }
    otherNamesChanged(file.inode(), file.path());
  }

  /**
   * truncate(2) by path: through the file's staged copy (this mount's open one, or one made for the
   * call), written through at once.
   */
  int truncate(String path, long size, Caller caller) throws IOException {
    FileInfo info = metadata.get(path);
    if (info.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR, "Is a directory: " + path);
    }
    WriteHandle handle = openForWrite(path, info, 0);
    try {
      handle.truncate(size);
      written(handle, caller);
      flush(handle);
    } finally {
      release(handle);
    }
    return 0;
  }

  // ---- names ----

  int mkdir(String path, long mode, Caller caller) throws StrataException {
    long mark = metadata.mark();
    FileInfo made;
    try {
      made =
          fs.createDirectory(
              path,
              false,
              false,
              (int) (mode & 07777),
              names.userName(caller.uid()),
              names.groupName(caller.gid()));
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    // A new folder is empty: lookups in it answer from the cache at once.
    metadata.putNewFolder(path, made, mark);
    folderChanged(path, 1);
    modeZero(path, mode);
    return 0;
  }

  /**
   * The master takes a mode of 0 for its default (0755, 0644): a folder or special file made with
   * mode 0 gets it set after.
   */
  private void modeZero(String path, long mode) throws StrataException {
    if ((mode & 07777) == 0) {
      setAttribute(path, SetAttributeOptions.defaults().mode(0));
    }
  }

  /** A symbolic link at {@code path} whose target is {@code target}, owned by the caller. */
  int symlink(String target, String path, Caller caller) throws StrataException {
    long mark = metadata.mark();
    try {
      metadata.putOwn(
          path,
          fs.createSpecialFile(
              path,
              FileType.FILE_TYPE_SYMLINK,
              0777,
              target,
              0,
              names.userName(caller.uid()),
              names.groupName(caller.gid())),
          mark);
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    folderChanged(path);
    return 0;
  }

  /** mknod(2): a regular file (made empty and complete), FIFO, socket or device node. */
  int mknod(String path, long mode, long rdev, Caller caller) throws IOException {
    int type = (int) (mode & S_IFMT);
    if (type == S_IFREG || type == 0) {
      WriteHandle h = create(path, mode, O_EXCL, caller);
      try {
        flush(h);
      } finally {
        release(h);
      }
      return 0;
    }
    FileType kind =
        switch (type) {
          case S_IFIFO -> FileType.FILE_TYPE_FIFO;
          case S_IFSOCK -> FileType.FILE_TYPE_SOCKET;
          case S_IFCHR -> FileType.FILE_TYPE_CHAR_DEVICE;
          case S_IFBLK -> FileType.FILE_TYPE_BLOCK_DEVICE;
          default ->
              throw new StrataException(
                  ErrorCode.INVALID_ARGUMENT,
                  PosixError.EINVAL,
                  "Unknown file type " + Integer.toOctalString(type) + " for " + path);
        };
    long mark = metadata.mark();
    try {
      metadata.putOwn(
          path,
          fs.createSpecialFile(
              path,
              kind,
              (int) (mode & 07777),
              "",
              kind == FileType.FILE_TYPE_FIFO || kind == FileType.FILE_TYPE_SOCKET ? 0 : rdev,
              names.userName(caller.uid()),
              names.groupName(caller.gid())),
          mark);
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    folderChanged(path);
    modeZero(path, mode);
    return 0;
  }

  /** link(2): {@code path} becomes another name of the file at {@code existing}. */
  int link(String existing, String path) throws IOException {
    FileInfo info = metadata.get(existing);
    StagedFile file = staged(info);
    if (file != null && file.dirty()) {
      // The master links complete files only: what this mount holds goes first.
      writeThrough(file);
      info = metadata.get(existing);
    }
    long mark = metadata.mark();
    FileInfo linked;
    try {
      linked = fs.createHardLink(existing, path);
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    aliases.seen(inodeOf(info), existing);
    aliases.seen(inodeOf(info), path);
    metadata.putOwn(path, linked, mark);
    metadata.putOwn(
        existing,
        linked.toBuilder().setPath(existing).setName(PathNames.name(existing)).build(),
        mark);
    // libfuse gives the new name a kernel node of its own: the old one's link count is stale.
    String existingInMount = paths.toMount(existing);
    if (existingInMount != null) {
      kernel.invalidateNodeNow(existingInMount);
    }
    folderChanged(path);
    otherNamesChanged(inodeOf(info), existing, PathNames.parent(path));
    return 0;
  }

  int unlink(String path) throws StrataException {
    FileInfo info = metadata.get(path);
    if (info.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.EISDIR, "Is a directory: " + path);
    }
    long inode = inodeOf(info);
    if (provisional(info)) {
      // Never committed: only this mount knew it, and nothing of it reaches the cluster.
      StagedFile file = staging.get(inode);
      if (file != null) {
        file.unlinked();
      }
      metadata.pendingCreates().remove(path, inode);
      metadata.removed(path);
      folderChanged(path);
      return 0;
    }
    try {
      fs.delete(path, false);
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    metadata.removed(path);
    folderChanged(path);
    aliases.forget(inode, path);
    if (hiddenName(path)) {
      hidden.computeIfPresent(inode, (k, n) -> n.decrementAndGet() <= 0 ? null : n);
    }
    StagedFile file = staging.get(inode);
    if (file != null && file.path().equals(path)) {
      java.util.List<String> others = aliases.othersOf(inode, path);
      if (info.getLinkCount() <= 1 || others.isEmpty()) {
        file.unlinked();
      } else {
        file.moveTo(others.get(0));
      }
    }
    otherNamesChanged(inode, path, PathNames.parent(path));
    return 0;
  }

  int rmdir(String path) throws StrataException {
    FileInfo info = metadata.get(path);
    if (!info.getDirectory()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION, PosixError.ENOTDIR, "Not a directory: " + path);
    }
    if (path.equals(PathNames.ROOT)) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, "Cannot remove the root " + path);
    }
    if (metadata.pendingCreates().anyBelow(path)) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          PosixError.ENOTEMPTY,
          "Directory not empty: " + path + " holds a file created here and not closed yet");
    }
    try {
      // The folder's hidden entries (the S3 proxy's staged uploads and noncurrent versions) go
      // with it: they are not listed, so rm -rf could never empty the folder of them.
      fs.deleteUnlessVisibleChildren(path);
    } catch (StrataException e) {
      metadata.invalidateTree(path);
      throw e;
    }
    metadata.removedTree(path);
    folderChanged(path, -1);
    return 0;
  }

  /**
   * rename(2): an existing target is replaced in one step at the master (a file by a file, an empty
   * folder by a folder); a staged copy of the file is written through first (the master renames
   * complete files), and follows the new path.
   */
  int rename(String from, String to) throws IOException {
    FileInfo source = metadata.get(from);
    FileInfo target = null;
    try {
      target = metadata.get(to);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
    if (target != null
        && !source.getDirectory()
        && !target.getDirectory()
        && inodeOf(target) == inodeOf(source)) {
      // Two names of one file: rename(2) leaves both (the master agrees).
      return 0;
    }
    StagedFile file = staged(source);
    if (file != null && file.dirty() && !file.isUnlinked()) {
      writeThrough(file);
      // A new file has the master's status and inode number now.
      source = metadata.get(from);
    }
    if (source.getDirectory()) {
      // Files created below it and not committed yet are committed first: the master moves
      // what it knows.
      for (StagedFile f : staging.all()) {
        if (f.isNew() && !f.isUnlinked() && PathNames.isUnder(f.path(), from)) {
          writeThrough(f);
        }
      }
    }
    try {
      fs.rename(from, to, true);
    } catch (StrataException e) {
      metadata.invalidateTree(from);
      metadata.invalidateTree(to);
      throw e;
    }
    if (target != null && provisional(target)) {
      // Replaced before it was committed: the master never knew it, and its handles keep what
      // they wrote, as those of an unlinked file do.
      StagedFile replaced = staging.get(inodeOf(target));
      if (replaced != null) {
        replaced.unlinked();
      }
      metadata.pendingCreates().remove(to, inodeOf(target));
    }
    metadata.removedTree(from);
    metadata.removedTree(to);
    long mark = metadata.mark();
    if (source.getDirectory()) {
      // Its subtree moved: what is below the new name is read again when asked.
      metadata.invalidate(to);
      boolean replaced = target != null && target.getDirectory();
      folderChanged(from, -1);
      folderChanged(to, replaced ? 0 : 1);
    } else {
      // Asked again: the new name has its own under-store path, which its readers need.
      FileInfo moved = statusOrNull(to);
      if (moved != null) {
        metadata.putOwn(to, moved, mark);
      } else {
        metadata.invalidate(to);
      }
      folderChanged(from);
      folderChanged(to);
      if (hiddenName(to) && !hiddenName(from)) {
        hidden
            .computeIfAbsent(inodeOf(source), k -> new java.util.concurrent.atomic.AtomicInteger())
            .incrementAndGet();
      }
    }
    String prefix = from + "/";
    for (StagedFile f : staging.all()) {
      String p = f.path();
      if (p.equals(from) || p.startsWith(prefix)) {
        String now = to + p.substring(from.length());
        f.moved(now, statusOrNull(now));
        staging.noteMoved(f);
      }
    }
    if (!source.getDirectory()) {
      long inode = inodeOf(source);
      aliases.forget(inode, from);
      otherNamesChanged(inode, to, PathNames.parent(from), PathNames.parent(to));
    }
    if (target != null && !target.getDirectory()) {
      // The replaced file lost a name: its other names show one link fewer and a new ctime.
      long replaced = inodeOf(target);
      aliases.forget(replaced, to);
      otherNamesChanged(replaced, to, PathNames.parent(from), PathNames.parent(to));
    }
    return 0;
  }

  /**
   * A path's status with its blocks, asked of the master (no cache: it just changed), or null when
   * it cannot be had now (a later read asks again).
   */
  FileInfo statusOrNull(String path) {
    try {
      return fs.getStatus(path, io.strata.client.SyncOption.DEFAULT, true);
    } catch (StrataException e) {
      LOG.debug("Cannot read the status of {} after its rename: {}", path, e.toString());
      return null;
    }
  }

  // ---- attributes ----

  int chmod(String path, long mode, Caller caller) throws StrataException {
    FileInfo info = metadata.get(path);
    StagedFile staged = staged(info);
    String group =
        staged != null && staged.pendingAttributes().group() != null
            ? staged.pendingAttributes().group()
            : info.getGroup();
    int bits = caller.chmodMode((int) (mode & 07777), names.gid(group));
    StagedFile file = pendingCopy(path);
    if (file != null) {
      file.setPending(bits, null, null, null, null);
      return changedHere(path, file);
    }
    return setAttribute(path, SetAttributeOptions.defaults().mode(bits));
  }

  /** chown with -1 (all bits set in either width) for an id that stays. */
  int chown(String path, long uid, long gid) throws StrataException {
    String owner = unchanged(uid) ? null : names.userName(uid);
    String group = unchanged(gid) ? null : names.groupName(gid);
    StagedFile file = pendingCopy(path);
    if (file != null) {
      file.setPending(null, owner, group, null, null);
      return changedHere(path, file);
    }
    SetAttributeOptions options = SetAttributeOptions.defaults();
    if (owner != null) {
      options = options.owner(owner);
    }
    if (group != null) {
      options = options.group(group);
    }
    if (options.isEmpty()) {
      // chown(-1, -1) still changes the inode's change time, as Linux does.
      options = options.owner(metadata.get(path).getOwner());
    }
    return setAttribute(path, options);
  }

  private static boolean unchanged(long id) {
    return id == -1 || id == 0xFFFF_FFFFL;
  }

  /**
   * utimensat(2): sets the access and/or modification time, each in ns since the epoch; null leaves
   * one as it is (UTIME_OMIT).
   */
  int setTimes(String path, Long accessNs, Long modificationNs) throws StrataException {
    if (accessNs == null && modificationNs == null) {
      return 0;
    }
    StagedFile file = pendingCopy(path);
    if (file != null) {
      file.setPending(null, null, null, accessNs, modificationNs);
      return changedHere(path, file);
    }
    SetAttributeOptions options = SetAttributeOptions.defaults();
    if (accessNs != null) {
      options = options.accessTimeNs(accessNs);
    }
    if (modificationNs != null) {
      options =
          options
              .modificationTimeNs(modificationNs)
              .modificationTimeMs(Math.floorDiv(modificationNs, 1_000_000L));
    }
    return setAttribute(path, options);
  }

  /** Sets ({@code value} not null) or removes an extended attribute of the namespace. */
  int setXattr(String path, String name, ByteString value) throws IOException {
    StagedFile file = pendingCopy(path);
    if (file != null && file.isNew()) {
      // Extended attributes are the master's: a file it does not know yet is committed first.
      writeThrough(file);
    }
    SetAttributeOptions options =
        value == null
            ? SetAttributeOptions.defaults().removeXattr(name)
            : SetAttributeOptions.defaults().xattr(name, value);
    return setAttribute(path, options);
  }

  /** The staged copy of the file at {@code path} when it holds changes not written through. */
  private StagedFile pendingCopy(String path) throws StrataException {
    FileInfo info = metadata.get(path);
    StagedFile file = staged(info);
    return file != null && file.dirty() && !file.isUnlinked() ? file : null;
  }

  /** A change kept with a staged copy: the other names of the file show it too. */
  private int changedHere(String path, StagedFile file) {
    otherNamesChanged(file.inode(), path);
    return 0;
  }

  private int setAttribute(String path, SetAttributeOptions options) throws StrataException {
    long mark = metadata.mark();
    try {
      FileInfo after = fs.setAttribute(path, options);
      metadata.putOwn(path, after, mark);
      if (!after.getDirectory()) {
        otherNamesChanged(inodeOf(after), path);
      }
    } catch (StrataException e) {
      metadata.invalidate(path);
      throw e;
    }
    return 0;
  }

  // ---- what the caches must forget ----

  /**
   * The folder of {@code path} changed (a name added, removed or renamed): its times moved, in the
   * metadata cache too (its listing stays); the kernel dropped its own copy already.
   */
  private void folderChanged(String path) {
    folderChanged(path, 0);
  }

  /** As {@link #folderChanged(String)}, the folder gaining or losing {@code subfolders}. */
  private void folderChanged(String path, int subfolders) {
    String parent = PathNames.parent(path);
    if (parent != null) {
      metadata.folderChanged(parent, StagingArea.nowNs(), subfolders);
    }
  }

  /**
   * How many of a file's names are libfuse's hidden names of it (unlinked while open): they count
   * in the master's link count but not in what stat shows, as on a local disk.
   */
  int hiddenNames(long inode) {
    java.util.concurrent.atomic.AtomicInteger n = hidden.get(inode);
    return n == null ? 0 : n.get();
  }

  /** Whether a name is one libfuse gives a file unlinked while open. */
  static boolean hiddenName(String path) {
    return PathNames.name(path).startsWith(HIDDEN_PREFIX);
  }

  /**
   * File {@code inode} changed through {@code path}: its other names this mount knows (hard links)
   * are dropped from the metadata cache, and from the kernel's caches before the call returns where
   * that is safe. The kernel holds each name as a node of its own, with the attributes it was last
   * told; a name must be dropped from its folder to be asked again, which takes the folder's lock:
   * a folder the request being answered holds ({@code lockedFolders}: the folder of a name made,
   * removed or renamed) is left to the queue, which drops it right after.
   */
  private void otherNamesChanged(long inode, String path, String... lockedFolders) {
    for (String other : aliases.othersOf(inode, path)) {
      metadata.invalidate(other);
      String inMount = paths.toMount(other);
      if (inMount == null) {
        continue;
      }
      // The name still stands: dropping the node's attributes is enough, and keeps the node
      // the mount knows for it. Only a name whose node it never learnt is dropped whole.
      if (kernel.invalidateNodeNow(inMount)) {
        continue;
      }
      if (java.util.Arrays.asList(lockedFolders).contains(PathNames.parent(other))) {
        kernel.invalidate(inMount, false);
      } else {
        kernel.invalidateEntryNow(inMount);
      }
    }
  }
}
