package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs du [-s] [-h] PATH}: size and size cached of each entry of a directory (each
 * subdirectory totalled), or of PATH alone with -s.
 */
@Command(
    name = "du",
    description = {
      "Show the size and the cached size of each entry of a" + " directory (-s: of PATH alone).",
      "Columns: size, cached, cached %%, path."
    })
final class DuCommand extends FsAction {
  @Option(names = "-s", description = "One total for PATH.")
  boolean summary;

  @Option(names = "-h", description = "Print sizes in KiB, MiB, GiB.")
  boolean human;

  @Parameters(paramLabel = "PATH")
  String path;

  DuCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileInfo root = fs().getStatus(path);
    if (summary || !root.getDirectory()) {
      print(root, TreeTotals.of(fs(), root));
      return;
    }
    try (CloseableIterator<FileInfo> it = fs().listStatus(root.getPath())) {
      while (it.hasNext()) {
        FileInfo child = it.next();
        print(child, TreeTotals.of(fs(), child));
      }
    }
  }

  private void print(FileInfo f, TreeTotals t) {
    out()
        .println(
            String.format(
                "%12s  %12s  %4s  %s",
                Format.size(t.bytes(), human),
                Format.size(t.cachedBytes(), human),
                Format.percent(t.cachedBytes(), t.bytes()),
                f.getPath()));
  }
}
