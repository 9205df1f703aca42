package io.strata.client.master;

import java.time.Duration;

/**
 * The waiting between attempts of one retried call: sleeps that start at a base and double up
 * to a maximum, within a total budget measured from the first failure. One instance serves one
 * call and is not shared between threads.
 */
public final class Backoff {
  private final long baseNanos;
  private final long maxSleepNanos;
  private final long budgetNanos;
  private long startNanos = -1;
  private long nextSleepNanos;

  public Backoff(Duration baseSleep, Duration maxSleep, Duration budget) {
    this.baseNanos = Math.max(1, baseSleep.toNanos());
    this.maxSleepNanos = Math.max(baseNanos, maxSleep.toNanos());
    this.budgetNanos = budget.toNanos();
    this.nextSleepNanos = baseNanos;
  }

  /**
   * Waits before the next attempt. Returns false, without waiting, when the budget is spent;
   * the last sleep is shortened so that the total never exceeds the budget by much.
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
