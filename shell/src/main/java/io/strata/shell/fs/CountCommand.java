package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs count PATH}: directories (PATH included), files and bytes below PATH. */
@Command(name = "count", description = "Count the directories, files and bytes below a path.")
final class CountCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  CountCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileInfo root = fs().getStatus(path);
    TreeTotals t = TreeTotals.of(fs(), root);
    out().println(String.format("%12s %12s %16s  %s", "DIRS", "FILES", "BYTES", "PATH"));
    out()
        .println(
            String.format(
                "%12d %12d %16d  %s", t.directories(), t.files(), t.bytes(), root.getPath()));
  }
}
