package io.strata.client;

import java.util.Objects;

/**
 * What the leading master says about itself, as {@link FileSystem#masterInfo()} returns it: its
 * release, when it started, how far its journal goes and how many inodes its namespace holds.
 *
 * @param release the master's release
 * @param startTimeMs when the master process started, in ms since the epoch; 0 when it did not say
 * @param journalSequence the sequence of the last journal entry the master applied
 * @param lastCheckpointSequence the journal sequence its latest checkpoint covers; 0 before the
 *     first checkpoint
 * @param inodeCount the inodes (files and directories) in its namespace
 */
public record MasterInfo(
    String release,
    long startTimeMs,
    long journalSequence,
    long lastCheckpointSequence,
    long inodeCount) {
  public MasterInfo {
    Objects.requireNonNull(release, "release");
  }
}
