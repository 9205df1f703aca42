package io.strata.shell.fs;

import io.strata.client.FileInStream;
import io.strata.shell.ShellContext;
import java.io.IOException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs cat PATH...}: the files' bytes on stdout, one after the other. */
@Command(name = "cat", description = "Print the content of one or more files, in order.")
final class CatCommand extends FsAction {
  @Parameters(paramLabel = "PATH", arity = "1..*")
  List<String> paths;

  CatCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws IOException {
    byte[] buf = new byte[1 << 20];
    for (String path : paths) {
      try (FileInStream in = fs().openFile(path)) {
        int n;
        // A closed pipe (`strata fs cat x | head`) shows up as a PrintStream error: stop there.
        while ((n = in.read(buf, 0, buf.length)) > 0 && !out().checkError()) {
          out().write(buf, 0, n);
        }
      }
      if (out().checkError()) {
        break;
      }
    }
    out().flush();
  }
}
