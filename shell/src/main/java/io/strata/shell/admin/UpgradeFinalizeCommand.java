package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.proto.FinalizeUpgradeRequest;
import io.strata.proto.FinalizeUpgradeResponse;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code strata fsadmin upgrade finalize}: switches the cluster to the newest metadata layout its
 * masters read. The leader refuses, naming the masters to upgrade, unless every master runs the new
 * release; once done, rolling back means restoring the prepare backup.
 */
@Command(
    name = "finalize",
    mixinStandardHelpOptions = true,
    description = {
      "Switch the cluster to the new metadata layout once every master runs the new release;"
          + " enables the features that need it.",
      "Afterwards the previous release can no longer read the journal: rolling back means"
          + " restoring the backup of `upgrade prepare`."
    })
final class UpgradeFinalizeCommand implements Callable<Integer> {
  private final ShellContext ctx;

  UpgradeFinalizeCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    FinalizeUpgradeResponse r =
        ctx.master()
            .callUpgrade(s -> s.finalizeUpgrade(FinalizeUpgradeRequest.getDefaultInstance()));
    PrintStream out = ctx.out();
    if (r.getPreviousLayoutVersion() >= r.getLayoutVersion()) {
      out.println(
          "Already finalized: the cluster's metadata layout is " + r.getLayoutVersion() + ".");
      return 0;
    }
    out.println(
        "Finalized: metadata layout "
            + r.getPreviousLayoutVersion()
            + " -> "
            + r.getLayoutVersion()
            + ".");
    for (String feature : r.getEnabledFeaturesList()) {
      out.println("  enabled: " + feature);
    }
    out.println(
        "Rolling back now means restoring the backup of `strata fsadmin upgrade"
            + " prepare` on every master.");
    return 0;
  }
}
