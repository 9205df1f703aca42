package io.strata.shell.fs;

import io.strata.proto.FileInfo;
import io.strata.shell.Format;

/**
 * One line of {@code strata fs ls}: mode, owner, group, size, modification time, cached
 * percentage and the full path. Directories end in '/' and have '-' for size and cached; a file
 * still being written is marked so.
 */
final class Listing {
  private Listing() {}

  static String line(FileInfo f, boolean human) {
    boolean dir = f.getDirectory();
    String size = dir ? "-" : Format.size(f.getLength(), human);
    String cached = dir || !f.getComplete() ? "-" : Format.percent(f.getCachedBytes(),
        f.getLength());
    String name = f.getPath();
    if (dir && !name.equals("/")) {
      name += "/";
    }
    if (!dir && !f.getComplete()) {
      name += "  (being written)";
    }
    return String.format("%s  %-8s %-8s %12s  %s  %4s  %s", Format.mode(dir, f.getMode()),
        orDash(f.getOwner()), orDash(f.getGroup()), size,
        Format.time(f.getModificationTimeMs()), cached, name);
  }

  private static String orDash(String s) {
    return s.isEmpty() ? "-" : s;
  }
}
