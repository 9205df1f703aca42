package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.client.SyncOption;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadMetadataProgress;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.util.Locale;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs load --metadata-only [--sync] PATH}: has the master load the metadata of
 * every file and directory below PATH, printing its progress on stderr as it goes and the
 * totals on stdout at the end. Loading the blocks themselves is not in this release, so the
 * command refuses to run without {@code --metadata-only}.
 */
@Command(name = "load", description = {"Load the metadata of every file below a path into "
    + "Strata (blocks: a later release).",
    "Progress goes to stderr about once a second; the totals to stdout."})
final class LoadCommand extends FsAction {
  @Option(names = "--metadata-only", description = "Load metadata only (required: loading "
      + "blocks is not available in this release).")
  boolean metadataOnly;

  @Option(names = "--sync", description = "Check every directory against the under store, "
      + "not only those Strata has never listed.")
  boolean sync;

  @Parameters(paramLabel = "PATH")
  String path;

  LoadCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    if (!metadataOnly) {
      throw new UsageException("Only `strata fs load --metadata-only PATH` is available in this"
          + " release: loading blocks into workers comes in a later one");
    }
    LoadMetadataProgress last = null;
    try (CloseableIterator<LoadMetadataProgress> progress =
        fs().loadMetadata(path, sync ? SyncOption.ALWAYS : SyncOption.DEFAULT)) {
      while (progress.hasNext()) {
        last = progress.next();
        if (!last.getDone()) {
          ctx.err().println(String.format(Locale.ROOT,
              "Loading %s: %d files, %d directories, %s files/s", path, last.getFiles(),
              last.getDirectories(), rate(last)));
        }
      }
    }
    if (last == null || !last.getDone()) {
      throw new StrataException(ErrorCode.UNAVAILABLE, "The metadata load of " + path
          + " ended before it was done; run it again (what it loaded is kept)");
    }
    out().println(String.format(Locale.ROOT,
        "Loaded metadata of %s: %d files, %d directories, %s in %.1fs (%s files/s)", path,
        last.getFiles(), last.getDirectories(), Format.human(last.getBytes()),
        last.getElapsedMs() / 1000.0, rate(last)));
    if (last.getFailedCount() > 0) {
      out().flush();
      for (String failed : last.getFailedPathsList()) {
        ctx.err().println("Not loaded: " + failed);
      }
      throw new StrataException(ErrorCode.UNAVAILABLE, last.getFailedCount()
          + " directories could not be loaded (the master's log says why); run the load again"
          + " once their under store answers");
    }
  }

  /** Files per second, whole. */
  private static String rate(LoadMetadataProgress p) {
    return Long.toString(p.getFiles() * 1000 / Math.max(1, p.getElapsedMs()));
  }
}
