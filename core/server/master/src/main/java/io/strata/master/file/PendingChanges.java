package io.strata.master.file;

import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LinkName;
import io.strata.proto.journal.RenameEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The namespace as changes see it: the applied metastore plus every change handed to the journal
 * and not yet applied. A change is checked against this view, so that it never contradicts one
 * committing ahead of it, and its entries are built from it; once its entries apply, the store says
 * the same and the change's marks here are dropped.
 *
 * <p>What it tracks: each inode a change wrote, replaced, moved or deleted (the latest version
 * staged), and each (folder, name) edge a change added or removed. An inode below a deleted folder
 * is not marked itself: nothing reaches it by a path any more, and changes below a folder cannot be
 * in flight while it is deleted (the delete holds the folder's write lock).
 *
 * <p>Only {@link #stage} (under the staging lock) adds marks; {@link #applied} (on the apply
 * thread) removes those of one change unless a later change marked the same inode or edge again;
 * reads are safe from any thread and see, for each inode and edge, either a change's mark or the
 * store after that change applied.
 */
final class PendingChanges implements InodeSource {
  /** A mark: what the change with {@code stamp} left; {@code inode} null means deleted. */
  private record InodeMark(long stamp, InodeEntry inode) {}

  /** A mark: the id a name leads to after the change with {@code stamp}; -1 means none. */
  private record EdgeMark(long stamp, long id) {}

  private record Edge(long parentId, String name) {}

  /** The keys one change marked, to drop after it applied. */
  record Marks(long stamp, List<Long> inodes, List<Object> edges) {}

  private final InodeStore store;
  private final ConcurrentHashMap<Long, InodeMark> inodes = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<Edge, EdgeMark> edges = new ConcurrentHashMap<>();

  PendingChanges(InodeStore store) {
    this.store = store;
  }

  @Override
  public InodeEntry get(long id) {
    InodeMark m = inodes.get(id);
    if (m != null) {
      return m.inode();
    }
    return store.get(id);
  }

  @Override
  public InodeEntry child(long parentId, String name) {
    EdgeMark m = edges.get(new Edge(parentId, name));
    if (m != null) {
      return m.id() < 0 ? null : get(m.id());
    }
    InodeEntry parent = get(parentId);
    if (parent == null) {
      return null;
    }
    InodeEntry c = store.child(parentId, name);
    if (c == null) {
      return null;
    }
    // The store's edge may lead to an inode a pending change moved or deleted.
    InodeEntry now = get(c.getId());
    return now != null && hasName(now, parentId, name) ? now : null;
  }

  /** Whether a name under a folder is marked by a change in flight (added or removed). */
  boolean marked(long parentId, String name) {
    return edges.containsKey(new Edge(parentId, name));
  }

  /** Whether nothing is in flight. */
  boolean isEmpty() {
    return inodes.isEmpty() && edges.isEmpty();
  }

  /**
   * Marks the entries of one change, in order, as this view's latest state. Called with the staging
   * lock held, so marks go in in journal order.
   */
  Marks stage(long stamp, List<JournalEntry> entries) {
    List<Long> ids = new ArrayList<>();
    List<Object> names = new ArrayList<>();
    for (JournalEntry e : entries) {
      switch (e.getEntryCase()) {
        case INODE -> {
          InodeEntry n = e.getInode();
          InodeEntry old = get(n.getId());
          List<Edge> after = names(n);
          for (Edge old1 : names(old)) {
            if (!after.contains(old1)) {
              markEdge(stamp, old1, -1, names);
            }
          }
          for (Edge a : after) {
            markEdge(stamp, a, n.getId(), names);
          }
          markInode(stamp, n.getId(), n, ids);
        }
        case DELETE_INODE -> {
          long id = e.getDeleteInode().getId();
          InodeEntry top = get(id);
          for (Edge old : names(top)) {
            markEdge(stamp, old, -1, names);
          }
          markInode(stamp, id, null, ids);
        }
        case RENAME -> {
          RenameEntry r = e.getRename();
          InodeEntry old = get(r.getId());
          if (old == null) {
            continue;
          }
          InodeEntry.Builder moved =
              old.toBuilder()
                  .setParentId(r.getNewParentId())
                  .setName(r.getNewName())
                  .setModificationTimeMs(r.getModificationTimeMs());
          if (r.hasChangeTimeNs()) {
            moved.setChangeTimeNs(r.getChangeTimeNs());
          }
          markEdge(stamp, new Edge(old.getParentId(), old.getName()), -1, names);
          markEdge(stamp, new Edge(r.getNewParentId(), r.getNewName()), r.getId(), names);
          markInode(stamp, r.getId(), moved.build(), ids);
        }
        default -> {}
      }
    }
    return new Marks(stamp, ids, names);
  }

  /** Drops one change's marks, keeping those a later change made again. Apply thread. */
  void applied(Marks marks) {
    for (Long id : marks.inodes()) {
      inodes.computeIfPresent(id, (k, m) -> m.stamp() == marks.stamp() ? null : m);
    }
    for (Object o : marks.edges()) {
      edges.computeIfPresent((Edge) o, (k, m) -> m.stamp() == marks.stamp() ? null : m);
    }
  }

  /** Drops every mark: this master stopped leading, so nothing in flight will apply here. */
  void clear() {
    inodes.clear();
    edges.clear();
  }

  private void markInode(long stamp, long id, InodeEntry inode, List<Long> ids) {
    inodes.put(id, new InodeMark(stamp, inode));
    ids.add(id);
  }

  private void markEdge(long stamp, Edge edge, long id, List<Object> names) {
    edges.put(edge, new EdgeMark(stamp, id));
    names.add(edge);
  }

  private static boolean hasName(InodeEntry n, long parentId, String name) {
    if (n.getParentId() == parentId && n.getName().equals(name)) {
      return true;
    }
    for (LinkName l : n.getLinksList()) {
      if (l.getParentId() == parentId && l.getName().equals(name)) {
        return true;
      }
    }
    return false;
  }

  /** Every name of an inode (none for the root or null). */
  private static List<Edge> names(InodeEntry n) {
    if (n == null || n.getId() == InodeStore.ROOT_ID) {
      return List.of();
    }
    List<Edge> out = new ArrayList<>(1 + n.getLinksCount());
    out.add(new Edge(n.getParentId(), n.getName()));
    for (LinkName l : n.getLinksList()) {
      out.add(new Edge(l.getParentId(), l.getName()));
    }
    return out;
  }
}
