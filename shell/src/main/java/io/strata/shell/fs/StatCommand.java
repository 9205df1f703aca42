package io.strata.shell.fs;

import io.strata.client.SyncOption;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs stat [--sync] PATH}: every attribute of one path, one per line; with
 * {@code --sync} as the under store has it now.
 */
@Command(name = "stat", description = "Show the status of a file or directory.")
final class StatCommand extends FsAction {
  @Option(names = "--sync", description = "Check the under store first and take in what "
      + "changed there.")
  boolean sync;

  @Parameters(paramLabel = "PATH")
  String path;

  StatCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileInfo f = fs().getStatus(path, sync ? SyncOption.ALWAYS : SyncOption.DEFAULT);
    PrintStream o = out();
    o.printf("Path:        %s%n", f.getPath());
    o.printf("Type:        %s%n", f.getDirectory() ? "directory" : "file");
    if (!f.getDirectory()) {
      o.printf("Size:        %d (%s)%n", f.getLength(), Format.human(f.getLength()));
      o.printf("Blocks:      %d of %s%n", f.getBlockCount(), Format.human(f.getBlockSize()));
      o.printf("Cached:      %d (%s)%n", f.getCachedBytes(),
          Format.percent(f.getCachedBytes(), f.getLength()));
      o.printf("Complete:    %s%n", f.getComplete() ? "yes" : "no (being written)");
    }
    o.printf("Mode:        %s (%04o)%n", Format.mode(f.getDirectory(), f.getMode()),
        f.getMode());
    o.printf("Owner:       %s%n", f.getOwner());
    o.printf("Group:       %s%n", f.getGroup());
    o.printf("Modified:    %s%n", Format.time(f.getModificationTimeMs()));
    if (f.getTtlMs() > 0) {
      o.printf("TTL:         %s%n", SetTtlCommand.describe(f));
    }
    o.printf("File id:     %d%n", f.getFileId());
    o.printf("Under store: %s (mount %d)%n", f.getUfsPath(), f.getMountId());
    if (!f.getUfsFingerprint().isEmpty()) {
      o.printf("Fingerprint: %s%n", f.getUfsFingerprint());
    }
  }
}
