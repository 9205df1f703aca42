package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fs rm [-R] PATH}: deletes in Strata and in the under store. */
@Command(
    name = "rm",
    description = "Delete a file, or a directory with -R (also from the" + " under store).")
final class RmCommand extends FsAction {
  @Option(names = "-R", description = "Delete a directory and everything below it.")
  boolean recursive;

  @Parameters(paramLabel = "PATH")
  String path;

  RmCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().delete(path, recursive);
  }
}
