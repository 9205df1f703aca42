package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fs mkdir [-p] PATH}. */
@Command(name = "mkdir", description = "Create a directory.")
final class MkdirCommand extends FsAction {
  @Option(names = "-p", description = "Create missing parents; no error if it exists.")
  boolean parents;

  @Parameters(paramLabel = "PATH")
  String path;

  MkdirCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().createDirectory(path, parents, parents);
  }
}
