package io.strata.shell.fs;

import io.strata.client.FileSystem;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs load [options] PATH}: submits a job that loads every block of every file below
 * PATH into the workers and follows it to its end (progress on stderr, a summary on stdout), or
 * with {@code --detach} only submits it; {@code --progress} and {@code --stop} act on the path's
 * job; {@code --metadata-only} loads metadata only, while the command waits. The command fails
 * (exit 1) when a followed job ends with files not loaded or is stopped; conflicting options are
 * usage errors (exit 2) that name both options.
 */
@Command(
    name = "load",
    description = {
      "Load every block of every file below PATH into the workers and follow the job to its end.",
      "Progress goes to stderr (redrawn about once a second on a terminal, a line every 2 s"
          + " otherwise), the summary to stdout. Exit code 1 when any file could not be loaded"
          + " or the job was stopped.",
      "Ctrl-C stops following, not the job: it keeps running on the master (see --progress and"
          + " --stop)."
    })
final class LoadCommand extends FsAction {
  /** Failures listed at the end of a followed job without --verbose. */
  static final int FAILURES_SHOWN = 20;

  /** Failures fetched with --verbose. */
  static final int FAILURES_VERBOSE = 1000;

  @Option(names = "--detach", description = "Submit the job and return at once.")
  boolean detach;

  @Option(
      names = "--progress",
      description = "Print the status of PATH's load job (running" + " or ended) once and exit.")
  boolean progress;

  @Option(names = "--stop", description = "Stop PATH's running load job and print its" + " status.")
  boolean stop;

  @Option(
      names = "--verbose",
      description =
          "List the failures (path: reason), up to "
              + FAILURES_VERBOSE
              + ", at the end of the job or with --progress.")
  boolean verbose;

  @Option(
      names = "--verify",
      description =
          "At the end, check that every block below PATH is" + " cached and load what is missing.")
  boolean verify;

  @Option(
      names = "--partial-listing",
      description =
          "Start loading before the whole tree is"
              + " listed (totals and ETA are known only once it is).")
  boolean partialListing;

  @Option(
      names = "--bandwidth",
      paramLabel = "SIZE",
      converter = BandwidthConverter.class,
      description =
          "Cap the job's total reads from under stores to SIZE per second, such as"
              + " 200MB (MB and MiB are both 2^20 bytes).")
  Long bandwidth;

  @Option(
      names = "--metadata-only",
      description = "Load metadata only, not blocks; the" + " command waits for the walk.")
  boolean metadataOnly;

  @Option(
      names = "--sync",
      description =
          "With --metadata-only: check every directory against"
              + " the under store, not only those Strata has never listed.")
  boolean sync;

  @Parameters(paramLabel = "PATH")
  String path;

  LoadCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws Exception {
    checkOptions();
    if (metadataOnly) {
      new MetadataLoad(fs(), out(), ctx.err()).run(path, sync);
    } else if (progress) {
      printProgress();
    } else if (stop) {
      LoadReport.describe(fs().stopLoad(path)).forEach(out()::println);
    } else {
      submit();
    }
  }

  /** Refuses combinations that do not make sense, naming both options. */
  private void checkOptions() {
    Map<String, Boolean> modeFlags = new LinkedHashMap<>();
    modeFlags.put("--metadata-only", metadataOnly);
    modeFlags.put("--progress", progress);
    modeFlags.put("--stop", stop);
    modeFlags.put("--detach", detach);
    List<String> modes = given(modeFlags);
    if (modes.size() > 1) {
      throw usage(modes.get(0) + " and " + modes.get(1) + " cannot be used together");
    }
    String mode = modes.isEmpty() ? null : modes.get(0);
    if (sync && !metadataOnly) {
      throw usage("--sync needs --metadata-only: it applies to the metadata walk");
    }
    Map<String, Boolean> jobFlags = new LinkedHashMap<>();
    jobFlags.put("--verify", verify);
    jobFlags.put("--partial-listing", partialListing);
    jobFlags.put("--bandwidth", bandwidth != null);
    List<String> jobOptions = given(jobFlags);
    if (!jobOptions.isEmpty() && mode != null && !mode.equals("--detach")) {
      throw usage(
          mode
              + " and "
              + jobOptions.get(0)
              + " cannot be used together: "
              + jobOptions.get(0)
              + " is an option of a new block load");
    }
    if (verbose && mode != null && !mode.equals("--progress")) {
      throw usage(
          mode
              + " and --verbose cannot be used together: --verbose lists the failures"
              + " of a followed job or of --progress");
    }
  }

