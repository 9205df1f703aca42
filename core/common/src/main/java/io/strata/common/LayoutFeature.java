package io.strata.common;

/**
 * What each metadata layout version enables (see {@link Version#LAYOUT_VERSION}). A feature whose
 * records a master of an older layout would misread or drop is refused until the cluster is
 * finalized at its version, so that every master can still go back to the previous release until
 * then.
 */
public enum LayoutFeature {
  INITIAL(1, "the layout of release 0.1.0"),
  TTL(2, "time-to-live of files and directories (`strata fs setTtl`)"),
  POSIX_FILES(
      2,
      "symbolic links, hard links, FIFOs, sockets and device nodes, and new versions"
          + " of a file written in place (writes into existing files through the FUSE mount)"),
  GROUP_COMMIT(
      2,
      "journal entries that carry the changes of several calls at once (group"
          + " commit: concurrent changes share one replicated journal write)"),
  CACHE_ONLY_FILES(
      2,
      "files held in workers' caches until persisted (write types"
          + " ASYNC_THROUGH and MUST_CACHE); a master of the previous release would free their"
          + " only copy");

  private final int version;
  private final String description;

  LayoutFeature(int version, String description) {
    this.version = version;
    this.description = description;
  }

  /** The layout version that introduced the feature. */
  public int version() {
    return version;
  }

  /** What the feature is, for messages and {@code strata fsadmin upgrade status}. */
  public String description() {
    return description;
  }
}
