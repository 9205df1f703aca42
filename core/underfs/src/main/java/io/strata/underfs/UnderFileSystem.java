package io.strata.underfs;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.Iterator;
import java.util.List;

/**
 * An under store: where the files that Strata caches really live (a local directory, HDFS, an
 * S3 bucket). Paths are full URIs of this store ({@code file:///data/x}, {@code s3://b/p/x}).
 *
 * <p>Contract:
 * <ul>
 *   <li>A path that does not exist fails with {@link java.nio.file.NoSuchFileException} naming
 *       it; other failures are {@link IOException}s whose message names the store and the path.
 *   <li>{@link #list} returns children lazily, so a directory of millions of entries is never
 *       held in memory; the iterator must be closed.
 *   <li>{@link #read} reads exactly the range asked for (positioned), never the whole file;
 *       the buffer form asks the store for the whole range at once (one request on a remote
 *       store), never piece by piece.
 *   <li>{@link #create} makes a file visible under its name only when its stream is closed;
 *       {@link #concat} likewise, and may consume its sources.
 *   <li>Implementations are safe for concurrent use by many threads.
 * </ul>
 */
public interface UnderFileSystem extends Closeable {
  /** The URI scheme this store serves ("file", "hdfs", "s3"). */
  String scheme();

  /** Status of a path; fails with NoSuchFileException when it does not exist. */
  UfsStatus getStatus(String path) throws IOException;

  /**
   * The fingerprint of a path, as {@code getStatus(path).fingerprint()} gives it; a store that
   * can tell it more cheaply than a whole status (without owner and group names) says so here.
   * Fails with NoSuchFileException when the path does not exist.
   */
  default String fingerprint(String path) throws IOException {
    return getStatus(path).fingerprint();
  }

  /** Whether a path exists. */
  boolean exists(String path) throws IOException;

  /** The children of a directory, streamed, in no promised order. */
  CloseableIterator<UfsStatus> list(String path) throws IOException;

  /**
   * Reads up to {@code length} bytes at {@code position} into {@code buffer}; returns the
   * number read, which is less than asked only at the end of the file (-1 at or past it).
   */
  int read(String path, long position, byte[] buffer, int offset, int length)
      throws IOException;

  /**
   * Reads up to {@code dst.remaining()} bytes at {@code position} into {@code dst}, advancing
   * its position by the count; returns the count, which is less than asked only at the end of
   * the file (-1 at or past it; 0 when nothing was asked). After a failure the position of
   * {@code dst} and its bytes past the position are undefined.
   *
   * <p>This default copies through a heap array of {@code dst.remaining()} bytes: the array
   * form is the one every store has, and one call for the whole range keeps it one request on
   * a remote store, where a loop over a small array would make one request per piece. Stores
   * override it to read into {@code dst} without the copy.
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
   * Writes {@code target} as the concatenation of {@code sources}, files of this store, in
   * order. Like {@link #create}, the target appears under its name only when whole, replacing
   * an existing file only with {@code overwrite} (else FileAlreadyExistsException), with
   * {@code mode} as {@code create} applies it; a failure leaves the target as it was.
   *
   * <p><b>The sources may be consumed</b>: a store may move their bytes into the target
   * rather than copy them (HDFS concat moves their blocks and deletes them). Whether or not the
   * call succeeds, the caller must not use the sources afterwards, only delete what is left of
   * them; a store that fails part-way puts back the sources it had not consumed yet.
   *
   * <p>This default streams every source through this process, with positioned reads into
   * {@code create}'s stream ({@link StreamedConcat}); stores override it to join the files
   * where they are, without their bytes passing through Strata, and fall back to it when they
   * cannot.
   *
   * @return the target's status as {@link #getStatus} gives it right after the write: its
   *     length, and the fingerprint {@code create}'s stream would have reported
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

  /** An iterator over a resource that must be released. */
  interface CloseableIterator<T> extends Iterator<T>, Closeable {}
}
