package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.proto.FileInfo;

/**
 * The inode numbers this mount shows (st_ino). A file created here has a provisional number until
 * its first close commits it to the master, which gives it a number of its own; the mount keeps
 * showing the provisional one for it, so that a number a process saw never changes under it (GNU
 * tar checks that a placeholder it created is the same file, by st_ino, before it replaces it with
 * a symbolic link; git's index records st_ino). Other mounts, and this one after a remount, show
 * the master's number.
 *
 * <p>Bounded: the {@link #MAX_KEPT} most recently committed files keep their provisional numbers;
 * an older one shows the master's again (a program that created millions of files through one mount
 * and still holds the numbers of the first ones sees them change).
 */
final class ShownInodes {
  /** Committed files whose provisional numbers are kept (about 100 bytes each). */
  static final long MAX_KEPT = 1_000_000;

  private final Cache<Long, Long> provisionalOf =
      Caffeine.newBuilder().maximumSize(MAX_KEPT).build();

  /** A file created here and shown as {@code provisional} was committed as {@code master}. */
  void committed(long provisional, long master) {
    if (provisional != master) {
      provisionalOf.put(master, provisional);
    }
  }

  /** The number to show for a file or folder. */
  long of(FileInfo f) {
    long inode = MountWrites.inodeOf(f);
    if (f.getDirectory()) {
      return inode;
    }
    Long shown = provisionalOf.getIfPresent(inode);
    return shown != null ? shown : inode;
  }
}
