package io.strata.shell.fs;

import io.strata.client.FileSystem;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import java.time.Duration;

/**
 * Follows a load job until it ends: polls its status at a fixed interval and shows each one on a
 * {@link StatusLine}. The job runs on the master whatever happens here, so a master that does not
 * answer (a restart, a fail-over) is waited for, with a note, for up to an outage limit; only then
 * does following fail, with a message that names the master and says the job goes on. Any other
 * error of a poll ends following at once.
 */
final class LoadFollower {
  static final Duration POLL_INTERVAL = Duration.ofSeconds(1);
  static final Duration OUTAGE_LIMIT = Duration.ofMinutes(5);

  private final FileSystem fs;
  private final StatusLine line;
  private final Duration pollInterval;
  private final Duration outageLimit;

  LoadFollower(FileSystem fs, StatusLine line, Duration pollInterval, Duration outageLimit) {
    this.fs = fs;
    this.line = line;
    this.pollInterval = pollInterval;
    this.outageLimit = outageLimit;
  }

  /** Whether a job in this state is over. */
  static boolean ended(LoadJobState state) {
    return state == LoadJobState.LOAD_SUCCEEDED
        || state == LoadJobState.LOAD_FAILED
        || state == LoadJobState.LOAD_STOPPED;
  }

  /**
   * Follows the job of {@code path}, starting from a status already known, and returns its last
   * status: the one in which it ended.
   *
   * @throws StrataException when the master stays silent past the outage limit, or a poll fails
   *     otherwise (the job is not affected either way)
   * @throws InterruptedException when this thread is interrupted between polls
   */
  LoadJobStatus follow(String path, LoadJobStatus first)
      throws StrataException, InterruptedException {
    LoadProgressLine progress = new LoadProgressLine();
    LoadJobStatus status = first;
    long outageStart = -1;
    line.show(progress.render(status));
    while (!ended(status.getState())) {
      Thread.sleep(pollInterval.toMillis());
      long callStart = System.nanoTime();
      LoadJobStatus next;
      try {
        next = fs.loadStatus(path, 0);
      } catch (StrataException e) {
        if (!silent(e)) {
          throw e;
        }
        if (outageStart < 0) {
          outageStart = callStart;
          line.note(
              "The master at "
                  + fs.masterAddress()
                  + " does not answer; waiting for it"
                  + " up to "
                  + LoadProgressLine.duration(outageLimit.toMillis())
                  + " (the load keeps running on the master)");
        } else if (System.nanoTime() - outageStart >= outageLimit.toNanos()) {
          throw new StrataException(
              ErrorCode.UNAVAILABLE,
              "The master at "
                  + fs.masterAddress()
                  + " has not answered for "
                  + LoadProgressLine.duration(outageLimit.toMillis())
                  + "; the load of "
                  + path
                  + " (job "
                  + status.getJobId()
                  + ") keeps running on the master: follow it again"
                  + " with `strata fs load --progress "
                  + path
                  + "` once the master is back",
              e);
        }
        continue;
      }
      if (outageStart >= 0) {
        line.note("The master at " + fs.masterAddress() + " answers again");
        outageStart = -1;
      }
      if (next.getJobId() != status.getJobId()) {
        line.note(
            "Load job "
                + status.getJobId()
                + " of "
                + path
                + " was followed by job "
                + next.getJobId()
                + " (submitted by someone else); following that one");
      }
      status = next;
      line.show(progress.render(status));
    }
    return status;
  }

  /** A master that could not be reached, or did not answer in time. */
  private static boolean silent(StrataException e) {
    return e.code() == ErrorCode.UNAVAILABLE || e.code() == ErrorCode.DEADLINE_EXCEEDED;
  }
}
