package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs unmount PATH}: the under store itself is left untouched. */
@Command(name = "unmount", description = "Remove a mount (the under store is not touched).")
final class UnmountCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  UnmountCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().unmount(path);
  }
}
