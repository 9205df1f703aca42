package io.strata.shell.fs;

import io.strata.client.SetAttributeOptions;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs unsetWriteType PATH}: what is made in a folder takes the client's again. */
@Command(
    name = "unsetWriteType",
    description =
        "Remove the write type of a file or folder:"
            + " what is made in it from now on takes the client's strata.user.file.write.type (folders"
            + " made in it meanwhile keep the type they took).")
final class UnsetWriteTypeCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  UnsetWriteTypeCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    fs().setAttribute(path, SetAttributeOptions.defaults().removeXattr(WriteTypeAttribute.NAME));
    out().println("Write type of " + path + ": the client's (strata.user.file.write.type)");
  }
}
