package io.strata.shell.fs;

import io.strata.client.FileInStream;
import io.strata.shell.ShellContext;
import java.io.IOException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs cat PATH}: the file's bytes on stdout, read sequentially. */
@Command(name = "cat", description = "Print a file's content.")
final class CatCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  CatCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws IOException {
    try (FileInStream in = fs().openFile(path)) {
      byte[] buf = new byte[1 << 20];
      int n;
      // A closed pipe (`strata fs cat x | head`) shows up as a PrintStream error: stop there.
      while ((n = in.read(buf, 0, buf.length)) > 0 && !out().checkError()) {
        out().write(buf, 0, n);
      }
    }
    out().flush();
  }
}
