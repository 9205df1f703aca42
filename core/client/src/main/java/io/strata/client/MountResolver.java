package io.strata.client;

import io.strata.client.master.MasterClient;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.MountInfo;
import io.strata.underfs.UnderStores;
import java.util.List;

/**
 * Where a new file's content goes in its under store, as the master would place it: the mount with
 * the longest mount point at or above the path, and the path below that mount's store folder. A
 * writer that commits a new file in one master call ({@link FileOutStream}) has a worker write
 * there first; the master checks the same resolution when it commits, so a mount table cached here
 * for a while costs at worst one refused commit after a mount or unmount.
 *
 * <p>The table is asked of the master at first use and again after {@link #REFRESH_NANOS}, or at
 * once after {@link #forget()} (a commit refused because the mounts changed).
 */
final class MountResolver {
  /** How long a listed mount table is used before it is asked for again. */
  static final long REFRESH_NANOS = 30_000_000_000L;

  /** The mount that holds a path, and the path's location in its store. */
  record Placement(MountInfo mount, String ufsPath) {}

  private final MasterClient master;
  private volatile List<MountInfo> mounts;
  private volatile long listedAt;

  MountResolver(MasterClient master) {
    this.master = master;
  }

  /**
   * Where {@code path} (normalized) goes; FAILED_PRECONDITION in a read-only mount, as the master
   * would refuse it.
   */
  Placement place(String path) throws StrataException {
    List<MountInfo> table = mounts;
    if (table == null || System.nanoTime() - listedAt > REFRESH_NANOS) {
      table =
          master.call(s -> s.listMounts(ListMountsRequest.getDefaultInstance())).getMountsList();
      mounts = table;
      listedAt = System.nanoTime();
    }
    MountInfo best = null;
    for (MountInfo m : table) {
      if (PathNames.isUnder(path, m.getPath())
          && (best == null || m.getPath().length() > best.getPath().length())) {
        best = m;
      }
    }
    if (best == null) {
      throw new StrataException(
          ErrorCode.INTERNAL, "No mount holds " + path + ": the master listed no mount at /");
    }
    if (best.getReadOnly()) {
      throw StrataException.failedPrecondition(
          "Cannot write " + path + ": the mount at " + best.getPath() + " is read-only");
    }
    String point = best.getPath();
    String relative =
        path.equals(point)
            ? ""
            : path.substring(point.equals(PathNames.ROOT) ? 1 : point.length() + 1);
    return new Placement(best, UnderStores.join(best.getUfsUri(), relative));
  }

  /** Drops the cached table: the next placement asks the master again. */
  void forget() {
    mounts = null;
  }
}
