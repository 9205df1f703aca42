package io.strata.shell.fs;

import io.strata.common.error.StrataException;
import io.strata.proto.MountInfo;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs mount [PATH URI [--option k=v]... [--readonly]]}; with no arguments, lists the
 * mounts: path, under-store URI, ro/rw and options, secret values masked by the master.
 */
@Command(
    name = "mount",
    description = {
      "Mount an under store at a new path, or list mounts.",
      "Example: strata fs mount /datasets s3://bucket/prefix --option s3.region=eu-west-1"
    })
final class MountCommand extends FsAction {
  @Parameters(index = "0", paramLabel = "PATH", arity = "0..1")
  String path;

  @Parameters(
      index = "1",
      paramLabel = "URI",
      arity = "0..1",
      description = "Under-store URI, such as file:///data or s3://bucket/prefix.")
  String uri;

  @Option(
      names = "--option",
      paramLabel = "KEY=VALUE",
      description = {
        "An option of the under store (repeatable), or sync.interval=never|always"
            + "|DURATION: how old Strata's view of the mount may be before it checks the store.",
        "Secret values (names with secret, password, token, credential or key) are listed as"
            + " ******."
      })
  Map<String, String> options = new LinkedHashMap<>();

  @Option(names = "--readonly", description = "Mount read-only.")
  boolean readOnly;

  MountCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    if (path == null) {
      if (!options.isEmpty() || readOnly) {
        throw new UsageException("mount needs PATH and URI with --option or --readonly");
      }
      list(fs().listMounts());
      return;
    }
    if (uri == null) {
      throw new UsageException("mount needs both PATH and URI (or no argument to list mounts)");
    }
    MountInfo m = fs().mount(path, uri, options, readOnly);
    out()
        .println(
            "Mounted "
                + m.getUfsUri()
                + " at "
                + m.getPath()
                + (m.getReadOnly() ? " (read-only)" : ""));
  }

  private void list(List<MountInfo> mounts) {
    int width = mounts.stream().mapToInt(m -> m.getPath().length()).max().orElse(4);
    for (MountInfo m : mounts) {
      String opts =
          m.getOptionsMap().entrySet().stream()
              .sorted(Map.Entry.comparingByKey())
              .map(e -> e.getKey() + "=" + e.getValue())
              .collect(Collectors.joining(","));
      out()
          .println(
              String.format(
                  "%-" + width + "s  %s  %s%s",
                  m.getPath(),
                  m.getUfsUri(),
                  m.getReadOnly() ? "ro" : "rw",
                  opts.isEmpty() ? "" : "  " + opts));
    }
  }
}
