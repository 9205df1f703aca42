package io.strata.fuse;

import io.strata.client.FileOutStream;
import java.io.IOException;
import jnr.ffi.Pointer;
import ru.serce.jnrfuse.ErrorCodes;

/**
 * One handle writing a file of the mount, front to back. Strata files are written once, in
 * order, so a write must start where the previous one ended; anything else (a seek back, or a
 * hole) answers EOPNOTSUPP and leaves what was written intact.
 *
 * <p>A handle opened for writing on a file that has bytes, without {@code O_TRUNC}, starts
 * <em>pending</em>: nothing is changed until the handle truncates the file to 0 (as
 * {@code truncate -s 0} and {@code open(..., "r+")} followed by {@code ftruncate} do), after
 * which it writes the file anew; a write into the existing bytes or after them (an append)
 * answers EOPNOTSUPP and the file stays as it was.
 *
 * <p>The file becomes visible with its bytes when {@link #close} completes it at the master; a
 * write after that answers EBADF. Calls are serialised per handle: the kernel may deliver the
 * pieces of one large write on several threads, and the stream beneath is not thread-safe.
 * Handles of different files (and all readers) never wait for each other.
 */
final class WriteHandle {
  /** Starts writing the file anew (overwriting what it had). */
  @FunctionalInterface
  interface Opener {
    FileOutStream open() throws IOException;
  }

  private final String path;
  private final Opener opener;
  private final long existingLength;
  private FileOutStream out;
  private boolean closed;

  /** A handle writing a new (or just emptied) file through {@code out}. */
  static WriteHandle writing(String path, FileOutStream out) {
    WriteHandle h = new WriteHandle(path, null, 0);
    h.out = out;
    return h;
  }

  /** A pending handle on a file of {@code existingLength} bytes; {@code opener} empties it. */
  static WriteHandle pending(String path, long existingLength, Opener opener) {
    return new WriteHandle(path, opener, existingLength);
  }

  private WriteHandle(String path, Opener opener, long existingLength) {
    this.path = path;
    this.opener = opener;
    this.existingLength = existingLength;
  }

  /** The namespace path written. */
  String path() {
    return path;
  }

  /** The file's size as this handle sees it: what was written, or the existing bytes. */
  synchronized long length() {
    return out != null ? out.bytesWritten() : existingLength;
  }

  /** Whether bytes were written through this handle (so closing it completes a new version). */
  synchronized boolean wrote() {
    return out != null && out.bytesWritten() > 0;
  }

  /**
   * Writes {@code size} bytes from {@code buf} at {@code offset}.
   *
   * @return the bytes written, or a negative errno
   */
  synchronized int write(Pointer buf, long size, long offset) throws IOException {
    if (closed) {
      return -ErrorCodes.EBADF();
    }
    if (out == null) {
      if (existingLength > 0) {
        FuseErrors.logUnsupported("write at offset " + offset + " into the existing "
            + existingLength + " bytes (truncate the file to 0 first, or write a new file)",
            path);
        return -ErrorCodes.EOPNOTSUPP();
      }
      out = opener.open();
    }
    long at = out.bytesWritten();
    if (offset != at) {
      FuseErrors.logUnsupported("write at offset " + offset + " (the file has " + at
          + " bytes; Strata files are written front to back)", path);
      return -ErrorCodes.EOPNOTSUPP();
    }
    int n = (int) size;
    byte[] bytes = new byte[n];
    buf.get(0, bytes, 0, n);
    out.write(bytes, 0, n);
    return n;
  }

  /**
   * Truncates through this handle: to 0 starts the file anew (unless nothing was written yet),
   * to its present size does nothing, anything else answers EOPNOTSUPP.
   */
  synchronized int truncate(long size) throws IOException {
    if (closed) {
      return -ErrorCodes.EBADF();
    }
    if (size == length()) {
      return 0;
    }
    if (size != 0 || out != null) {
      FuseErrors.logUnsupported("truncate to " + size + " bytes (the file has " + length()
          + "; only truncation to 0 is supported)", path);
      return -ErrorCodes.EOPNOTSUPP();
    }
    out = opener.open();
    return 0;
  }

  /** Pushes buffered bytes to the worker (fsync); the file completes only at close. */
  synchronized void flush() throws IOException {
    if (!closed && out != null) {
      out.flush();
    }
  }

  /** Completes the file (a pending handle changes nothing); a second call does nothing. */
  synchronized void close() throws IOException {
    if (!closed) {
      closed = true;
      if (out != null) {
        out.close();
      }
    }
  }
}
