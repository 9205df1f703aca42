package io.strata.master.file;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.InodeEntry;

/**
 * Decides when a path must be checked against its under store again, and remembers when paths were
 * checked.
 *
 * <p>The interval that applies to a path is, most specific first: the one the call gives, the
 * {@code sync.interval} option of the path's mount, then {@code strata.master.ufs.sync.interval}.
 *
 * <p>A check time is the later of the one journaled in the inode ({@code ufs_sync_time_ms}, written
 * only when the inode changes anyway) and one remembered here in memory for checks that found
 * nothing changed, so that an unchanged namespace never grows the journal. A listing of a directory
 * checks the status of every child it returns, so a child counts as checked when its parent's
 * listing was. The memory is bounded: a time that falls out of it, or is lost by a restart, only
 * makes a path due earlier, never later, so the namespace is never older than the interval allows.
 *
 * <p>Thread-safe.
 */
public final class SyncPolicy {
  private final MountTable mounts;
  private final SyncInterval defaultInterval;

  /** Inode id to the time of its last status check; -id to its directory's last listing. */
  private final Cache<Long, Long> checked;

  private final Counter statusChecks;
  private final Counter listingChecks;
  private final Counter added;
  private final Counter deleted;
  private final Counter replaced;

  public SyncPolicy(
      MountTable mounts, SyncInterval defaultInterval, int maxRemembered, MeterRegistry registry) {
    this.mounts = mounts;
    this.defaultInterval = defaultInterval;
    this.checked = Caffeine.newBuilder().maximumSize(Math.max(1, maxRemembered)).build();
    this.statusChecks = check(registry, "status");
    this.listingChecks = check(registry, "listing");
    this.added = change(registry, "added");
    this.deleted = change(registry, "deleted");
    this.replaced = change(registry, "replaced");
  }

  private static Counter check(MeterRegistry registry, String kind) {
    return Counter.builder(MetricNames.MASTER_UFS_SYNC_CHECKS)
        .tag(MetricNames.TAG_KIND, kind)
        .description("Under-store checks made because a path was due for a sync")
        .register(registry);
  }

  private static Counter change(MeterRegistry registry, String change) {
    return Counter.builder(MetricNames.MASTER_UFS_SYNC_CHANGES)
        .tag(MetricNames.TAG_CHANGE, change)
        .description("Inodes added, deleted or replaced by syncs with under stores")
        .register(registry);
  }

  /** The interval for a path: the call's (null when it gives none), its mount's, the default. */
  public SyncInterval interval(String path, SyncInterval call) {
    if (call != null) {
      return call;
    }
    return interval(mounts.resolve(path).mount());
  }

  /** The interval for the paths of a mount: its {@code sync.interval} option, else the default. */
  public SyncInterval interval(MountInfo mount) {
    SyncInterval own = MountOptionPolicy.syncInterval(mount);
    return own != null ? own : defaultInterval;
  }

  /** When a directory's children were last reconciled with its store; 0 if never. */
  long lastListing(InodeEntry dir) {
    if (!dir.getDirectory() || !dir.getChildrenLoaded()) {
      return 0;
    }
    Long remembered = checked.getIfPresent(-dir.getId());
    return Math.max(dir.getUfsSyncTimeMs(), remembered == null ? 0 : remembered);
  }

  /** When an inode's own status was last checked, directly or by its parent's listing. */
  long lastStatus(InodeEntry n, InodeEntry parent) {
    Long remembered = checked.getIfPresent(n.getId());
    long t =
        Math.max(
            n.getDirectory() ? lastListing(n) : n.getUfsSyncTimeMs(),
            remembered == null ? 0 : remembered);
    return parent == null ? t : Math.max(t, lastListing(parent));
  }

  /** Whether a loaded directory's listing is due for a sync under the call's interval. */
  boolean listingDue(InodeEntry dir, String path, SyncInterval call) {
    return interval(path, call).isDue(lastListing(dir), System.currentTimeMillis());
  }

  /** Whether an inode's status is due for a check under the call's interval. */
  boolean statusDue(InodeEntry n, InodeEntry parent, String path, SyncInterval call) {
    return interval(path, call).isDue(lastStatus(n, parent), System.currentTimeMillis());
  }

  /** Remembers a status check that found nothing to change. */
  void statusChecked(long id, long atMs) {
    checked.asMap().merge(id, atMs, Math::max);
  }

  /** Remembers a listing sync that found nothing to change. */
  void listingChecked(long dirId, long atMs) {
    checked.asMap().merge(-dirId, atMs, Math::max);
  }

  void countStatusCheck() {
    statusChecks.increment();
  }

  void countListingCheck() {
    listingChecks.increment();
  }

  void countAdded(int n) {
    added.increment(n);
  }

  void countDeleted() {
    deleted.increment();
  }

  void countReplaced() {
    replaced.increment();
  }
}
