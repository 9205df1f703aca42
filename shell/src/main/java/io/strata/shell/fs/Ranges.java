package io.strata.shell.fs;

import io.strata.client.FileInStream;
import java.io.IOException;
import java.io.OutputStream;

/** Copies a byte range of a file to an output with positioned reads (no read-ahead). */
final class Ranges {
  private Ranges() {}

  static void copy(FileInStream in, long start, long length, OutputStream out) throws IOException {
    byte[] buf = new byte[(int) Math.min(1 << 20, Math.max(1, length))];
    long pos = start;
    long end = start + length;
    while (pos < end) {
      int n = (int) Math.min(buf.length, end - pos);
      in.readFully(pos, buf, 0, n);
      out.write(buf, 0, n);
      pos += n;
    }
    out.flush();
  }
}
