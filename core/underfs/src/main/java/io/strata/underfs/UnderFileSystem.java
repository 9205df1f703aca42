package io.strata.underfs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Iterator;
import java.util.List;

/**
 * An under store: where the files that Strata caches really live (a local directory, HDFS, an S3
 * bucket). Paths are full URIs of this store ({@code file:///data/x}, {@code s3://b/p/x}).
 *
 * <p>Contract:
 *
 * <ul>
 *   <li>A path that does not exist fails with {@link java.nio.file.NoSuchFileException} naming it;
 *       other failures are {@link IOException}s whose message names the store and the path.
 *   <li>{@link #list} returns children lazily, so a directory of millions of entries is never held
 *       in memory; the iterator must be closed.
 *   <li>{@link #read} reads exactly the range asked for (positioned), never the whole file; the
 *       buffer form asks the store for the whole range at once (one request on a remote store),
 *       never piece by piece.
 *   <li>{@link #create} makes a file visible under its name only when its stream is closed; {@link
 *       #concat} likewise, and may consume its sources.
 *   <li>Entries are described as themselves: a symbolic link is a {@link UfsFileType#SYMLINK} with
 *       its target, never followed, except by {@link #getTargetStatus} and where a store documents
 *       otherwise.
 *   <li>Every store holds regular files and directories. Symbolic links, FIFOs, sockets, device
 *       nodes and hard links are held where the store can: the methods that create them fail with
 *       {@link UnsupportedOperationException}, naming the store's scheme and what it cannot hold,
 *       where it cannot.
 *   <li>Implementations are safe for concurrent use by many threads.
 * </ul>
 */
public interface UnderFileSystem extends Closeable {
  /**
   * Part of the name of every temporary file Strata writes in a store (a write or a persist in
   * progress); listings leave such files out, so that a sync never takes one for a file.
   */
  String TEMP_MARKER = ".strata-tmp-";

  /** The URI scheme this store serves ("file", "hdfs", "s3"). */
  String scheme();

  /**
   * Status of the entry a path names, the entry itself: a symbolic link is reported as a {@link
   * UfsFileType#SYMLINK} with its target, not followed (a dangling link has a status), except where
   * a store documents otherwise. Links in the path's parent directories are followed as the store
   * resolves paths. Fails with NoSuchFileException when it does not exist.
   */
  UfsStatus getStatus(String path) throws IOException;

  /**
   * Status of what a path names once symbolic links are followed: for a link, the status of the
   * file or directory it leads to, under the path's own name. Used for mount roots, which may be
   * links. Fails with NoSuchFileException when the path, or where a link leads, does not exist.
   * This default is {@link #getStatus}, for stores that have no links.
   */
  default UfsStatus getTargetStatus(String path) throws IOException {
    return getStatus(path);
  }

  /**
   * The fingerprint of a path, as {@code getStatus(path).fingerprint()} gives it; a store that can
   * tell it more cheaply than a whole status (without owner and group names) says so here. Fails
   * with NoSuchFileException when the path does not exist.
   */
  default String fingerprint(String path) throws IOException {
    return getStatus(path).fingerprint();
  }

  /** Whether a path names an entry; a symbolic link exists even when its target does not. */
  boolean exists(String path) throws IOException;

  /**
   * The children of a directory, streamed, in no promised order. Each is described as {@link
   * #getStatus} describes it, the entry itself: a symbolic link is reported as a {@link
   * UfsFileType#SYMLINK} with its target, not followed, and a dangling link is listed, except where
   * a store documents otherwise. A {@code path} that is itself a link to a directory lists that
   * directory.
   */
  CloseableIterator<UfsStatus> list(String path) throws IOException;

  /**
   * Reads up to {@code length} bytes at {@code position} into {@code buffer}; returns the number
   * read, which is less than asked only at the end of the file (-1 at or past it).
   */
  int read(String path, long position, byte[] buffer, int offset, int length) throws IOException;

