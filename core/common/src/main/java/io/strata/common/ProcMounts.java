package io.strata.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The kernel's list of mounts, {@code /proc/mounts}, as far as FUSE mounts go. A mount whose
 * process died stays listed (its folder then answers "Transport endpoint is not connected") until
 * someone unmounts it, so being listed says nothing about the process. Shared by the FUSE mount and
 * the command line that manages mounts.
 */
public final class ProcMounts {
  private static final Path PROC_MOUNTS = Path.of("/proc/mounts");

  private ProcMounts() {}

  /** Whether a FUSE file system is mounted at {@code point} (an absolute, normalised path). */
  public static boolean isFuseMounted(Path point) {
    List<String> lines;
    try {
      lines = Files.readAllLines(PROC_MOUNTS);
    } catch (IOException e) {
      return false;
    }
    String target = point.toString();
    for (String line : lines) {
      String[] fields = line.split(" ");
      if (fields.length >= 3
          && fields[2].startsWith("fuse")
          && unescape(fields[1]).equals(target)) {
        return true;
      }
    }
    return false;
  }

  /** /proc/mounts writes space, tab, newline and backslash as three octal digits after '\'. */
  public static String unescape(String field) {
    StringBuilder out = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && isOctal(field, i + 1)) {
        out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static boolean isOctal(String s, int from) {
    if (from + 3 > s.length()) {
      return false;
    }
    for (int i = from; i < from + 3; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '7') {
        return false;
      }
    }
    return true;
  }
}
