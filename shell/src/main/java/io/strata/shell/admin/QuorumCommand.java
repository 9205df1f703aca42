package io.strata.shell.admin;

import io.strata.shell.CommandGroup;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fsadmin journal quorum}: the masters that replicate the journal. */
@Command(
    name = "quorum",
    mixinStandardHelpOptions = true,
    description = "Show or change the group of masters that replicate the journal.")
final class QuorumCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(
        QuorumInfoCommand.class,
        QuorumElectCommand.class,
        QuorumAddCommand.class,
        QuorumRemoveCommand.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
