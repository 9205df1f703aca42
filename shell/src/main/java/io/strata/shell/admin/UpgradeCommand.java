package io.strata.shell.admin;

import io.strata.shell.CommandGroup;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fsadmin upgrade}: rolling upgrades (docs/rolling-upgrade.md). */
@Command(
    name = "upgrade",
    mixinStandardHelpOptions = true,
    description =
        "Rolling upgrades: where the cluster stands, the pre-upgrade backup, and the"
            + " switch to the new metadata layout.")
final class UpgradeCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(
        UpgradeStatusCommand.class, UpgradePrepareCommand.class, UpgradeFinalizeCommand.class);
  }

  /** The root's extended attribute that records the pre-upgrade point. */
  static final String PREPARED_XATTR = "strata.upgrade.prepared";

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
