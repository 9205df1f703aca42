package io.strata.master.file;

import io.strata.common.conf.ConfigType;
import java.util.Locale;

/**
 * How old the master's view of an under-store path may be before an access checks the store again:
 * {@link #NEVER} (loaded once, then trusted), {@link #ALWAYS} (checked on every access), or a
 * positive number of milliseconds (checked when the last check is older). Immutable.
 */
public final class SyncInterval {
  public static final SyncInterval NEVER = new SyncInterval(-1);
  public static final SyncInterval ALWAYS = new SyncInterval(0);

  private final long millis;

  private SyncInterval(long millis) {
    this.millis = millis;
  }

  /**
   * The interval a call gives on the wire: -1 never, 0 always, N > 0 milliseconds.
   *
   * @throws IllegalArgumentException for any other value
   */
  public static SyncInterval ofMillis(long millis) {
    if (millis == -1) {
      return NEVER;
    }
    if (millis == 0) {
      return ALWAYS;
    }
    if (millis < 0) {
      throw new IllegalArgumentException(
          "Bad sync interval "
              + millis
              + " ms: give -1 (never), 0 (always) or a positive number of milliseconds");
    }
    return new SyncInterval(millis);
  }

  /**
   * Parses {@code never}, {@code always} or a duration such as {@code 30s} or {@code 5min}.
   *
   * @throws IllegalArgumentException naming what was expected
   */
  public static SyncInterval parse(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    if (s.equals("never")) {
      return NEVER;
    }
    if (s.equals("always")) {
      return ALWAYS;
    }
    try {
      return ofMillis(ConfigType.parseDuration(s).toMillis());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "'"
              + text
              + "' is not a sync interval: expected never,"
              + " always or a duration such as 30s or 5min");
    }
  }

  /** -1 for never, 0 for always, otherwise the interval in milliseconds (the wire form). */
  public long millis() {
    return millis;
  }

  /** Whether a path last checked at {@code lastCheckMs} must be checked again at {@code nowMs}. */
  public boolean isDue(long lastCheckMs, long nowMs) {
    if (millis < 0) {
      return false;
    }
    return millis == 0 || nowMs - lastCheckMs > millis;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SyncInterval other && other.millis == millis;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(millis);
  }

  @Override
  public String toString() {
    return millis < 0 ? "never" : millis == 0 ? "always" : millis + "ms";
  }
}
