package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * Where inodes are read from: the applied metastore (what clients read) or that plus the changes in
 * flight (what changes are checked against, {@link PendingChanges}). Walks and paths are worked out
 * the same way on both.
 */
interface InodeSource {
  /** The inode with that id, or null. */
  InodeEntry get(long id);

  /** A folder's child of that name, or null. */
  InodeEntry child(long parentId, String name);

  /** Walks a normalized path as far as it exists; loads nothing. */
  default Walk walk(String path) {
    List<String> names = PathNames.components(path);
    List<InodeEntry> inodes = new ArrayList<>(names.size() + 1);
    InodeEntry cur = get(InodeStore.ROOT_ID);
    inodes.add(cur);
    for (String name : names) {
      if (!cur.getDirectory()) {
        break;
      }
      InodeEntry next = child(cur.getId(), name);
      if (next == null) {
        break;
      }
      inodes.add(next);
      cur = next;
    }
    return new Walk(names, inodes);
  }

  /** The current path of an inode by its first names, or null when it or an ancestor is gone. */
  default String pathOf(long id) {
    List<String> names = new ArrayList<>();
    long cur = id;
    for (int depth = 0; cur != InodeStore.ROOT_ID; depth++) {
      InodeEntry n = get(cur);
      if (n == null || depth > 10_000) {
        return null;
      }
      names.add(n.getName());
      cur = n.getParentId();
    }
    StringBuilder path = new StringBuilder();
    for (int i = names.size() - 1; i >= 0; i--) {
      path.append('/').append(names.get(i));
    }
    return path.length() == 0 ? PathNames.ROOT : path.toString();
  }
}