  /**
   * Reads up to {@code dst.remaining()} bytes at {@code position} into {@code dst}, advancing its
   * position by the count; returns the count, which is less than asked only at the end of the file
   * (-1 at or past it; 0 when nothing was asked). After a failure the position of {@code dst} and
   * its bytes past the position are undefined.
   *
   * <p>This default copies through a heap array of {@code dst.remaining()} bytes: the array form is
   * the one every store has, and one call for the whole range keeps it one request on a remote
   * store, where a loop over a small array would make one request per piece. Stores override it to
   * read into {@code dst} without the copy.
   */
  default int read(String path, long position, ByteBuffer dst) throws IOException {
    int wanted = dst.remaining();
    if (dst.hasArray()) {
      int n = read(path, position, dst.array(), dst.arrayOffset() + dst.position(), wanted);
      if (n > 0) {
        dst.position(dst.position() + n);
      }
      return n;
    }
    byte[] heap = new byte[wanted];
    int n = read(path, position, heap, 0, wanted);
    if (n > 0) {
      dst.put(heap, 0, n);
    }
    return n;
  }

  /** Starts writing a file; it appears under {@code path} only when the stream is closed. */
  UfsOutputStream create(String path, boolean overwrite, int mode) throws IOException;

  /**
   * Writes {@code target} as the concatenation of {@code sources}, files of this store, in order.
   * Like {@link #create}, the target appears under its name only when whole, replacing an existing
   * file only with {@code overwrite} (else FileAlreadyExistsException), with {@code mode} as {@code
   * create} applies it; a failure leaves the target as it was.
   *
   * <p><b>The sources may be consumed</b>: a store may move their bytes into the target rather than
   * copy them (HDFS concat moves their blocks and deletes them). Whether or not the call succeeds,
   * the caller must not use the sources afterwards, only delete what is left of them; a store that
   * fails part-way puts back the sources it had not consumed yet.
   *
   * <p>This default streams every source through this process, with positioned reads into {@code
   * create}'s stream ({@link StreamedConcat}); stores override it to join the files where they are,
   * without their bytes passing through Strata, and fall back to it when they cannot.
   *
   * @return the target's status as {@link #getStatus} gives it right after the write: its length,
   *     and the fingerprint {@code create}'s stream would have reported
   * @throws NoSuchFileException naming a source that does not exist
   */
  default UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    return StreamedConcat.write(this, sources, target, overwrite, mode);
  }

  /** Creates a directory and, when {@code recursive}, its missing parents. */
  void mkdirs(String path, boolean recursive) throws IOException;

  /** Deletes a file, or a directory with everything below it when {@code recursive}. */
  void delete(String path, boolean recursive) throws IOException;

  /** Renames a file or directory; fails when {@code dst} exists. */
  void rename(String src, String dst) throws IOException;

  /**
   * Renames a file or directory; without {@code replace}, exactly {@link #rename(String, String)}.
   * With {@code replace}, an existing {@code dst} is replaced as rename(2) replaces it: a file (or
   * any non-directory) by a non-directory, an empty directory by a directory.
   *
   * <p>This default deletes {@code dst} (not recursively) and then renames: a reader may see {@code
   * dst} missing in between, and a failure of the rename leaves it deleted. Stores that can replace
   * in one step override it.
   *
   * @throws NoSuchFileException naming {@code src} when it does not exist, or the parent of {@code
   *     dst} when that does not exist
   * @throws java.nio.file.DirectoryNotEmptyException when {@code dst} is a directory that is not
   *     empty; nothing is changed
   * @throws FileSystemException when a directory would replace a non-directory or the reverse;
   *     nothing is changed
   */
  default void rename(String src, String dst, boolean replace) throws IOException {
    if (!replace) {
      rename(src, dst);
      return;
    }
    UfsStatus from = getStatus(src);
    UfsStatus to;
    try {
      to = getStatus(dst);
    } catch (NoSuchFileException e) {
      rename(src, dst);
      return;
    }
    if (from.directory() != to.directory()) {
      throw new FileSystemException(
          src,
          dst,
          from.directory()
              ? "a directory cannot replace something that is not a directory"
              : "only a directory can replace a directory");
    }
    delete(dst, false);
    rename(src, dst);
  }

  /**
   * Makes {@code path} a symbolic link whose target is {@code target}, stored as text: relative or
   * absolute, never resolved, and it need not exist. A store may normalise the text as its path
   * syntax does (repeated and trailing '/' dropped), never more.
   *
   * @throws java.nio.file.FileAlreadyExistsException when {@code path} names an entry, even a
   *     dangling link
   * @throws NoSuchFileException naming the parent of {@code path} when it does not exist
   * @throws UnsupportedOperationException when the store cannot hold symbolic links (the default)
   */
  default void createSymlink(String path, String target) throws IOException {
    throw cannotHold("symbolic links");
  }

  /**
   * Makes {@code path} a FIFO, socket or device node with the permission bits {@code mode & 07777}
   * applied exactly, not narrowed by a umask.
   *
   * @param type {@link UfsFileType#FIFO}, {@link UfsFileType#SOCKET}, {@link
   *     UfsFileType#CHAR_DEVICE} or {@link UfsFileType#BLOCK_DEVICE}
   * @param mode permission bits (07777); other bits are ignored
   * @param rdev for a device node, its number as the kernel's {@code dev_t}: {@code makedev(major,
   *     minor)} as glibc encodes it, the value stat reports as {@code st_rdev}; ignored for FIFOs
   *     and sockets
   * @throws IllegalArgumentException when {@code type} is not one of these
   * @throws java.nio.file.AccessDeniedException when this process may not make such a node (device
   *     nodes need CAP_MKNOD)
   * @throws java.nio.file.FileAlreadyExistsException when {@code path} names an entry
   * @throws NoSuchFileException naming the parent of {@code path} when it does not exist
   * @throws UnsupportedOperationException when the store cannot hold this kind (the default)
   */
  default void createSpecialFile(String path, UfsFileType type, int mode, long rdev)
      throws IOException {
    checkSpecial(type);
    throw cannotHold(
        switch (type) {
          case FIFO -> "FIFOs";
          case SOCKET -> "sockets";
          case CHAR_DEVICE -> "character devices";
          default -> "block devices";
        });
  }

  /**
   * Makes {@code newPath} another name of the file {@code existingPath} names: one file, two names,
   * a change through either seen through both.
   *
   * @throws java.nio.file.FileAlreadyExistsException when {@code newPath} names an entry
   * @throws NoSuchFileException naming {@code existingPath} when it does not exist, or the parent
   *     of {@code newPath} when that does not exist
   * @throws UnsupportedOperationException when the store cannot hold hard links (the default)
   */
  default void createHardLink(String existingPath, String newPath) throws IOException {
    throw cannotHold("hard links");
  }

  /**
   * Makes {@code linkPath} another name of the file {@code existingPath} names, replacing in one
   * step whatever {@code linkPath} names now, so a reader of {@code linkPath} sees the old file or
   * the new one, never nothing. Used after a file with several names was rewritten under one of
   * them (a rewrite makes a new file), to bring its other names to the new content. A store does it
   * by linking a hidden temporary name beside {@code linkPath} and renaming that over it; the
   * temporary name never shows in listings, and is removed when a step fails.
   *
   * @throws NoSuchFileException naming {@code existingPath} when it does not exist, or the parent
   *     of {@code linkPath} when that does not exist
   * @throws FileSystemException when {@code linkPath} is a directory
   * @throws UnsupportedOperationException when the store cannot hold hard links (the default)
   */
  default void relink(String existingPath, String linkPath) throws IOException {
    throw cannotHold("hard links");
  }

  private static void checkSpecial(UfsFileType type) {
    if (!type.special()) {
      throw new IllegalArgumentException("Not a FIFO, socket or device node: " + type);
    }
  }

  private UnsupportedOperationException cannotHold(String what) {
    return new UnsupportedOperationException(scheme() + " stores cannot hold " + what);
  }

  /**
   * Whether the store cannot hold an entry at {@code uri} because its path is too long there (past
   * a bound the store documents), so a caller can refuse it with ENAMETOOLONG before making
   * anything. The default: no limit known.
   */
  default boolean pathTooLong(String uri) {
    return false;
  }

  /** An iterator over a resource that must be released. */
  interface CloseableIterator<T> extends Iterator<T>, Closeable {}
}
