package io.strata.shell.fs;

import io.strata.client.SetAttributeOptions;
import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs unsetTtl PATH}: removes a path's time to live. */
@Command(
    name = "unsetTtl",
    description =
        "Remove the time to live of a file or directory; "
            + "nothing happens to it when the time would have passed.")
final class UnsetTtlCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  UnsetTtlCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().setAttribute(path, SetAttributeOptions.defaults().noTtl());
    out().println("TTL of " + path + ": none");
  }
}
