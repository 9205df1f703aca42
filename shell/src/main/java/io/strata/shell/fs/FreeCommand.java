package io.strata.shell.fs;

import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fs free [-R] PATH}: drops cached blocks; the files stay. */
@Command(
    name = "free",
    description =
        "Drop the cached blocks of a file (or, with -R, of a"
            + " directory); the files themselves stay.")
final class FreeCommand extends FsAction {
  @Option(names = "-R", description = "Free every file below a directory.")
  boolean recursive;

  @Parameters(paramLabel = "PATH")
  String path;

  FreeCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileSystem.Freed r = fs().free(path, recursive);
    out()
        .println(
            "Freed "
                + r.blocks()
                + (r.blocks() == 1 ? " block (" : " blocks (")
                + Format.human(r.bytes())
                + ") of "
                + path);
  }
}
