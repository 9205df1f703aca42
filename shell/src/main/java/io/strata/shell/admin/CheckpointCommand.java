package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.shell.ShellContext;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** {@code strata fsadmin checkpoint}: makes the master checkpoint its journal now. */
@Command(
    name = "checkpoint",
    mixinStandardHelpOptions = true,
    description = "Make the master take a checkpoint of its metadata now.")
final class CheckpointCommand implements Callable<Integer> {
  private final ShellContext ctx;

  CheckpointCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    long sequence = ctx.fs().checkpoint();
    ctx.out().println("Checkpoint taken at journal sequence " + sequence);
    return 0;
  }
}
