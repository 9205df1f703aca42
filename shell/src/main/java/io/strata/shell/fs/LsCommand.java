package io.strata.shell.fs;

import io.strata.client.CloseableIterator;
import io.strata.client.SyncOption;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.ShellContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs ls [-R] [-h] [--sync] PATH}: streams a listing, never holding a whole directory;
 * with {@code --sync} the master checks the under store first (every directory listed, with -R).
 */
@Command(
    name = "ls",
    description = {
      "List a directory, or show one file.",
      "Columns: mode, owner, group, size, modified, cached %%, path (directories end in /)."
    })
final class LsCommand extends FsAction {
  @Option(names = "-R", description = "List subdirectories recursively.")
  boolean recursive;

  @Option(names = "-h", description = "Print sizes in KiB, MiB, GiB.")
  boolean human;

  @Option(
      names = "--sync",
      description =
          "Check the under store first and take in what "
              + "changed there (files added, deleted or rewritten outside Strata).")
  boolean sync;

  @Parameters(paramLabel = "PATH", defaultValue = "/", description = "Default: /.")
  String path;

  LsCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileInfo f = fs().getStatus(path, syncOption());
    if (!f.getDirectory()) {
      out().println(Listing.line(f, human));
      return;
    }
    list(f.getPath());
  }

  private SyncOption syncOption() {
    return sync ? SyncOption.ALWAYS : SyncOption.DEFAULT;
  }

  private void list(String dir) throws StrataException {
    try (CloseableIterator<FileInfo> children = fs().listStatus(dir, syncOption())) {
      while (children.hasNext()) {
        FileInfo child = children.next();
        out().println(Listing.line(child, human));
        if (recursive && child.getDirectory()) {
          list(child.getPath());
        }
      }
    }
  }
}
