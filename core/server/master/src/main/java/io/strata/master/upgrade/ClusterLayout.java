package io.strata.master.upgrade;

import io.strata.common.LayoutFeature;
import io.strata.common.Version;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LayoutEntry;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster's metadata layout, as the journal finalized it: what features may be used now, and
 * what a finalize would enable. A master of this release writes only what the cluster's layout
 * allows, so that until {@code strata fsadmin upgrade finalize} every master can go back to the
 * previous release on the same folders.
 */
public final class ClusterLayout {
  private ClusterLayout() {}

  /** The journal entry that switches the cluster to {@code layoutVersion}. */
  public static JournalEntry.Builder finalizeEntry(int layoutVersion) {
    return JournalEntry.newBuilder()
        .setLayout(
            LayoutEntry.newBuilder()
                .setLayoutVersion(layoutVersion)
                .setRelease(Version.RELEASE)
                .setTimeMs(System.currentTimeMillis()));
  }

  /**
   * Fails with FAILED_PRECONDITION, saying what to do, unless the cluster's layout has the feature.
   */
  public static void require(InodeStore store, LayoutFeature feature) throws StrataException {
    int layout = store.layoutVersion();
    if (layout >= feature.version()) {
      return;
    }
    throw new StrataException(
        ErrorCode.FAILED_PRECONDITION,
        "This cluster's metadata layout is "
            + layout
            + ", and "
            + feature.description()
            + " needs layout "
            + feature.version()
            + ". Once every master runs release "
            + Version.RELEASE
            + " or newer, run "
            + "`strata fsadmin upgrade finalize` (after it, going back to an older release means "
            + "restoring the backup of `strata fsadmin upgrade prepare`); "
            + "`strata fsadmin upgrade status` shows where the cluster stands.");
  }

  /** The features a layout of {@code from} lacks and one of {@code to} has. */
  public static List<LayoutFeature> featuresBetween(int from, int to) {
    List<LayoutFeature> features = new ArrayList<>();
    for (LayoutFeature f : LayoutFeature.values()) {
      if (f.version() > from && f.version() <= to) {
        features.add(f);
      }
    }
    return features;
  }
}
