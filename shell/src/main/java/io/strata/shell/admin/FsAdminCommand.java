package io.strata.shell.admin;

import io.strata.shell.CommandGroup;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fsadmin}: cluster administration. */
@Command(name = "fsadmin", mixinStandardHelpOptions = true, description = "Cluster administration.")
public final class FsAdminCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(
        ReportCommand.class,
        CheckpointCommand.class,
        JournalCommand.class,
        BackupCommand.class,
        UpgradeCommand.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
