package io.strata.fuse;

import io.strata.client.FileCompletion;
import io.strata.client.FileOutStream;
import io.strata.common.BlockIds;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The local copy of one file open for writing through the mount (a write-back staging copy, as
 * rclone's and s3fs's write caches keep): writes at any offset, truncation to any size and reads of
 * the result, all on this machine, until {@link #writeThrough} streams the whole content to the
 * cluster as a new version of the file (or the first content of a new file).
 *
 * <p>The copy starts from a version of the file in the cluster (its <em>base</em>) without copying
 * it: the bytes written here are kept in a sparse local file and remembered as {@link ByteRanges};
 * every other byte below {@code baseValid} is read from the base version, and every byte past it is
 * a zero (the file grew, or was cut and grown again). So opening a large file and changing a few
 * bytes costs those bytes on local disk, and writing it through costs one pass over the file.
 *
 * <p>Guarantees: reads see every write and truncation made before them, whatever handle made it; a
 * write-through sends exactly the content as it is when it starts (writes wait for it), and only a
 * successful one makes the copy clean and rebases it on the version written, so a failed one loses
 * nothing and can be repeated. Readers of the cluster (other mounts) see the base version until
 * then, never a mix. Thread-safe: reads share a lock, changes take it alone.
 */
final class StagedFile {
  /** How a write-through reaches the cluster: the stream of the content to write. */
  @FunctionalInterface
  interface VersionWriter {
    /**
     * Opens the stream that writes the content of {@code file}: the first content of a new file
     * ({@link StagedFile#created}), or a new version of an existing one.
     */
    FileOutStream open(StagedFile file) throws IOException;
  }

  /** Opens a positioned reader of a version of the file (its base). */
  @FunctionalInterface
  interface BaseOpener {
    PositionedSource open(FileInfo version) throws IOException;
  }

  private static final int COPY_CHUNK = 1 << 20;

  /** Block size assumed for the largest length of a file whose status gives none. */
  private static final long DEFAULT_BLOCK = 64L << 20;

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  /** The file's inode number: a provisional one until a new file is committed. */
  private volatile long inode;

  /** Whether a new file was created with O_EXCL: a name taken meanwhile fails its commit. */
  private volatile boolean exclusive;

  private final Path data;
  private final StagingArea area;
  private final BaseOpener opener;
  private final FileChannel channel;
  private final ByteRanges written = new ByteRanges();

  /** The largest length the file may have: as many blocks as a file may have. */
  private final long maxLength;

  // Guarded by lock.
  private volatile String path;
  private FileInfo base;
  private PositionedSource baseSource;
  private long baseValid;
  private volatile long length;
  private volatile long modificationNs;
  private volatile long changeNs;
  private volatile boolean dirty;
  private volatile boolean unlinked;
  private FileCompletion pending = FileCompletion.NONE;
  private volatile FileInfo created;
  private long heldBytes;

  /**
   * @param inode the file's inode number (all its names share the copy)
   * @param path the namespace path it is written through
   * @param base the version it starts from; null for a new, empty file
   * @param created for a new file, its entry as the create made it (incomplete), which the first
   *     write-through completes; null otherwise
   */
  StagedFile(
      long inode,
      String path,
      FileInfo base,
      FileInfo created,
      Path data,
      StagingArea area,
      BaseOpener opener)
      throws IOException {
    this.inode = inode;
    this.path = path;
    this.base = base;
    this.created = created;
    this.dirty = created != null;
    FileInfo status = base != null ? base : created;
    long block =
        status != null && status.getBlockSize() > 0 ? status.getBlockSize() : DEFAULT_BLOCK;
    this.maxLength =
        block > Long.MAX_VALUE / BlockIds.MAX_BLOCKS_PER_FILE
            ? Long.MAX_VALUE
            : block * BlockIds.MAX_BLOCKS_PER_FILE;
    this.data = data;
    this.area = area;
    this.opener = opener;
    this.baseValid = base == null ? 0 : base.getLength();
    this.length = baseValid;
    long now = StagingArea.nowNs();
    this.modificationNs = base == null ? now : modificationNs(base);
    this.changeNs = base == null ? now : changeNs(base);
    this.channel =
        FileChannel.open(
            data, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE);
  }

  static long modificationNs(FileInfo f) {
    return f.hasModificationTimeNs()
        ? f.getModificationTimeNs()
        : f.getModificationTimeMs() * 1_000_000L;
  }

  static long changeNs(FileInfo f) {
    return f.hasChangeTimeNs() ? f.getChangeTimeNs() : modificationNs(f);
  }

  long inode() {
    return inode;
  }

  /** The inode number the master gave a new file when it was committed. */
  void committedAs(long masterInode) {
    this.inode = masterInode;
  }

  /**
   * Whether this is a file this mount created and has not committed to the master yet: it has a
   * provisional status ({@link #created}) that only this mount knows.
   */
  boolean isNew() {
    FileInfo c = created;
    return c != null && MountWrites.provisional(c);
  }

  /** The new file was created with O_EXCL: its commit must not take an existing name. */
  void createdExclusive() {
    this.exclusive = true;
  }

  boolean exclusive() {
    return exclusive;
  }

  /**
   * The new file's name was taken by another client before this one was committed, and it was not
   * created exclusively: the content written here becomes a new version of that file (the last
   * writer wins, as when two clients write one object), with nothing of its old content.
   */
  void becomeVersionOf(FileInfo existing) {
    lock.writeLock().lock();
    try {
      closeBase();
      base = existing;
      // Every byte of the new file is held here or is a zero: none comes from the existing one.
      baseValid = 0;
      created = null;
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** The namespace path the file is written through (it follows renames). */
  String path() {
    return path;
  }

  void moveTo(String newPath) {
    this.path = newPath;
  }

  /**
   * The file was renamed: its path, and the version it reads unwritten bytes from, as the master
   * now has them (the same version, by its new name and so its new under-store path).
   */
  void moved(String newPath, FileInfo nowBase) {
    lock.writeLock().lock();
    try {
      this.path = newPath;
      if (base != null && nowBase != null && nowBase.getFileId() == base.getFileId()) {
        base = nowBase;
        closeBase();
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** The local file that holds the written bytes. */
  Path data() {
    return data;
  }

  /** The file's length as its handles see it. */
  long length() {
    return length;
  }

  long modificationNs() {
    return modificationNs;
  }

  long changeNs() {
    return changeNs;
  }

  /** Whether the copy holds changes the cluster does not have yet. */
  boolean dirty() {
    return dirty;
  }

  /** The version this copy started from, or null for a new file never written through. */
  FileInfo base() {
    lock.readLock().lock();
    try {
      return base;
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The file's status as the cluster has it: the base version, or a new file's entry. */
  FileInfo status() {
    FileInfo b = base();
    return b != null ? b : created;
  }

  /**
   * A new file's entry as its create made it, until its first content is written through (the
   * master holds it incomplete until then); null otherwise.
   */
  FileInfo created() {
    return created;
  }

  /** The file lost its last name while open: nothing is written through any more. */
  void unlinked() {
    unlinked = true;
  }

  boolean isUnlinked() {
    return unlinked;
  }

  /** Attributes changed while the copy was dirty, set when it is written through. */
  FileCompletion pendingAttributes() {
    lock.readLock().lock();
    try {
      return pending;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Records attribute changes to apply with the next write-through (a null leaves one as it was);
   * the change time moves now.
   */
  void setPending(Integer mode, String owner, String group, Long accessNs, Long modifiedNs) {
    lock.writeLock().lock();
    try {
      pending =
          new FileCompletion(
              null,
              mode != null ? mode : pending.mode(),
              owner != null ? owner : pending.owner(),
              group != null ? group : pending.group(),
              accessNs != null ? accessNs : pending.accessTimeNs());
      if (modifiedNs != null) {
        modificationNs = modifiedNs;
      }
      changeNs = StagingArea.nowNs();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Reads up to {@code len} bytes at {@code position}: written bytes from the local copy, the rest
   * from the base version, zeros past it; -1 at or past the end.
   */
  int read(long position, byte[] b, int off, int len) throws IOException {
    lock.readLock().lock();
    try {
      long end = Math.min(length, position + len);
      if (position >= end) {
        return position >= length ? -1 : 0;
      }
      for (ByteRanges.Piece p : written.split(position, end)) {
        int at = off + (int) (p.start() - position);
        if (p.held()) {
          readLocal(p.start(), b, at, p.length());
        } else {
          readBase(p.start(), b, at, p.length());
        }
      }
      return (int) (end - position);
    } finally {
      lock.readLock().unlock();
    }
  }

  private void readLocal(long position, byte[] b, int off, int len) throws IOException {
    ByteBuffer dst = ByteBuffer.wrap(b, off, len);
    while (dst.hasRemaining()) {
      int n = channel.read(dst, position + (dst.position() - off));
      if (n < 0) {
        // The local file is sparse and may end before a written range's zeros: fill them.
        Arrays.fill(b, dst.position(), off + len, (byte) 0);
        return;
      }
    }
  }

  /** Reads bytes not written here: from the base below {@code baseValid}, zeros past it. */
  private void readBase(long position, byte[] b, int off, int len) throws IOException {
    int fromBase = (int) Math.max(0, Math.min(len, baseValid - position));
    int done = 0;
    while (done < fromBase) {
      int n = baseSource().read(position + done, b, off + done, fromBase - done);
      if (n <= 0) {
        break;
      }
      done += n;
    }
    Arrays.fill(b, off + done, off + len, (byte) 0);
  }

  private PositionedSource baseSource() throws IOException {
    // Opened under the read lock by whichever reader comes first; a second one may race it.
    PositionedSource s = baseSource;
    if (s == null) {
      synchronized (this) {
        if (baseSource == null) {
          baseSource = opener.open(base);
        }
        s = baseSource;
      }
    }
    return s;
  }

  /**
   * Writes {@code src}'s remaining bytes at {@code position}.
   *
   * @throws io.strata.common.error.StrataException ENOSPC when the mount's staging space would be
   *     exceeded (nothing is written then)
   */
  void write(long position, ByteBuffer src) throws IOException {
    lock.writeLock().lock();
    try {
      int len = src.remaining();
      checkLength(position + len);
      // Only bytes the copy does not hold yet take more room.
      long adding = written.missing(position, position + len);
      area.reserve(adding);
      long before = written.bytes();
      try {
        while (src.hasRemaining()) {
          channel.write(src, position + (len - src.remaining()));
        }
      } finally {
        written.add(position, position + len - src.remaining());
        long added = written.bytes() - before;
        heldBytes += added;
        area.settle(adding, added);
      }
      length = Math.max(length, position + len);
      touch();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Cuts or extends (with zeros) the file to {@code size} bytes. */
  void truncate(long size) throws IOException {
    checkLength(size);
    lock.writeLock().lock();
    try {
      if (size < length) {
        long before = written.bytes();
        written.truncate(size);
        long freed = before - written.bytes();
        heldBytes -= freed;
        area.release(freed);
        channel.truncate(size);
        baseValid = Math.min(baseValid, size);
      }
      length = size;
      touch();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Extends the file to at least {@code size} bytes (fallocate without KEEP_SIZE). */
  void extendTo(long size) throws IOException {
    checkLength(size);
    lock.writeLock().lock();
    try {
      if (size > length) {
        length = size;
        touch();
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  /** Fails with EFBIG when the file cannot be {@code length} bytes long. */
  private void checkLength(long length) throws StrataException {
    if (length > maxLength || length < 0) {
      throw new StrataException(
          ErrorCode.INVALID_ARGUMENT,
          PosixError.EFBIG,
          path
              + " cannot"
              + " be "
              + length
              + " bytes long: a file holds at most "
              + maxLength
              + " bytes ("
              + BlockIds.MAX_BLOCKS_PER_FILE
              + " blocks of its block size)");
    }
  }

  private void touch() {
    long now = StagingArea.nowNs();
    modificationNs = now;
    changeNs = now;
    dirty = true;
  }

  /**
   * Streams the whole content to the cluster as the file's new version (or a new file's first
   * content), with the attributes changed meanwhile, and rebases the copy on it: the local bytes
   * are dropped, reads go to the version written. Does nothing when the copy is clean or the file
   * was unlinked. On failure the copy stays as it was, dirty.
   *
   * @return the file's status as the master completed it; null when nothing was written
   */
  FileInfo writeThrough(VersionWriter writer) throws IOException {
    lock.writeLock().lock();
    try {
      if (!dirty || unlinked) {
        return null;
      }
      FileOutStream out = writer.open(this);
      try {
        byte[] buf = new byte[(int) Math.min(COPY_CHUNK, Math.max(1, length))];
        for (long at = 0; at < length; ) {
          int n = (int) Math.min(buf.length, length - at);
          readFully(at, buf, n);
          out.write(buf, 0, n);
          at += n;
        }
        out.setCompletion(
            new FileCompletion(
                modificationNs,
                pending.mode(),
                pending.owner(),
                pending.group(),
                pending.accessTimeNs()));
        out.close();
      } catch (IOException | RuntimeException e) {
        out.cancel();
        throw e;
      }
      FileInfo done = out.completedStatus();
      rebase(done);
      return done;
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void readFully(long position, byte[] b, int len) throws IOException {
    for (ByteRanges.Piece p : written.split(position, position + len)) {
      int at = (int) (p.start() - position);
      if (p.held()) {
        readLocal(p.start(), b, at, p.length());
      } else {
        readBase(p.start(), b, at, p.length());
      }
    }
  }

  /** After a write-through: the copy is the version written, and holds nothing of its own. */
  private void rebase(FileInfo done) throws IOException {
    closeBase();
    base = done;
    baseValid = done.getLength();
    length = done.getLength();
    written.clear();
    area.release(heldBytes);
    heldBytes = 0;
    channel.truncate(0);
    pending = FileCompletion.NONE;
    created = null;
    dirty = false;
  }

  private void closeBase() {
    PositionedSource s;
    synchronized (this) {
      s = baseSource;
      baseSource = null;
    }
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // Only a reader of a version no longer needed.
      }
    }
  }

  /**
   * Closes the copy. A clean (or unlinked) copy's local file is deleted; a dirty one is kept for
   * the user to recover, and its location returned.
   *
   * @return the local file kept, or null when nothing was kept
   */
  Path close() throws IOException {
    lock.writeLock().lock();
    try {
      closeBase();
      channel.close();
      if (dirty && !unlinked) {
        return data;
      }
      area.release(heldBytes);
      heldBytes = 0;
      Files.deleteIfExists(data);
      return null;
    } finally {
      lock.writeLock().unlock();
    }
  }
}
