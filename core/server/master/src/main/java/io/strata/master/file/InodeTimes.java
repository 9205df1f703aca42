package io.strata.master.file;

import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.InodeEntryOrBuilder;
import java.time.Instant;

/**
 * The times of an inode as POSIX names them: modification (of the content, or of a directory's
 * entries), change (of anything about the inode: attributes, names, content) and access. An inode
 * keeps its modification time in milliseconds (every release does) and, since metadata layout 2, in
 * nanoseconds beside it, with change and access times in nanoseconds. A time written by an older
 * release, or an inode loaded from a store that keeps only milliseconds, has no nanoseconds: the
 * nanosecond time counts only while it agrees with the milliseconds, so a change of the
 * milliseconds alone (by a master of the previous release) is never hidden by a stale nanosecond
 * value. Missing change and access times read as the modification time. Stateless.
 */
final class InodeTimes {
  private static final long NANOS_PER_MS = 1_000_000L;

  private InodeTimes() {}

  /** Now, in nanoseconds since the epoch (as precise as the system clock gives). */
  static long nowNs() {
    Instant now = Instant.now();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** The modification time in nanoseconds. */
  static long modificationNs(InodeEntryOrBuilder n) {
    long ms = n.getModificationTimeMs();
    if (n.hasModificationTimeNs()) {
      long ns = n.getModificationTimeNs();
      if (Math.floorDiv(ns, NANOS_PER_MS) == ms) {
        return ns;
      }
    }
    return ms * NANOS_PER_MS;
  }

  /** The change time in nanoseconds (the modification time when none was kept). */
  static long changeNs(InodeEntryOrBuilder n) {
    return n.hasChangeTimeNs() ? n.getChangeTimeNs() : modificationNs(n);
  }

  /** The access time in nanoseconds (the modification time when none was kept). */
  static long accessNs(InodeEntryOrBuilder n) {
    return n.hasAccessTimeNs() ? n.getAccessTimeNs() : modificationNs(n);
  }

  /**
   * Sets the modification time (both forms) to {@code ns}. An inode that kept no access time (one
   * loaded from a store) keeps the one it showed, its old modification time, rather than have it
   * follow the new one.
   */
  static InodeEntry.Builder setModification(InodeEntry.Builder b, long ns) {
    if (!b.hasAccessTimeNs()) {
      b.setAccessTimeNs(modificationNs(b));
    }
    return b.setModificationTimeMs(Math.floorDiv(ns, NANOS_PER_MS)).setModificationTimeNs(ns);
  }

  /** The content (or a directory's entries) changed at {@code ns}: modification and change time. */
  static InodeEntry.Builder modified(InodeEntry.Builder b, long ns) {
    return setModification(b, ns).setChangeTimeNs(ns);
  }

  /** Something about the inode other than its content changed at {@code ns}: its change time. */
  static InodeEntry.Builder changed(InodeEntry.Builder b, long ns) {
    return b.setChangeTimeNs(ns);
  }

  /** A new inode made at {@code ns}: every time is {@code ns}. */
  static InodeEntry.Builder created(InodeEntry.Builder b, long ns) {
    return modified(b, ns).setAccessTimeNs(ns);
  }
}
