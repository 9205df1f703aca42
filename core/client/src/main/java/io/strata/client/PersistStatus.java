package io.strata.client;

import java.util.Objects;

/**
 * The leading master's persist backlog (files written with ASYNC_THROUGH that are not yet in their
 * under store) and what its persist scheduler did since it took the lead, as {@link
 * FileSystem#persistStatus()} returns them. The counters start again at 0 on each new leader.
 *
 * @param backlogFiles files waiting to be persisted
 * @param backlogBytes the total length of those files
 * @param oldestAgeMs how long the oldest of them has waited, in ms; 0 when none waits
 * @param running persists in progress now
 * @param persistedFiles files this leader persisted since it took over
 * @param failedAttempts persist attempts that failed since then (each is retried)
 * @param lastFailure the message of the latest failure; empty when there was none
 */
public record PersistStatus(
    long backlogFiles,
    long backlogBytes,
    long oldestAgeMs,
    int running,
    long persistedFiles,
    long failedAttempts,
    String lastFailure) {
  public PersistStatus {
    Objects.requireNonNull(lastFailure, "lastFailure");
  }
}
