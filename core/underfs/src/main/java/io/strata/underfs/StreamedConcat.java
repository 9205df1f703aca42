package io.strata.underfs;

import java.io.IOException;
import java.util.List;

/**
 * A concatenation written by streaming the sources through this process: each source is read with
 * positioned reads of {@link #CHUNK} bytes into {@link UnderFileSystem#create}'s stream, so the
 * target appears only when whole and a failure aborts it. Works on any store, at the cost of moving
 * every byte twice; stores that can join files where they are use it only when they cannot. Never
 * consumes the sources.
 */
public final class StreamedConcat {
  /** Bytes per read: one request on a remote store, and all the heap one concatenation holds. */
  static final int CHUNK = 4 << 20;

  private StreamedConcat() {}

  /** Writes {@code target} as {@link UnderFileSystem#concat} documents it. */
  public static UfsStatus write(
      UnderFileSystem ufs, List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    checkSources(sources, target);
    UfsOutputStream out = ufs.create(target, overwrite, mode);
    try {
      byte[] buffer = new byte[CHUNK];
      for (String source : sources) {
        long position = 0;
        while (true) {
          int n = ufs.read(source, position, buffer, 0, buffer.length);
          if (n <= 0) {
            break;
          }
          out.write(buffer, 0, n);
          position += n;
          if (n < buffer.length) {
            break; // a short read is the end of the file: no request to learn it again
          }
        }
      }
      out.close();
    } catch (IOException | RuntimeException e) {
      try {
        out.abort();
      } catch (IOException | RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    return ufs.getStatus(target);
  }

  /** Refuses an empty list of sources, or a target among them. */
  public static void checkSources(List<String> sources, String target) {
    if (sources.isEmpty()) {
      throw new IllegalArgumentException(
          "Nothing to concatenate into " + target + ": give at least one source file");
    }
    if (sources.contains(target)) {
      throw new IllegalArgumentException("Cannot concatenate " + target + " into itself");
    }
  }
}
