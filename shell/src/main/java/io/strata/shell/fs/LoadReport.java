package io.strata.shell.fs;

import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.shell.Format;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The text of a load job's status, the same for the summary at the end of a followed job, {@code
 * --progress} and {@code --stop}: a header line with the job, its state and its running time, then
 * indented lines with the files, bytes and blocks, the verify figures when the job verifies, the
 * options given and what the job waits for. Also the listing of failures.
 */
final class LoadReport {
  private LoadReport() {}

  /** The lines describing a status. */
  static List<String> describe(LoadJobStatus s) {
    List<String> lines = new ArrayList<>();
    lines.add(header(s));
    String soFar = s.getListingDone() ? "" : " found so far";
    lines.add(
        "  files:    "
            + s.getFilesDone()
            + " cached of "
            + s.getFilesTotal()
            + soFar
            + ", "
            + s.getFilesFailed()
            + " failed");
    String percent =
        s.getListingDone() && s.getBytesTotal() > 0
            ? " (" + Format.percent(s.getBytesDone(), s.getBytesTotal()) + ")"
            : "";
    lines.add(
        "  bytes:    "
            + Format.human(s.getBytesDone())
            + " cached of "
            + Format.human(s.getBytesTotal())
            + soFar
            + percent);
    String throughput =
        s.getElapsedMs() > 0
            ? ", " + LoadProgressLine.rate(s.getBytesLoaded() * 1000.0 / s.getElapsedMs())
            : "";
    lines.add(
        "  read:     " + Format.human(s.getBytesLoaded()) + " from under stores" + throughput);
    lines.add(
        "  blocks:   "
            + s.getBlocksLoaded()
            + " loaded, "
            + s.getBlocksCached()
            + " already cached");
    LoadJobOptions o = s.getOptions();
    if (o.getVerify()) {
      boolean verified =
          s.getState() == LoadJobState.LOAD_VERIFYING || LoadFollower.ended(s.getState());
      lines.add(
          "  verify:   "
              + (verified
                  ? s.getVerifyMissingBlocks() + " missing blocks found and loaded again"
                  : "after loading"));
    }
    String options = options(o);
    if (!options.isEmpty()) {
      lines.add("  options:  " + options);
    }
    if (!s.getWaitingFor().isEmpty()) {
      lines.add("  waiting for " + s.getWaitingFor());
    }
    return lines;
  }

  /** "Load job 7 of /data: running for 1m05s, ETA 2m10s" and the like. */
  static String header(LoadJobStatus s) {
    String job = "Load job " + s.getJobId() + " of " + s.getPath() + ": ";
    String time = LoadProgressLine.duration(s.getElapsedMs());
    switch (s.getState()) {
      case LOAD_SUCCEEDED:
        return job + "succeeded in " + time;
      case LOAD_FAILED:
        return job + "failed after " + time;
      case LOAD_STOPPED:
        return job + "stopped after " + time;
      default:
        return job
            + LoadProgressLine.stateName(s.getState())
            + " for "
            + time
            + ", ETA "
            + new LoadProgressLine().eta(s)
            + " (submitted "
            + Format.time(s.getSubmitTimeMs())
            + ")";
    }
  }

  /** The options of a job that differ from the defaults, or "". */
  static String options(LoadJobOptions o) {
    List<String> given = new ArrayList<>();
    if (o.getVerify()) {
      given.add("verify");
    }
    if (o.getPartialListing()) {
      given.add("partial listing");
    }
    if (o.getBandwidthBytesPerSec() > 0) {
      given.add("bandwidth " + LoadProgressLine.rate(o.getBandwidthBytesPerSec()));
    }
    return String.join(", ", given);
  }

  /**
   * Lists the failures a status carries, one {@code path: reason} a line, after a title that says
   * how many of how many are shown.
   */
  static void printFailures(PrintStream to, LoadJobStatus s) {
    List<LoadFailure> failures = s.getFailuresList();
    long total = Math.max(s.getFilesFailed(), failures.size());
    to.println(
        failures.size() < total
            ? "Files not loaded (the first " + failures.size() + " of " + total + "):"
            : "Files not loaded (" + total + "):");
    for (LoadFailure f : failures) {
      to.println("  " + f.getPath() + ": " + f.getReason());
    }
  }
}
