package io.strata.master.file;

import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.MountInfo;
import io.strata.underfs.UnderStores;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;

/**
 * Which under-store directory each namespace path mirrors. The root mount comes from configuration;
 * the others from the metastore's mount records. A path belongs to the mount with the longest path
 * that is the path itself or one of its ancestors, and its under-store URI is that mount's URI
 * joined with the rest of the path.
 *
 * <p>Reads are lock-free over an immutable snapshot; {@link #reload} swaps in a new one.
 */
public final class MountTable {
  /** Id of the root mount. */
  public static final long ROOT_MOUNT_ID = 1;

  /** The mount a path belongs to and the path's under-store URI. */
  public record Resolution(MountInfo mount, String ufsUri) {}

  private final MountInfo root;
  private volatile TreeMap<String, MountInfo> byPath;

  public MountTable(String rootUfsUri, Collection<MountInfo> mounts) {
    this(rootUfsUri, java.util.Map.of(), mounts);
  }

  /** A table whose root mount has options (credentials, endpoints) from configuration. */
  public MountTable(
      String rootUfsUri, java.util.Map<String, String> rootOptions, Collection<MountInfo> mounts) {
    this.root =
        MountInfo.newBuilder()
            .setMountId(ROOT_MOUNT_ID)
            .setPath(PathNames.ROOT)
            .setUfsUri(rootUfsUri)
            .putAllOptions(rootOptions)
            .build();
    reload(mounts);
  }

  /** Replaces the non-root mounts. */
  public void reload(Collection<MountInfo> mounts) {
    TreeMap<String, MountInfo> next = new TreeMap<>();
    next.put(PathNames.ROOT, root);
    for (MountInfo m : mounts) {
      next.put(m.getPath(), m);
    }
    byPath = next;
  }

  /** Resolves a normalized namespace path through the longest-prefix mount. */
  public Resolution resolve(String path) {
    TreeMap<String, MountInfo> map = byPath;
    for (String p = path; p != null; p = PathNames.parent(p)) {
      MountInfo m = map.get(p);
      if (m != null) {
        String relative =
            p.equals(path) ? "" : path.substring(p.equals(PathNames.ROOT) ? 1 : p.length() + 1);
        return new Resolution(m, UnderStores.join(m.getUfsUri(), relative));
      }
    }
    throw new IllegalStateException("no root mount");
  }

  /** The mount whose mount point is exactly this path, or null. */
  public MountInfo at(String path) {
    return byPath.get(path);
  }

  /** Mount points strictly below a path. */
  public List<String> mountPointsBelow(String path) {
    List<String> below = new ArrayList<>();
    for (String p : byPath.keySet()) {
      if (!p.equals(path) && PathNames.isUnder(p, path)) {
        below.add(p);
      }
    }
    return below;
  }

  /** The mount point of the mount with this id, or null when there is none. */
  public String pathOf(long mountId) {
    for (MountInfo m : byPath.values()) {
      if (m.getMountId() == mountId) {
        return m.getPath();
      }
    }
    return null;
  }

  /** Every mount, the root first, then by path. */
  public List<MountInfo> all() {
    return new ArrayList<>(byPath.values());
  }

  /** Fails with PERMISSION_DENIED when {@code path} is in a read-only mount. */
  public void requireWritable(String path) throws StrataException {
    Resolution r = resolve(path);
    if (r.mount().getReadOnly()) {
      throw new StrataException(
          ErrorCode.PERMISSION_DENIED,
          "Cannot change " + path + ": mount " + r.mount().getPath() + " is read-only");
    }
  }
}
