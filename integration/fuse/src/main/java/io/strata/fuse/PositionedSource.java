package io.strata.fuse;

import io.strata.client.FileInStream;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a {@link CachedFileReader} fetches the bytes of one file: positioned reads of a file of
 * fixed length. The page cache and read-ahead depend only on this, so they are tested without a
 * cluster.
 *
 * <p>Contract: {@link #read} is safe to call from many threads at once and keeps no position; it
 * returns the number of bytes read, fewer than asked only at the end of the file, and -1 when
 * {@code position} is at or past the end.
 */
public interface PositionedSource extends Closeable {
  /** Reads up to {@code len} bytes at {@code position} into {@code b} from {@code off}. */
  int read(long position, byte[] b, int off, int len) throws IOException;

  /**
   * Whether a read at {@code position} is served from memory on this machine already (a worker's
   * block file mapped for short-circuit reads), so that caching it again would only add copies. The
   * default says no.
   */
  default boolean readsLocally(long position) {
    return false;
  }

  /**
   * Reads {@code dst.remaining()} bytes at {@code position} when the source serves all of them from
   * memory on this machine ({@link #readsLocally}), straight into {@code dst}; returns the number
   * read, or -1 with nothing read when it cannot. The default cannot.
   */
  default int readLocally(long position, ByteBuffer dst) throws IOException {
    return -1;
  }

  /** Length of the file in bytes; never changes. */
  long length();

  /** Releases what the source holds; the default holds nothing. */
  @Override
  default void close() throws IOException {}

  /** The positioned, lock-free reads of a client stream; closing the source closes the stream. */
  static PositionedSource of(FileInStream in) {
    return new PositionedSource() {
      @Override
      public int read(long position, byte[] b, int off, int len) throws IOException {
        return in.read(position, b, off, len);
      }

      @Override
      public boolean readsLocally(long position) {
        return in.readsLocally(position);
      }

      @Override
      public int readLocally(long position, ByteBuffer dst) throws IOException {
        return in.readLocally(position, dst);
      }

      @Override
      public long length() {
        return in.length();
      }

      @Override
      public void close() {
        in.close();
      }
    };
  }
}
