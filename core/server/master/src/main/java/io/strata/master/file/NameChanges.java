package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LinkName;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The edits of changes to the names in folders, as POSIX file systems make them: a name removed
 * from a file that has other names (hard links) leaves the file, and a subtree removed takes with
 * it the names it holds of files that live on elsewhere. Only builds edits; the caller stages them.
 * A file with several names may be changed through another name at the same time, so its rewrites
 * are {@link Edit.Update}s, worked out when staged.
 */
final class NameChanges {
  private final InodeStore store;
  private final InodeSource view;

  /**
   * @param store the applied metastore, walked below a folder the caller holds the write lock of
   *     (nothing below it is in flight)
   * @param view the namespace as changes see it, for paths of names
   */
  NameChanges(InodeStore store, InodeSource view) {
    this.store = store;
    this.view = view;
  }

  /**
   * The edit that removes one name of a file or folder: the inode itself when it is its last name,
   * else the inode without that name (its first name moving to another when the name removed was
   * the first), with its change time moved to {@code nowNs}.
   *
   * @param parentId the folder the name is in
   * @param name the name
   * @return whether the inode goes with the name (its blocks are then to be removed)
   */
  boolean removeName(InodeEntry n, long parentId, String name, long nowNs, List<Edit> edits) {
    if (n.getLinksCount() == 0) {
      edits.add(
          Edit.put(
              JournalEntry.newBuilder()
                  .setDeleteInode(DeleteInodeEntry.newBuilder().setId(n.getId()))));
      return true;
    }
    edits.add(
        Edit.update(
            n.getId(),
            now -> now == null ? null : InodeTimes.changed(without(now, parentId, name), nowNs)));
    return false;
  }

  /** The inode with one name fewer (the first name replaced by the first link when it goes). */
  static InodeEntry.Builder without(InodeEntry n, long parentId, String name) {
    InodeEntry.Builder b = n.toBuilder();
    if (n.getParentId() == parentId && n.getName().equals(name)) {
      if (n.getLinksCount() == 0) {
        return b;
      }
      LinkName next = n.getLinks(0);
      b.setParentId(next.getParentId()).setName(next.getName()).removeLinks(0);
      return b;
    }
    for (int i = 0; i < n.getLinksCount(); i++) {
      LinkName l = n.getLinks(i);
      if (l.getParentId() == parentId && l.getName().equals(name)) {
        b.removeLinks(i);
        break;
      }
    }
    return b;
  }

  /** The inode with one of its names ({@code fromParent}/{@code fromName}) moved. */
  static InodeEntry.Builder moved(
      InodeEntry n, long fromParent, String fromName, long toParent, String toName) {
    InodeEntry.Builder b = n.toBuilder();
    if (n.getParentId() == fromParent && n.getName().equals(fromName)) {
      return b.setParentId(toParent).setName(toName);
    }
    for (int i = 0; i < n.getLinksCount(); i++) {
      LinkName l = n.getLinks(i);
      if (l.getParentId() == fromParent && l.getName().equals(fromName)) {
        b.setLinks(i, LinkName.newBuilder().setParentId(toParent).setName(toName));
        break;
      }
    }
    return b;
  }

  /**
   * Before a subtree is deleted: the edits that take out of the files whose names are partly
   * outside it the names inside it, so that those files live on by their other names, and the ids
   * of such files (their blocks stay). Files whose every name is inside go with the subtree.
   */
  Set<Long> detachSurvivors(InodeEntry top, long nowNs, List<Edit> edits) {
    if (!top.getDirectory()) {
      return Set.of();
    }
    Set<Long> dirs = new HashSet<>();
    Map<Long, List<LinkName>> namesInside = new LinkedHashMap<>();
    Deque<Long> pending = new ArrayDeque<>();
    pending.push(top.getId());
    dirs.add(top.getId());
    while (!pending.isEmpty()) {
      long dirId = pending.pop();
      store.forEachChild(
          dirId,
          c -> {
            InodeEntry child = store.get(c.id());
            if (child == null) {
              return;
            }
            boolean first = child.getParentId() == dirId && child.getName().equals(c.name());
            if (child.getDirectory()) {
              if (first && dirs.add(child.getId())) {
                pending.push(child.getId());
              }
            } else if (child.getLinksCount() > 0) {
              namesInside
                  .computeIfAbsent(child.getId(), k -> new ArrayList<>())
                  .add(LinkName.newBuilder().setParentId(dirId).setName(c.name()).build());
            }
          });
    }
    Set<Long> survivors = new HashSet<>();
    for (Long id : namesInside.keySet()) {
      InodeEntry n = view.get(id);
      if (n == null || outside(n, dirs).isEmpty()) {
        continue;
      }
      edits.add(
          Edit.update(
              id,
              now -> {
                List<LinkName> outside = now == null ? List.of() : outside(now, dirs);
                if (outside.isEmpty()) {
                  return null;
                }
                InodeEntry.Builder b =
                    now.toBuilder()
                        .setParentId(outside.get(0).getParentId())
                        .setName(outside.get(0).getName())
                        .clearLinks()
                        .addAllLinks(outside.subList(1, outside.size()));
                return InodeTimes.changed(b, nowNs);
              }));
      survivors.add(id);
    }
    return survivors;
  }

  private static List<LinkName> outside(InodeEntry n, Set<Long> dirs) {
    List<LinkName> outside = new ArrayList<>();
    for (LinkName l : allNames(n)) {
      if (!dirs.contains(l.getParentId())) {
        outside.add(l);
      }
    }
    return outside;
  }

  /** Every name of a file: its first, then its links. */
  static List<LinkName> allNames(InodeEntry n) {
    List<LinkName> out = new ArrayList<>(1 + n.getLinksCount());
    out.add(LinkName.newBuilder().setParentId(n.getParentId()).setName(n.getName()).build());
    out.addAll(n.getLinksList());
    return out;
  }

  /** The namespace paths of every name of a file (names whose folder is gone are left out). */
  List<String> paths(InodeEntry n) {
    List<String> out = new ArrayList<>();
    for (LinkName l : allNames(n)) {
      String dir = view.pathOf(l.getParentId());
      if (dir != null) {
        out.add(PathNames.join(dir, l.getName()));
      }
    }
    return out;
  }
}
