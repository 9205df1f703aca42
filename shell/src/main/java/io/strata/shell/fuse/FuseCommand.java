package io.strata.shell.fuse;

import io.strata.shell.CommandGroup;
import io.strata.shell.ShellContext;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code strata fuse mount | unmount | status}: Strata folders as local FUSE mounts. */
@Command(
    name = "fuse",
    mixinStandardHelpOptions = true,
    description = "Mount Strata folders as local folders through FUSE (a process per mount).")
public final class FuseCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(FuseCommand.Mount.class, FuseCommand.Unmount.class, FuseCommand.Status.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }

  /** {@code strata fuse mount MOUNTPOINT [--path P] [-o opt,...]... [-f]}. */
  @Command(
      name = "mount",
      mixinStandardHelpOptions = true,
      description = {
        "Mount a Strata folder at MOUNTPOINT (an existing local folder) in a background process"
            + " and wait until the kernel lists the mount.",
        "A stale mount left by a mount process that died is detached first."
      })
  static final class Mount implements Callable<Integer> {
    private final ShellContext ctx;

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "Local folder to mount at.")
    Path mountPoint;

    @Option(
        names = "--path",
        paramLabel = "PATH",
        defaultValue = "/",
        description = "Strata folder shown at the mount point's root (default: ${DEFAULT-VALUE}).")
    String path;

    @Option(
        names = "-o",
        paramLabel = "OPT[,OPT...]",
        description = "libfuse mount options, passed as given, e.g. -o direct_io.")
    List<String> options = new ArrayList<>();

    @Option(names = "-f", description = "Run in the foreground until unmounted or Ctrl-C.")
    boolean foreground;

    @Option(
        names = "--conf",
        paramLabel = "KEY=VALUE",
        description = {
          "A setting of this mount only: any strata.fuse.* key, client key (strata.client.*) or"
              + " common key such as strata.master.hostname; repeatable, e.g."
              + " --conf strata.fuse.metadata.cache.size=1000000. It wins over the configuration"
              + " file, the environment and -D."
        })
    List<String> settings = new ArrayList<>();

    Mount(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return new FuseLauncher(ctx)
          .mount(mountPoint, path, options, foreground, FuseLauncher.parseSettings(settings));
    }
  }

  /** {@code strata fuse unmount MOUNTPOINT}. */
  @Command(
      name = "unmount",
      aliases = "umount",
      mixinStandardHelpOptions = true,
      description = "Unmount a FUSE mount (lazily when busy) and wait for its process to end.")
  static final class Unmount implements Callable<Integer> {
    private final ShellContext ctx;

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "The mounted folder.")
    Path mountPoint;

    Unmount(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return new FuseLauncher(ctx).unmount(mountPoint);
    }
  }

  /** {@code strata fuse status}. */
  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description = {
        "One line per mount started by strata fuse mount: mount point, Strata folder, pid and"
            + " whether it is mounted, stale or not mounted."
      })
  static final class Status implements Callable<Integer> {
    private final ShellContext ctx;

    Status(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return new FuseLauncher(ctx).status();
    }
  }
}
