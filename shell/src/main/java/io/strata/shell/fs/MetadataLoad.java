package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.client.SyncOption;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadMetadataProgress;
import io.strata.shell.Format;
import java.io.PrintStream;
import java.util.Locale;

/**
 * {@code strata fs load --metadata-only [--sync] PATH}: has the master load the metadata of every
 * file and directory below PATH while the command waits, printing its progress on stderr as it goes
 * and the totals on stdout at the end. Directories that could not be listed are named on stderr and
 * make the command fail once the totals are out.
 */
final class MetadataLoad {
  private final FileSystem fs;
  private final PrintStream out;
  private final PrintStream err;

  MetadataLoad(FileSystem fs, PrintStream out, PrintStream err) {
    this.fs = fs;
    this.out = out;
    this.err = err;
  }

  void run(String path, boolean sync) throws StrataException {
    LoadMetadataProgress last = null;
    try (CloseableIterator<LoadMetadataProgress> progress =
        fs.loadMetadata(path, sync ? SyncOption.ALWAYS : SyncOption.DEFAULT)) {
      while (progress.hasNext()) {
        last = progress.next();
        if (!last.getDone()) {
          err.println(
              String.format(
                  Locale.ROOT,
                  "Loading %s: %d files, %d directories, %s files/s",
                  path,
                  last.getFiles(),
                  last.getDirectories(),
                  rate(last)));
        }
      }
    }
    if (last == null || !last.getDone()) {
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "The metadata load of "
              + path
              + " ended before it was done; run it again (what it loaded is kept)");
    }
    out.println(
        String.format(
            Locale.ROOT,
            "Loaded metadata of %s: %d files, %d directories, %s in %.1fs (%s files/s)",
            path,
            last.getFiles(),
            last.getDirectories(),
            Format.human(last.getBytes()),
            last.getElapsedMs() / 1000.0,
            rate(last)));
    if (last.getFailedCount() > 0) {
      out.flush();
      for (String failed : last.getFailedPathsList()) {
        err.println("Not loaded: " + failed);
      }
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          last.getFailedCount()
              + " directories could not be loaded (the master's log says why); run the load again"
              + " once their under store answers");
    }
  }

  /** Files per second, whole. */
  private static String rate(LoadMetadataProgress p) {
    return Long.toString(p.getFiles() * 1000 / Math.max(1, p.getElapsedMs()));
  }
}
