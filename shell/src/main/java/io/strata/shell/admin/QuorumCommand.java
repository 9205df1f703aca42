package io.strata.shell.admin;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fsadmin journal quorum}: the masters that replicate the journal. */
@Command(name = "quorum", mixinStandardHelpOptions = true,
    description = "Show or change the group of masters that replicate the journal.",
    subcommands = {QuorumInfoCommand.class, QuorumElectCommand.class, QuorumAddCommand.class,
        QuorumRemoveCommand.class})
final class QuorumCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
