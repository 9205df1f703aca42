package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fs persist PATH...}: writes files that are in the cache only to their stores. */
@Command(
    name = "persist",
    description =
        "Write files that are in Strata's cache only (write"
            + " type ASYNC_THROUGH not yet persisted, or MUST_CACHE) to their under stores now, and"
            + " wait until each is there.")
final class PersistCommand extends FsAction {
  @Parameters(paramLabel = "PATH", arity = "1..*")
  List<String> paths;

  PersistCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    for (String path : paths) {
      FileInfo f = fs().persist(path);
      out()
          .println(
              "Persisted "
                  + f.getPath()
                  + " ("
                  + Format.human(f.getLength())
                  + ") to "
                  + f.getUfsPath());
    }
  }
}