  private static List<String> given(Map<String, Boolean> flags) {
    List<String> names = new ArrayList<>();
    flags.forEach(
        (name, set) -> {
          if (set) {
            names.add(name);
          }
        });
    return names;
  }

  private static UsageException usage(String message) {
    return new UsageException(message + " (see `strata fs load --help`)");
  }

  private void submit() throws StrataException, InterruptedException {
    LoadJobOptions.Builder options =
        LoadJobOptions.newBuilder().setVerify(verify).setPartialListing(partialListing);
    if (bandwidth != null) {
      options.setBandwidthBytesPerSec(bandwidth);
    }
    FileSystem.SubmittedLoad submitted = fs().submitLoad(path, options.build());
    LoadJobStatus job = submitted.job();
    String p = job.getPath().isEmpty() ? path : job.getPath();
    String running = "A load of " + p + " is already running (job " + job.getJobId() + ")";
    if (detach) {
      out()
          .println(
              submitted.alreadyRunning()
                  ? running + "; nothing new was submitted"
                  : "Submitted load job " + job.getJobId() + " of " + p);
      out().println("Its status:  strata fs load --progress " + p);
      out().println("Stop it:     strata fs load --stop " + p);
      return;
    }
    if (submitted.alreadyRunning()) {
      ctx.err().println(running + "; following it");
    }
    StatusLine line =
        new StatusLine(
            ctx.err(),
            StatusLine.onTerminal(),
            StatusLine.columns(ctx.env().get("COLUMNS")),
            System::nanoTime);
    LoadJobStatus end;
    try {
      end =
          new LoadFollower(fs(), line, LoadFollower.POLL_INTERVAL, LoadFollower.OUTAGE_LIMIT)
              .follow(p, job);
    } finally {
      line.finish();
    }
    conclude(p, end);
  }

  /** The summary of a job that ended, its failures, and the command's outcome. */
  private void conclude(String p, LoadJobStatus end) throws StrataException {
    LoadJobStatus s = end;
    if (end.getFilesFailed() > 0) {
      LoadJobStatus withFailures = fs().loadStatus(p, verbose ? FAILURES_VERBOSE : FAILURES_SHOWN);
      if (withFailures.getJobId() == end.getJobId()) {
        s = withFailures;
      }
    }
    LoadReport.describe(s).forEach(out()::println);
    out().flush();
    if (s.getFailuresCount() > 0) {
      LoadReport.printFailures(ctx.err(), s);
    }
    checkOutcome(p, s);
  }

  private void printProgress() throws StrataException {
    LoadJobStatus s = fs().loadStatus(path, verbose ? FAILURES_VERBOSE : 0);
    String p = s.getPath().isEmpty() ? path : s.getPath();
    LoadReport.describe(s).forEach(out()::println);
    if (s.getFailuresCount() > 0) {
      LoadReport.printFailures(out(), s);
    }
    out().flush();
    if (LoadFollower.ended(s.getState())) {
      checkOutcome(p, s);
    }
  }

  /** Fails when a job that ended did not load every file. */
  private void checkOutcome(String p, LoadJobStatus s) throws StrataException {
    String job = " (job " + s.getJobId() + ")";
    long failed = s.getFilesFailed();
    if (failed > 0) {
      String more;
      if (s.getFailuresCount() >= failed) {
        more = "";
      } else if (verbose) {
        more = "; the first " + s.getFailuresCount() + " are listed";
      } else {
        more = "; list them with `strata fs load --progress --verbose " + p + "`";
      }
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          failed
              + " files of "
              + p
              + " could not be loaded"
              + job
              + more
              + "; `strata fs load "
              + p
              + "` tries them"
              + " again");
    }
    if (s.getState() == LoadJobState.LOAD_FAILED) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          "The load of " + p + " failed" + job + "; the master's log says why");
    }
    if (s.getState() == LoadJobState.LOAD_STOPPED) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          "The load of "
              + p
              + " was"
              + " stopped"
              + job
              + " before it finished; what it cached stays cached, and"
              + " `strata fs load "
              + p
              + "` loads the rest");
    }
  }
}
