package io.strata.shell.fs;

import io.strata.client.FileInStream;
import io.strata.shell.ByteSizeConverter;
import io.strata.shell.ShellContext;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fs tail [-c BYTES] PATH}: the last bytes of a file (1 KiB by default). */
@Command(name = "tail", description = "Print the last bytes of a file.")
final class TailCommand extends FsAction {
  @Option(
      names = "-c",
      paramLabel = "BYTES",
      defaultValue = "1KB",
      converter = ByteSizeConverter.class,
      description = "How many bytes (such as 100, 4KB, 1MiB); default: ${DEFAULT-VALUE}.")
  long bytes;

  @Parameters(paramLabel = "PATH")
  String path;

  TailCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws IOException {
    try (FileInStream in = fs().openFile(path)) {
      long start = Math.max(0, in.length() - bytes);
      Ranges.copy(in, start, in.length() - start, out());
    }
  }
}
