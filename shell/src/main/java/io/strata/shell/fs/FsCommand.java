package io.strata.shell.fs;

import io.strata.shell.CommandGroup;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata fs}: file system commands on Strata paths. */
@Command(
    name = "fs",
    mixinStandardHelpOptions = true,
    description = {
      "File system commands.",
      "Paths are Strata paths (/data/x) unless written local:/abs/path or file:///abs/path,"
          + " which name files of this machine (cp only)."
    })
public final class FsCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(
        LsCommand.class,
        StatCommand.class,
        CatCommand.class,
        HeadCommand.class,
        TailCommand.class,
        CpCommand.class,
        MkdirCommand.class,
        RmCommand.class,
        MvCommand.class,
        MountCommand.class,
        UnmountCommand.class,
        LocationCommand.class,
        FreeCommand.class,
        DuCommand.class,
        CountCommand.class,
        LoadCommand.class,
        SetTtlCommand.class,
        UnsetTtlCommand.class,
        SetWriteTypeCommand.class,
        UnsetWriteTypeCommand.class,
        PersistCommand.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }
}
