package io.strata.shell;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code strata master} and {@code strata worker}: their {@code start} runs a server in the
 * foreground and is handled by the launcher script (bin/strata) before Java starts. These entries
 * exist so that {@code --help} lists them; reaching them means the launcher was not used.
 */
public final class ServerCommands {
  private ServerCommands() {}

  /** {@code strata master}. */
  @Command(
      name = "master",
      mixinStandardHelpOptions = true,
      description = "Run the master (the namespace and block locations).")
  public static final class Master implements Callable<Integer>, CommandGroup {
    @Spec CommandSpec spec;

    @Override
    public List<Class<?>> subcommands() {
      return List.of(Start.class);
    }

    @Override
    public Integer call() {
      spec.commandLine().usage(spec.commandLine().getErr());
      return 2;
    }

    /** {@code strata master start}. */
    @Command(
        name = "start",
        mixinStandardHelpOptions = true,
        description = "Start a master in the foreground (run by bin/strata).")
    static final class Start implements Callable<Integer> {
      @Override
      public Integer call() {
        throw new UsageException(
            "`strata master start` is run by the launcher: use bin/strata" + " master start");
      }
    }
  }

  /** {@code strata worker}. */
  @Command(
      name = "worker",
      mixinStandardHelpOptions = true,
      description = "Run a worker (caches and serves blocks).")
  public static final class Worker implements Callable<Integer>, CommandGroup {
    @Spec CommandSpec spec;

    @Override
    public List<Class<?>> subcommands() {
      return List.of(Start.class);
    }

    @Override
    public Integer call() {
      spec.commandLine().usage(spec.commandLine().getErr());
      return 2;
    }

    /** {@code strata worker start}. */
    @Command(
        name = "start",
        mixinStandardHelpOptions = true,
        description = "Start a worker in the foreground (run by bin/strata).")
    static final class Start implements Callable<Integer> {
      @Override
      public Integer call() {
        throw new UsageException(
            "`strata worker start` is run by the launcher: use bin/strata" + " worker start");
      }
    }
  }

  /**
   * {@code strata journal}: listed here so that {@code strata --help} names it; the launcher runs
   * it on the journal-tools module's classpath.
   */
  @Command(
      name = "journal",
      mixinStandardHelpOptions = true,
      description =
          "Offline tools for a copy of a master's journal folder or a backup: dump,"
              + " verify, convert (docs/journal-tools.md; run by bin/strata).")
  public static final class Journal implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new UsageException(
          "`strata journal` is run by the launcher: use bin/strata journal"
              + " dump|verify|convert DIR");
    }
  }
}
