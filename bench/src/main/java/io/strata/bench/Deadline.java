package io.strata.bench;

import java.time.Duration;

/**
 * The time limit of one benchmark phase. Past it, {@link #check} stops the phase with a message
 * that names the phase, the limit and the option that raises it, so that a run on a slow or busy
 * machine ends instead of hanging.
 */
final class Deadline {
  private final String phase;
  private final Duration limit;
  private final String hint;
  private final long endNanos;

  private Deadline(String phase, Duration limit, String hint) {
    this.phase = phase;
    this.limit = limit;
    this.hint = hint;
    this.endNanos = System.nanoTime() + limit.toNanos();
  }

  /**
   * @param phase what runs, for the message
   * @param hint what the user can do (an option to raise or a scale to lower)
   */
  static Deadline of(String phase, Duration limit, String hint) {
    return new Deadline(phase, limit, hint);
  }

  boolean passed() {
    return System.nanoTime() > endNanos;
  }

  /** Time left, at least 1 ms. */
  Duration left() {
    return Duration.ofNanos(Math.max(1_000_000, endNanos - System.nanoTime()));
  }

  /** Throws when the limit has passed; {@code doing} says what the phase was waiting for. */
  void check(String doing) {
    if (passed()) {
      throw expired(doing);
    }
  }

  IllegalStateException expired(String doing) {
    return new IllegalStateException(
        phase
            + " did not finish within "
            + limit.toMinutes()
            + " min ("
            + limit.toSeconds()
            + " s) while "
            + doing
            + "; "
            + hint);
  }

  /** Sleeps a poll interval, or throws when the limit passed. */
  void pause(long millis, String doing) throws InterruptedException {
    check(doing);
    Thread.sleep(millis);
  }
}
