package io.strata.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How fresh the master's view of a path must be for one call: whether the master checks the under
 * store before it answers. {@link #DEFAULT} leaves it to the path's mount (its {@code
 * sync.interval} option) or the master ({@code strata.master.ufs.sync.interval}); {@link #ALWAYS}
 * checks the store on this call; {@link #NEVER} answers from what the master already knows (loading
 * only what it never saw); {@link #every} checks when the last check is older than the interval.
 * Immutable.
 */
public final class SyncOption {
  public static final SyncOption DEFAULT = new SyncOption(false, 0);
  public static final SyncOption ALWAYS = new SyncOption(true, 0);
  public static final SyncOption NEVER = new SyncOption(true, -1);

  private final boolean given;
  private final long intervalMs;

  private SyncOption(boolean given, long intervalMs) {
    this.given = given;
    this.intervalMs = intervalMs;
  }

  /**
   * Checks the store when the master's last check of a path is older than {@code interval}.
   *
   * @throws IllegalArgumentException unless the interval is at least a millisecond
   */
  public static SyncOption every(Duration interval) {
    Objects.requireNonNull(interval);
    if (interval.toMillis() < 1) {
      throw new IllegalArgumentException(
          "A sync interval must be at least 1ms, got "
              + interval
              + " (use SyncOption.ALWAYS to check on every call)");
    }
    return new SyncOption(true, interval.toMillis());
  }

  /** Whether the call gives an interval of its own (false for {@link #DEFAULT}). */
  public boolean given() {
    return given;
  }

  /** The interval as the master takes it: -1 never, 0 always, N > 0 milliseconds. */
  public long intervalMs() {
    return intervalMs;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SyncOption other && other.given == given && other.intervalMs == intervalMs;
  }

  @Override
  public int hashCode() {
    return Boolean.hashCode(given) * 31 + Long.hashCode(intervalMs);
  }

  @Override
  public String toString() {
    return !given
        ? "default"
        : intervalMs < 0 ? "never" : intervalMs == 0 ? "always" : "every " + intervalMs + "ms";
  }
}
