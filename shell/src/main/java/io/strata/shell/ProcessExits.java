package io.strata.shell;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for processes the command line started (servers, mounts) to end. */
public final class ProcessExits {
  private ProcessExits() {}

  /**
   * Whether {@code process} has ended within {@code timeout}. An interrupted wait keeps the
   * interrupt flag and answers whether the process is gone by then.
   */
  public static boolean await(ProcessHandle process, Duration timeout) {
    try {
      process.onExit().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (ExecutionException e) {
      return !process.isAlive();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return !process.isAlive();
    }
  }
}
