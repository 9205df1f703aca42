package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.proto.BackupRequest;
import io.strata.proto.BackupResponse;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata fsadmin backup [--to DIR]}: makes the leading master write a consistent backup of
 * the metadata while the cluster serves, on its own host.
 */
@Command(
    name = "backup",
    mixinStandardHelpOptions = true,
    description = {
      "Make the leading master write a backup of the metadata (a folder with db/ and HEADER) on"
          + " its host while the cluster serves, and print where it is.",
      "Start a fresh master (or group) from it with `strata master start --restore DIR`."
    })
final class BackupCommand implements Callable<Integer> {
  private final ShellContext ctx;

  @Option(
      names = "--to",
      paramLabel = "DIR",
      description =
          "Absolute folder on the leading"
              + " master's host to write the backup into (default: its strata.master.backup.dir).")
  String to;

  BackupCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    BackupResponse b = backup(ctx, to);
    PrintStream out = ctx.out();
    out.println("Backup written to " + b.getPath());
    out.println("  on the host of master " + b.getWrittenBy());
    out.printf(
        "  journal index %d, sequence %d, %d inodes%n",
        b.getIndex(), b.getSequence(), b.getInodeCount());
    out.println(
        "Restore with: bin/strata master start --restore "
            + b.getPath()
            + " (on each master, with an empty journal folder)");
    return 0;
  }

  /**
   * Has the leading master write a backup into {@code to} (an absolute folder on its host; null for
   * its strata.master.backup.dir).
   */
  static BackupResponse backup(ShellContext ctx, String to) throws StrataException {
    if (to != null && !Path.of(to).isAbsolute()) {
      throw new UsageException(
          "--to takes an absolute folder on the leading master's host"
              + " (the master does not know this shell's working folder), not '"
              + to
              + "'");
    }
    return ctx.master()
        .callJournal(
            s -> s.backup(BackupRequest.newBuilder().setDir(to == null ? "" : to).build()));
  }
}
