package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs mv SRC DST}: renames within the namespace and the under store. DST is the new
 * path itself and must not exist (an existing directory is not moved into).
 */
@Command(
    name = "mv",
    description = {
      "Rename or move a file or directory.",
      "DST is the new path and must not exist yet."
    })
final class MvCommand extends FsAction {
  @Parameters(index = "0", paramLabel = "SRC")
  String src;

  @Parameters(index = "1", paramLabel = "DST")
  String dst;

  MvCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().rename(src, dst);
  }
}
