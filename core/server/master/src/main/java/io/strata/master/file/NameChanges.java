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
 * The journal entries of changes to the names in folders, as POSIX file systems make them:
 * a name removed from a file that has other names (hard links) leaves the file, a folder's
 * modification and change times move when a name in it is added, removed or renamed, and a
 * subtree removed takes with it the names it holds of files that live on elsewhere. Every
 * method runs under the tree's write lock and only builds entries; the caller journals them.
 */
final class NameChanges {
  private final InodeTree tree;
  private final InodeStore store;

  NameChanges(InodeTree tree) {
    this.tree = tree;
    this.store = tree.store();
  }

  /**
   * The entries that remove one name of a file or folder: the inode itself when it is its last
   * name, else the inode without that name (its first name moving to another when the name
   * removed was the first), with its change time moved to {@code nowNs}.
   *
   * @param parentId the folder the name is in
   * @param name the name
   * @return whether the inode goes with the name (its blocks are then to be removed)
   */
  boolean removeName(InodeEntry n, long parentId, String name, long nowNs,
      List<JournalEntry.Builder> entries) {
    if (n.getLinksCount() == 0) {
      entries.add(JournalEntry.newBuilder()
          .setDeleteInode(DeleteInodeEntry.newBuilder().setId(n.getId())));
      return true;
    }
    entries.add(InodeTree.inode(InodeTimes.changed(without(n, parentId, name), nowNs)));
    return false;
  }

  /** The inode with one name fewer (the first name replaced by the first link when it goes). */
  static InodeEntry.Builder without(InodeEntry n, long parentId, String name) {
    InodeEntry.Builder b = n.toBuilder();
    if (n.getParentId() == parentId && n.getName().equals(name)) {
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
  static InodeEntry.Builder moved(InodeEntry n, long fromParent, String fromName, long toParent,
      String toName) {
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
   * The entry that moves a folder's modification and change times to {@code nowNs}, because a
   * name in it was added, removed or renamed; null when the folder is gone.
   */
  JournalEntry.Builder folderChanged(long dirId, long nowNs) {
    InodeEntry dir = store.get(dirId);
    if (dir == null || !dir.getDirectory()) {
      return null;
    }
    return InodeTree.inode(InodeTimes.modified(dir.toBuilder(), nowNs));
  }

  /** Adds {@link #folderChanged} of each folder, once each, to {@code entries}. */
  void foldersChanged(List<JournalEntry.Builder> entries, long nowNs, long... dirIds) {
    Set<Long> done = new HashSet<>();
    for (long id : dirIds) {
      if (done.add(id)) {
        JournalEntry.Builder e = folderChanged(id, nowNs);
        if (e != null) {
          entries.add(e);
        }
      }
    }
  }

  /**
   * Before a subtree is deleted: the entries that take out of the files whose names are partly
   * outside it the names inside it, so that those files live on by their other names, and the
   * ids of such files (their blocks stay). Files whose every name is inside go with the subtree.
   */
  Set<Long> detachSurvivors(InodeEntry top, long nowNs, List<JournalEntry.Builder> entries) {
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
      store.forEachChild(dirId, c -> {
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
          namesInside.computeIfAbsent(child.getId(), k -> new ArrayList<>())
              .add(LinkName.newBuilder().setParentId(dirId).setName(c.name()).build());
        }
      });
    }
    Set<Long> survivors = new HashSet<>();
    for (Map.Entry<Long, List<LinkName>> e : namesInside.entrySet()) {
      InodeEntry n = store.get(e.getKey());
      List<LinkName> outside = new ArrayList<>();
      for (LinkName l : allNames(n)) {
        if (!dirs.contains(l.getParentId())) {
          outside.add(l);
        }
      }
      if (outside.isEmpty()) {
        continue;
      }
      InodeEntry.Builder b = n.toBuilder().setParentId(outside.get(0).getParentId())
          .setName(outside.get(0).getName()).clearLinks()
          .addAllLinks(outside.subList(1, outside.size()));
      entries.add(InodeTree.inode(InodeTimes.changed(b, nowNs)));
      survivors.add(n.getId());
    }
    return survivors;
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
      String dir = tree.pathOf(l.getParentId());
      if (dir != null) {
        out.add(PathNames.join(dir, l.getName()));
      }
    }
    return out;
  }
}
