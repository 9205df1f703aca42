package io.strata.shell.fs;

import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.PersistenceState;
import io.strata.shell.Format;

/**
 * One line of {@code strata fs ls}: mode, owner, group, size, modification time, cached percentage
 * and the full path. Directories end in '/' and have '-' for size and cached; a file still being
 * written is marked so; a symbolic link shows its target ({@code -> target}), a device its number,
 * and what only the namespace holds (its store cannot) is marked so.
 */
final class Listing {
  private Listing() {}

  static String line(FileInfo f, boolean human) {
    boolean dir = f.getDirectory();
    boolean plain = f.getFileType() == FileType.FILE_TYPE_PLAIN;
    boolean device =
        f.getFileType() == FileType.FILE_TYPE_CHAR_DEVICE
            || f.getFileType() == FileType.FILE_TYPE_BLOCK_DEVICE;
    String size =
        device ? Devices.text(f.getRdev()) : dir ? "-" : Format.size(f.getLength(), human);
    String cached =
        dir || !plain || !f.getComplete() ? "-" : Format.percent(f.getCachedBytes(), f.getLength());
    String name = f.getPath();
    if (dir && !name.equals("/")) {
      name += "/";
    }
    if (!dir && !f.getComplete()) {
      name += "  (being written)";
    }
    if (f.getFileType() == FileType.FILE_TYPE_SYMLINK) {
      name += " -> " + f.getSymlinkTarget();
    }
    if (f.getPersistenceState() == PersistenceState.PERSISTENCE_TO_BE_PERSISTED) {
      name += "  (TO_BE_PERSISTED)";
    } else if (f.getPersistenceState() == PersistenceState.PERSISTENCE_NOT_PERSISTED) {
      name += "  (NOT_PERSISTED)";
    } else if (f.getNamespaceOnly()) {
      name += "  (in Strata only)";
    }
    return String.format(
        "%s  %-8s %-8s %12s  %s  %4s  %s",
        Format.mode(f),
        orDash(f.getOwner()),
        orDash(f.getGroup()),
        size,
        Format.time(f.getModificationTimeMs()),
        cached,
        name);
  }

  /**
   * A file's persistence state as Alluxio names it, with what it means: PERSISTED (in its under
   * store), TO_BE_PERSISTED (ASYNC_THROUGH, in the cache until the master persists it) or
   * NOT_PERSISTED (MUST_CACHE, in the cache only).
   */
  static String persistence(FileInfo f) {
    return switch (f.getPersistenceState()) {
      case PERSISTENCE_TO_BE_PERSISTED ->
          "TO_BE_PERSISTED (in a worker's cache; the master"
              + " writes it to the under store soon)";
      case PERSISTENCE_NOT_PERSISTED ->
          "NOT_PERSISTED (in a worker's cache only;"
              + " `strata fs persist` writes it to the under store)";
      default -> f.getNamespaceOnly() ? "no (the under store cannot hold it)" : "PERSISTED";
    };
  }

  private static String orDash(String s) {
    return s.isEmpty() ? "-" : s;
  }
}
