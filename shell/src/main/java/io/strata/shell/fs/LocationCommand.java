package io.strata.shell.fs;

import io.strata.client.FileSystem;
import io.strata.common.WorkerHashing;
import io.strata.common.error.StrataException;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.shell.Format;
import io.strata.shell.ShellContext;
import io.strata.shell.UsageException;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code strata fs location PATH}: for each block, its id, offset and length, the workers that hold
 * it (with tier) and its home worker, the live worker that block ids hash to.
 */
@Command(
    name = "location",
    description = "Show where each block of a file is cached and" + " which worker is its home.")
final class LocationCommand extends FsAction {
  @Parameters(paramLabel = "PATH")
  String path;

  LocationCommand(ShellContext ctx) {
    super(ctx);
  }

  @Override
  void run() throws StrataException {
    FileSystem.FileBlocks r = fs().getFileBlocks(path);
    FileInfo f = r.file();
    if (f.getDirectory()) {
      throw new UsageException("Path is a directory: " + f.getPath() + " (location takes a file)");
    }
    List<WorkerInfo> live =
        fs().getWorkers().stream().filter(w -> w.getState() == WorkerState.WORKER_LIVE).toList();
    out()
        .println(
            f.getPath()
                + ": "
                + Format.human(f.getLength())
                + " in "
                + r.blocks().size()
                + (r.blocks().size() == 1 ? " block of " : " blocks of ")
                + Format.human(f.getBlockSize())
                + ", "
                + Format.percent(f.getCachedBytes(), f.getLength())
                + " cached");
    for (BlockInfo b : r.blocks()) {
      WorkerInfo home = WorkerHashing.pick(b.getBlockId(), live, WorkerInfo::getWorkerId);
      String holders =
          b.getLocationsList().isEmpty()
              ? "not cached"
              : b.getLocationsList().stream()
                  .map(LocationCommand::describe)
                  .collect(Collectors.joining(", "));
      out()
          .println(
              String.format(
                  "block %d  offset %d  length %d", b.getBlockId(), b.getOffset(), b.getLength()));
      out().println("  cached on: " + holders);
      out()
          .println(
              "  home:      "
                  + (home == null
                      ? "no live worker"
                      : "worker " + home.getWorkerId() + " " + address(home.getAddress())));
    }
  }

  private static String describe(BlockLocation loc) {
    return "worker "
        + loc.getWorkerId()
        + " "
        + address(loc.getAddress())
        + (loc.getTier().isEmpty() ? "" : " (" + loc.getTier() + ")");
  }

  private static String address(WorkerAddress a) {
    return a.getHost() + ":" + a.getDataPort();
  }
}
