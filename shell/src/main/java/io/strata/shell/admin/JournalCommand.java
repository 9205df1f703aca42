package io.strata.shell.admin;

import io.strata.shell.CommandGroup;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fsadmin journal}: the replicated journal of the masters. */
@Command(
    name = "journal",
    mixinStandardHelpOptions = true,
    description = "The masters' replicated journal: its group of masters and checkpoints.")
final class JournalCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(QuorumCommand.class, CheckpointCommand.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
