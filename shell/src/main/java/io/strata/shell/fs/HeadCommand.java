package io.strata.shell.fs;

import io.strata.client.FileInStream;
import io.strata.shell.ByteSizeConverter;
import io.strata.shell.ShellContext;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fs head [-c BYTES] PATH}: the first bytes of a file (1 KiB by default). */
@Command(name = "head", description = "Print the first bytes of a file.")
final class HeadCommand extends FsAction {
  @Option(
      names = "-c",
      paramLabel = "BYTES",
      defaultValue = "1KB",
      converter = ByteSizeConverter.class,
      description = "How many bytes (such as 100, 4KB, 1MiB); default: ${DEFAULT-VALUE}.")
  long bytes;

  @Parameters(paramLabel = "PATH")
  String path;

  HeadCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws IOException {
    try (FileInStream in = fs().openFile(path)) {
      Ranges.copy(in, 0, Math.min(bytes, in.length()), out());
    }
  }
}
