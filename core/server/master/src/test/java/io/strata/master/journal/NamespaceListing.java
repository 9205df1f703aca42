package io.strata.master.journal;

import io.strata.master.metastore.InodeStore;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.InodeEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A metastore's namespace in the form of the golden files under {@code tests/compat}: one line an
 * entry below the root, tab-separated and sorted (path, {@code file} or {@code directory}, length
 * or {@code -} for a directory, mode in octal, owner, group; {@code -} for no owner or group, as
 * {@code strata fs ls} prints them), extended attributes as {@code path<TAB>name<TAB>value}, and
 * mount points. Read from the store alone: no under store is contacted.
 */
final class NamespaceListing {
  private static final int PAGE = 1000;

  private NamespaceListing() {}

  static List<String> entries(InodeStore store) {
    List<String> lines = new ArrayList<>();
    walk(
        store,
        (path, inode) ->
            lines.add(
                String.join(
                    "\t",
                    path,
                    inode.getDirectory() ? "directory" : "file",
                    inode.getDirectory() ? "-" : Long.toString(inode.getLength()),
                    String.format("0%03o", inode.getMode()),
                    orDash(inode.getOwner()),
                    orDash(inode.getGroup()))));
    lines.sort(null);
    return lines;
  }

  static List<String> xattrs(InodeStore store) {
    List<String> lines = new ArrayList<>();
    walk(
        store,
        (path, inode) -> {
          Map<String, String> sorted = new TreeMap<>();
          inode.getXattrsMap().forEach((name, value) -> sorted.put(name, value.toStringUtf8()));
          sorted.forEach((name, value) -> lines.add(path + "\t" + name + "\t" + value));
        });
    lines.sort(null);
    return lines;
  }

  static List<String> mountPoints(InodeStore store) {
    List<String> paths = new ArrayList<>();
    for (MountInfo m : store.mounts()) {
      paths.add(m.getPath());
    }
    paths.sort(null);
    return paths;
  }

  private interface Visitor {
    void visit(String path, InodeEntry inode);
  }

  /** Every inode below the root, depth first; bounded by the store's inode count. */
  private static void walk(InodeStore store, Visitor visitor) {
    List<Long> dirs = new ArrayList<>(List.of(InodeStore.ROOT_ID));
    List<String> dirPaths = new ArrayList<>(List.of(""));
    long seen = 0;
    while (!dirs.isEmpty()) {
      long dir = dirs.remove(dirs.size() - 1);
      String dirPath = dirPaths.remove(dirPaths.size() - 1);
      String after = "";
      while (true) {
        List<InodeStore.Child> page = store.children(dir, after, PAGE);
        for (InodeStore.Child c : page) {
          InodeEntry inode = store.get(c.id());
          if (inode == null) {
            throw new IllegalStateException(
                "Edge "
                    + dirPath
                    + "/"
                    + c.name()
                    + " names inode "
                    + c.id()
                    + ", which the metastore does not hold");
          }
          if (++seen > store.inodeCount()) {
            throw new IllegalStateException(
                "The tree holds more inodes than the metastore's "
                    + "count of "
                    + store.inodeCount());
          }
          String path = dirPath + "/" + c.name();
          visitor.visit(path, inode);
          if (inode.getDirectory()) {
            dirs.add(c.id());
            dirPaths.add(path);
          }
        }
        if (page.size() < PAGE) {
          break;
        }
        after = page.get(page.size() - 1).name();
      }
    }
  }

  private static String orDash(String s) {
    return s.isEmpty() ? "-" : s;
  }
}
