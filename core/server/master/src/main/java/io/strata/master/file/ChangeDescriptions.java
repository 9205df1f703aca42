package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.NamespaceChange;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LinkName;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a change's entries change in the namespace as clients see it, named before they apply (a
 * removed or renamed inode has no path after), and published to the {@link ChangeFeed} with their
 * journal sequences once they applied.
 */
final class ChangeDescriptions {
  /** A path that entry number {@code entry} of a change changes, as watchers are told. */
  record PathChange(int entry, String path, boolean subtree) {}

  private final InodeSource view;
  private final InodeStore store;
  private final MountTable mounts;

  /**
   * @param view the namespace before the change (applied plus the changes ahead of it)
   * @param store the metastore, for what the view does not track (whether a folder has children)
   */
  ChangeDescriptions(InodeSource view, InodeStore store, MountTable mounts) {
    this.view = view;
    this.store = store;
    this.mounts = mounts;
  }

  /**
   * The paths each entry changes. An inode rewritten with only what clients do not see (its
   * children loaded, its last sync time) changes nothing, and neither does a new inode that a load
   * found in a folder whose children were never loaded ({@code discovered}): nobody can hold a
   * listing of such a folder. Entries of one change may name inodes an earlier entry of it creates
   * (a directory and its parents), so the paths of new directories are remembered on the way.
   */
  List<PathChange> describe(List<JournalEntry> entries, boolean discovered) {
    List<PathChange> out = new ArrayList<>();
    Map<Long, String> paths = new HashMap<>();
    for (int i = 0; i < entries.size(); i++) {
      JournalEntry e = entries.get(i);
      switch (e.getEntryCase()) {
        case INODE -> {
          InodeEntry n = e.getInode();
          InodeEntry before = view.get(n.getId());
          if ((before != null && sameView(before, n))
              || (discovered && before == null && inUnloadedDirectory(n))) {
            continue;
          }
          if (n.getId() == InodeStore.ROOT_ID) {
            out.add(new PathChange(i, PathNames.ROOT, false));
            continue;
          }
          String path = childPath(n.getParentId(), n.getName(), paths);
          if (path != null && n.getDirectory()) {
            paths.put(n.getId(), path);
          }
          // Every name a file has before or after the change shows it: its hard links share
          // the inode, and a name added or removed changes its folder's listing.
          for (String name : namePaths(before, n, paths)) {
            out.add(new PathChange(i, name, false));
          }
        }
        case DELETE_INODE -> {
          long id = e.getDeleteInode().getId();
          InodeEntry n = view.get(id);
          String path = n == null ? null : pathOf(id, paths);
          if (path != null) {
            out.add(new PathChange(i, path, n.getDirectory() && store.hasChildren(id)));
          }
        }
        case RENAME -> {
          long id = e.getRename().getId();
          InodeEntry n = view.get(id);
          String from = n == null ? null : pathOf(id, paths);
          String to = childPath(e.getRename().getNewParentId(), e.getRename().getNewName(), paths);
          if (from != null) {
            out.add(new PathChange(i, from, n.getDirectory()));
          }
          if (to != null) {
            out.add(new PathChange(i, to, n != null && n.getDirectory()));
          }
        }
        case ADD_MOUNT -> out.add(new PathChange(i, e.getAddMount().getMount().getPath(), true));
        case DELETE_MOUNT -> {
          String path = mounts.pathOf(e.getDeleteMount().getMountId());
          if (path != null) {
            out.add(new PathChange(i, path, true));
          }
        }
        default -> {}
      }
    }
    return out;
  }

  /** The notices of described changes, with the sequences their entries applied at. */
  static List<NamespaceChange> notices(
      List<PathChange> described, List<JournalEntry> applied, String clientId) {
    List<NamespaceChange> out = new ArrayList<>(described.size());
    for (PathChange c : described) {
      out.add(
          NamespaceChange.newBuilder()
              .setPath(c.path())
              .setSubtree(c.subtree())
              .setSequence(applied.get(c.entry()).getSequence())
              .setClientId(clientId)
              .build());
    }
    return out;
  }

  /** Whether an inode's directory never had its children loaded. */
  private boolean inUnloadedDirectory(InodeEntry n) {
    InodeEntry parent = view.get(n.getParentId());
    return parent != null && parent.getDirectory() && !parent.getChildrenLoaded();
  }

  /**
   * Whether two versions of an inode look the same to clients: they differ at most in what clients
   * never see (a directory's children loaded, a sync time, a version being written).
   */
  private static boolean sameView(InodeEntry a, InodeEntry b) {
    return hidden(a).equals(hidden(b));
  }

  private static InodeEntry hidden(InodeEntry n) {
    return n.toBuilder().clearChildrenLoaded().clearUfsSyncTimeMs().clearWritingDataId().build();
  }

  /** The paths of every name of an inode before ({@code before}, null: new) and after. */
  private List<String> namePaths(InodeEntry before, InodeEntry after, Map<Long, String> paths) {
    List<String> out = new ArrayList<>(2);
    for (InodeEntry n : before == null ? List.of(after) : List.of(before, after)) {
      addPath(out, childPath(n.getParentId(), n.getName(), paths));
      for (LinkName l : n.getLinksList()) {
        addPath(out, childPath(l.getParentId(), l.getName(), paths));
      }
    }
    return out;
  }

  private static void addPath(List<String> out, String path) {
    if (path != null && !out.contains(path)) {
      out.add(path);
    }
  }

  private String childPath(long parentId, String name, Map<Long, String> paths) {
    String parent = pathOf(parentId, paths);
    return parent == null ? null : PathNames.join(parent, name);
  }

  /** The view's path of an inode, remembering directories' paths for the rest of a change. */
  private String pathOf(long id, Map<Long, String> paths) {
    String known = paths.get(id);
    if (known == null) {
      known = view.pathOf(id);
      if (known != null) {
        paths.put(id, known);
      }
    }
    return known;
  }
}
