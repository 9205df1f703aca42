package io.strata.client;

/**
 * What a writer sets on a file as it completes it, beside its bytes: the content's modification
 * time (null: the time it completes) and the mode, owner, group and access time it changed while
 * writing (null: as the file has them). The master sets them in the same step as the completion (a
 * master of release 0.1.0 ignores them). Immutable.
 *
 * @param modificationTimeNs ns since the epoch, or null
 * @param mode permission bits (07777), or null
 * @param owner user name, or null
 * @param group group name, or null
 * @param accessTimeNs ns since the epoch, or null
 */
public record FileCompletion(
    Long modificationTimeNs, Integer mode, String owner, String group, Long accessTimeNs) {
  /** Nothing beside the bytes: the master stamps the time of completion. */
  public static final FileCompletion NONE = new FileCompletion(null, null, null, null, null);
}
