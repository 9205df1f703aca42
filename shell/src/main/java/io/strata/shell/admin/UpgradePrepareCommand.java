package io.strata.shell.admin;

import com.google.protobuf.ByteString;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.StrataException;
import io.strata.proto.BackupResponse;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code strata fsadmin upgrade prepare}: the first step of an upgrade. Has the leading master
 * write a backup, then records the pre-upgrade point (the backup, its journal index, the release
 * and layout) in the namespace, where {@code upgrade status} finds it. It uses only calls that the
 * previous release serves, because it runs before any master is upgraded.
 */
@Command(
    name = "prepare",
    mixinStandardHelpOptions = true,
    description = {
      "Take the pre-upgrade backup and record it: run before upgrading any master.",
      "After `upgrade finalize`, going back to the previous release means restoring this backup."
    })
final class UpgradePrepareCommand implements Callable<Integer> {
  private final ShellContext ctx;

  @Option(
      names = "--to",
      paramLabel = "DIR",
      description =
          "Absolute folder on the leading"
              + " master's host to write the backup into (default: its strata.master.backup.dir).")
  String to;

  UpgradePrepareCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    GetMasterInfoResponse leader =
        ctx.master().call(s -> s.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()));
    BackupResponse b = BackupCommand.backup(ctx, to);
    int layout = UpgradeSurvey.layoutOf(leader);
    String record =
        "backup="
            + b.getPath()
            + " index="
            + b.getIndex()
            + " release="
            + leader.getRelease()
            + " layout="
            + layout
            + " time="
            + Instant.now();
    ctx.fs()
        .setAttribute(
            PathNames.ROOT,
            SetAttributeOptions.defaults()
                .xattr(
                    UpgradeCommand.PREPARED_XATTR,
                    ByteString.copyFrom(record, StandardCharsets.UTF_8)));
    PrintStream out = ctx.out();
    out.println(
        "Prepared the upgrade from release "
            + leader.getRelease()
            + " (metadata layout "
            + layout
            + ").");
    out.println(
        "Backup written to "
            + b.getPath()
            + " on the host of master "
            + b.getWrittenBy()
            + " (journal index "
            + b.getIndex()
            + ", "
            + b.getInodeCount()
            + " inodes).");
    out.println(
        "Next: upgrade the followers one at a time, then the leader, then workers,"
            + " mounts and proxies; `strata fsadmin upgrade status` shows progress.");
    return 0;
  }

  /** The fields of a recorded pre-upgrade point. */
  static Map<String, String> parse(String record) {
    java.util.LinkedHashMap<String, String> fields = new java.util.LinkedHashMap<>();
    for (String part : List.of(record.trim().split("\\s+"))) {
      int eq = part.indexOf('=');
      if (eq > 0) {
        fields.put(part.substring(0, eq), part.substring(eq + 1));
      }
    }
    return fields;
  }
}
