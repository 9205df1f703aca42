package io.strata.fuse;

import io.strata.common.PathNames;
import io.strata.proto.FileInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Files this mount created that the master does not know yet: a new file is committed to the master
 * in one call when it is first closed or synced (see {@link MountWrites#create}), and until then it
 * exists only here. Lookups ({@link MetadataCache#get}) and listings of the mount see it first, so
 * every process of the mount sees a created file at once, as on a local disk. Entries go when the
 * file is committed, unlinked, or its copy released.
 */
final class PendingCreates {
  private final Map<String, FileInfo> byPath = new ConcurrentHashMap<>();

  /** Records {@code info} (a provisional status) as the file at {@code path}. */
  void add(String path, FileInfo info) {
    byPath.put(path, info);
  }

  /** The pending file at {@code path}, or null. */
  FileInfo get(String path) {
    return byPath.isEmpty() ? null : byPath.get(path);
  }

  /** Forgets the pending file at {@code path} when it is still {@code info}'s file. */
  void remove(String path, long inode) {
    byPath.computeIfPresent(path, (p, f) -> MountWrites.inodeOf(f) == inode ? null : f);
  }

  /** The pending files directly in folder {@code dir}. */
  List<FileInfo> in(String dir) {
    List<FileInfo> out = new ArrayList<>();
    if (byPath.isEmpty()) {
      return out;
    }
    for (Map.Entry<String, FileInfo> e : byPath.entrySet()) {
      if (dir.equals(PathNames.parent(e.getKey()))) {
        out.add(e.getValue());
      }
    }
    return out;
  }

  /** Whether any pending file is below folder {@code dir}. */
  boolean anyBelow(String dir) {
    if (byPath.isEmpty()) {
      return false;
    }
    String prefix = dir.equals(PathNames.ROOT) ? dir : dir + "/";
    for (String p : byPath.keySet()) {
      if (p.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  boolean isEmpty() {
    return byPath.isEmpty();
  }
}
