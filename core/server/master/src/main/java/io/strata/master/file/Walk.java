package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.proto.journal.InodeEntry;
import java.util.List;

/**
 * The inodes found along a path, from the root; shorter than the path when it ends early.
 *
 * @param names the path's names
 * @param inodes the root, then one inode per name found
 */
public record Walk(List<String> names, List<InodeEntry> inodes) {
  public boolean complete() {
    return inodes.size() == names.size() + 1;
  }

  /** The deepest inode found. */
  public InodeEntry last() {
    return inodes.get(inodes.size() - 1);
  }

  /** The path of the first {@code depth} names ("/" for 0). */
  public String pathAt(int depth) {
    return depth == 0 ? PathNames.ROOT : "/" + String.join("/", names.subList(0, depth));
  }

  /** Number of names found. */
  public int found() {
    return inodes.size() - 1;
  }

  /** The inode of the folder holding the path's last name found (the root for depth 1). */
  public InodeEntry parentOfLast() {
    return inodes.get(inodes.size() - 2);
  }
}
