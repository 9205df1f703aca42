package io.strata.common;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The versions a Strata process speaks and writes, besides its release. Two numbers move on their
 * own, each raised by a release that changes what it covers; the list under each says what every
 * version added, so a reader of an old journal or an old caller knows what to expect.
 *
 * <p>Rolling upgrades rest on them: a server serves callers of its own protocol and the one before
 * ({@link #OLDEST_SERVED_PROTOCOL_VERSION}), so processes of two adjacent releases work together in
 * any mix; and masters keep writing the cluster's finalized layout, not {@link #LAYOUT_VERSION},
 * until {@code strata fsadmin upgrade finalize}, so a master can go back to the previous release on
 * the same folders until then (docs/rolling-upgrade.md).
 */
public final class Version {
  /** The release of this build, from the Maven project version. */
  public static final String RELEASE = loadRelease();

  /**
   * The RPC protocol (the gRPC services and their messages, and the headers beside them):
   *
   * <ol>
   *   <li>0.1.0: the control services of the master and the worker; callers send no version.
   *   <li>0.2.0: every call carries the caller's release, protocol and kind ({@code
   *       strata-release}, {@code strata-protocol}, {@code strata-client-kind}), and servers refuse
   *       callers outside their window; GetMasterInfo reports versions, the cluster's layout and
   *       the clients seen; workers report draining in heartbeats; {@code UpgradeMaster}
   *       (finalize).
   * </ol>
   *
   * A caller that sends no version speaks protocol 1.
   */
  public static final int PROTOCOL_VERSION = 2;

  /** The oldest protocol a server of this release serves: the previous release's. */
  public static final int OLDEST_SERVED_PROTOCOL_VERSION = PROTOCOL_VERSION - 1;

  /**
   * The metadata layout (journal entries, snapshot, backup and checkpoint format, the metastore's
   * keys) this release reads and, once the cluster is finalized, writes:
   *
   * <ol>
   *   <li>0.1.0: a Raft log of {@code JournalBatch}es; snapshots and backups as a RocksDB
   *       checkpoint beside a {@code HEADER}; the metastore's column families inodes, edges,
   *       mounts, jobs and meta.
   *   <li>0.2.0: the {@code layout} journal entry (finalize); time-to-live of inodes ({@code
   *       InodeEntry.ttl_ms}, {@code ttl_action}), which a master of layout 1 would drop and so
   *       never act on, indexed by {@code ttl:} keys in the metastore's {@code meta} column family.
   * </ol>
   *
   * See {@link LayoutFeature} for what each version enables.
   */
  public static final int LAYOUT_VERSION = 2;

  /** The layout of a cluster whose masters never recorded one: every 0.1.0 cluster. */
  public static final int FIRST_LAYOUT_VERSION = 1;

  private Version() {}

  private static String loadRelease() {
    try (InputStream in = Version.class.getResourceAsStream("version.properties")) {
      if (in == null) {
        return "unknown";
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("release", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
