package io.strata.client.master;

import java.time.Duration;

/**
 * The waiting between attempts of one retried call: sleeps that start at a base and double up to a
 * maximum, within a total budget measured from the first failure. With several masters a call waits
 * only after a round of attempts failed (one per master), since the next master may answer at once.
 * One instance serves one call and is not shared between threads.
 */
public final class Backoff {
  private final long baseNanos;
  private final long maxSleepNanos;
  private final long budgetNanos;
  private long startNanos = -1;
  private long nextSleepNanos;
  private long failures;

  public Backoff(Duration baseSleep, Duration maxSleep, Duration budget) {
    this.baseNanos = Math.max(1, baseSleep.toNanos());
    this.maxSleepNanos = Math.max(baseNanos, maxSleep.toNanos());
    this.budgetNanos = budget.toNanos();
    this.nextSleepNanos = baseNanos;
  }

  /**
   * Counts a failed attempt and waits when it ends a round of {@code attemptsPerRound}: the
   * attempts within a round go to other masters without waiting, so that every master is asked
   * before the call gives up. Returns false, without waiting, when a round ended and the budget is
   * spent.
   */
  public boolean afterFailure(int attemptsPerRound) throws InterruptedException {
    if (startNanos < 0) {
      startNanos = System.nanoTime();
    }
    failures++;
    if (failures % Math.max(1, attemptsPerRound) != 0) {
      return true;
    }
    return sleep();
  }

  /**
   * Waits before the next attempt. Returns false, without waiting, when the budget is spent; the
   * last sleep is shortened so that the total never exceeds the budget by much.
   */
  public boolean sleep() throws InterruptedException {
    long now = System.nanoTime();
    if (startNanos < 0) {
      startNanos = now;
    }
    long left = budgetNanos - (now - startNanos);
    if (left <= 0) {
      return false;
    }
    long sleep = Math.min(nextSleepNanos, left);
    nextSleepNanos = Math.min(maxSleepNanos, nextSleepNanos * 2);
    Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
    return true;
  }
}
