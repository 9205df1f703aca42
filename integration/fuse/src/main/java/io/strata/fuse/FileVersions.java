package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.proto.FileInfo;

/**
 * What each file looked like (file id, length, modification time) when it was last opened on this
 * mount, to decide whether the kernel may keep the pages it cached of it.
 *
 * <p>Guarantees: {@link #openedUnchanged} answers true only when the path was opened before and all
 * three values are the same now; a path it no longer remembers (bounded by {@code maxEntries})
 * counts as changed, which only costs a re-read. Safe for concurrent use.
 */
final class FileVersions {
  private record Version(long fileId, long length, long modificationTimeMs) {
    static Version of(FileInfo info) {
      return new Version(info.getFileId(), info.getLength(), info.getModificationTimeMs());
    }
  }

  private final Cache<String, Version> lastOpened;

  FileVersions(long maxEntries) {
    this.lastOpened = Caffeine.newBuilder().maximumSize(Math.max(1, maxEntries)).build();
  }

  /** Records this open of {@code path}; true when the file is as it was at the previous one. */
  boolean openedUnchanged(String path, FileInfo info) {
    Version now = Version.of(info);
    Version before = lastOpened.asMap().put(path, now);
    return now.equals(before);
  }
}
