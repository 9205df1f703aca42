package io.strata.shell.admin;

import io.strata.client.master.MasterClient;
import io.strata.common.LayoutFeature;
import io.strata.common.Version;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.proto.ConnectedClient;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/**
 * {@code strata fsadmin upgrade status}: each master's, worker's and connected process's release
 * and versions, the cluster's finalized metadata layout, what finalize would enable, the recorded
 * pre-upgrade point, and how to roll back from here.
 */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Show each master's, worker's and connected client's (FUSE mount, proxy) release, RPC"
          + " protocol and metadata layout, the cluster's finalized layout, what `upgrade"
          + " finalize` would enable, and how to roll back."
    })
final class UpgradeStatusCommand implements Callable<Integer> {
  private final ShellContext ctx;

  UpgradeStatusCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    StrataConfig conf = ctx.conf();
    Duration rpc = conf.getDuration(ClientKeys.RPC_TIMEOUT);
    Duration probe =
        rpc.compareTo(QuorumInfoCommand.PROBE_TIMEOUT) < 0 ? rpc : QuorumInfoCommand.PROBE_TIMEOUT;
    UpgradeSurvey s;
    try (MasterClient probing =
        new MasterClient(
            conf.with(Map.of(ClientKeys.RPC_TIMEOUT.name(), probe.toMillis() + "ms")))) {
      s = UpgradeSurvey.take(probing, ctx.fs());
    }
    PrintStream out = ctx.out();
    int layout = s.clusterLayout();
    out.println("Releases running: " + String.join(", ", s.releases()));
    out.println(
        "Cluster metadata layout: "
            + (layout == 0 ? "unknown (no master leads)" : Integer.toString(layout))
            + "; this shell's release ("
            + Version.RELEASE
            + ") reads layouts up to "
            + Version.LAYOUT_VERSION);

    out.println("Masters:");
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"ADDRESS", "ROLE", "RELEASE", "PROTOCOL", "LAYOUTS"});
    for (UpgradeSurvey.MasterRow m : s.masters) {
      rows.add(
          m.error() != null
              ? new String[] {m.address(), m.role(), "-", "-", "-"}
              : new String[] {
                m.address(),
                m.role(),
                m.release(),
                Integer.toString(m.protocol()),
                "1-" + m.maxLayout()
              });
    }
    table(out, rows);
    for (UpgradeSurvey.MasterRow m : s.masters) {
      if (m.error() != null) {
        out.println(
            "Note: "
                + m.address()
                + " is unreachable: "
                + m.error()
                + " (finalize waits for every master: start it, or remove it from the group)");
      }
    }
    out.println("Workers:");
    rows = new ArrayList<>();
    rows.add(new String[] {"WORKER", "STATE", "RELEASE", "PROTOCOL"});
    for (UpgradeSurvey.WorkerRow w : s.workers) {
      rows.add(new String[] {w.host(), w.state(), w.release(), Integer.toString(w.protocol())});
    }
    table(out, rows);
    out.println("Clients connected to the leader (FUSE mounts, proxies, applications):");
    rows = new ArrayList<>();
    rows.add(new String[] {"KIND", "FROM", "RELEASE", "PROTOCOL"});
    for (ConnectedClient c : s.clients) {
      rows.add(
          new String[] {
            c.getKind(), c.getHost(), c.getRelease(), Integer.toString(c.getProtocolVersion())
          });
    }
    table(out, rows);

    if (s.prepared != null) {
      Map<String, String> p = UpgradePrepareCommand.parse(s.prepared);
      out.println(
          "Prepared: backup "
              + p.getOrDefault("backup", "?")
              + " at journal index "
              + p.getOrDefault("index", "?")
              + ", release "
              + p.getOrDefault("release", "?")
              + ", layout "
              + p.getOrDefault("layout", "?")
              + ", "
              + p.getOrDefault("time", "?"));
    } else {
      out.println("Prepared: no (run `strata fsadmin upgrade prepare` before upgrading)");
    }
    List<LayoutFeature> enable = s.wouldEnable(Version.LAYOUT_VERSION);
    if (layout != 0 && layout >= Version.LAYOUT_VERSION) {
      out.println("Finalized: layout " + layout + "; nothing to finalize.");
    } else if (layout != 0) {
      List<String> laggards = s.laggards(Version.LAYOUT_VERSION);
      out.println(
          "Finalize would enable (layout "
              + Version.LAYOUT_VERSION
              + "): "
              + (enable.isEmpty()
                  ? "nothing"
                  : String.join("; ", enable.stream().map(LayoutFeature::description).toList())));
      out.println(
          laggards.isEmpty()
              ? "Finalize: ready (`strata fsadmin upgrade finalize`)"
              : "Finalize: not yet; upgrade first: " + String.join(", ", laggards));
    }
    if (layout != 0 && layout < Version.LAYOUT_VERSION) {
      out.println(
          "Rollback: not finalized, so every process can go back to the previous"
              + " release's binaries on the same folders (docs/rolling-upgrade.md).");
    } else if (layout != 0) {
      out.println(
          "Rollback: the cluster is finalized at layout "
              + layout
              + ": going back to"
              + " an older release means restoring "
              + (s.prepared == null
                  ? "a backup taken before the upgrade"
                  : "the prepare backup "
                      + UpgradePrepareCommand.parse(s.prepared).getOrDefault("backup", "?"))
              + " with `strata master start --restore DIR` on every master.");
    }
    return 0;
  }

  /** Prints rows as columns as wide as their widest cell, indented under their heading. */
  static void table(PrintStream out, List<String[]> rows) {
    if (rows.size() == 1) {
      out.println("  (none)");
      return;
    }
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        line.append("  ").append(String.format("%-" + width[i] + "s", r[i]));
      }
      out.println(line.toString().stripTrailing());
    }
  }
}
