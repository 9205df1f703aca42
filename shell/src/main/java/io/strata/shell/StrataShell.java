package io.strata.shell;

import io.strata.common.Version;
import io.strata.common.conf.ConfigException;
import io.strata.common.error.ErrorMessages;
import io.strata.shell.admin.FsAdminCommand;
import io.strata.shell.fs.FsCommand;
import io.strata.shell.fuse.FuseCommand;
import io.strata.shell.local.LocalCommand;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code strata} command line. Every failure is one line on stderr, {@code strata: <message>},
 * with exit code 1, or 2 for a usage error or bad configuration; a stack trace is printed only when
 * the environment has {@code STRATA_DEBUG=1}.
 */
@Command(
    name = "strata",
    mixinStandardHelpOptions = true,
    versionProvider = StrataShell.ReleaseVersion.class,
    description = "Strata, a distributed cache for AI training data.")
public final class StrataShell implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(
        FsCommand.class,
        FsAdminCommand.class,
        LocalCommand.class,
        FuseCommand.class,
        ServerCommands.Master.class,
        ServerCommands.Worker.class,
        ProxyCommand.class,
        ServerCommands.Journal.class);
  }

  private final ShellContext ctx;

  public StrataShell(ShellContext ctx) {
    this.ctx = ctx;
  }

  public static void main(String[] args) {
    prepareProcess();
    int code;
    try (ShellContext ctx = ShellContext.system()) {
      code = run(ctx, args);
    }
    System.exit(code);
  }

  /** What a process of the command line sets up before its first command. */
  static void prepareProcess() {
    ShellLogging.useForThisProcess();
    // Netty (ours and gRPC's shaded copy) registers Flight Recorder events on its first buffer,
    // which loads and initialises JFR: time a one-shot command spends for nothing. A recording
    // asked for with -D...jfr.enabled=true still gets them.
    System.setProperty("io.netty.jfr.enabled", System.getProperty("io.netty.jfr.enabled", "false"));
    System.setProperty(
        "io.grpc.netty.shaded.io.netty.jfr.enabled",
        System.getProperty("io.grpc.netty.shaded.io.netty.jfr.enabled", "false"));
    io.strata.common.rpc.VersionHeaders.setProcessKind("shell");
  }

  /** Runs one command line against a context and returns its exit code. */
  public static int run(ShellContext ctx, String... args) {
    CommandLine cmd;
    try {
      cmd = CommandTree.branch(new StrataShell(ctx), new ContextFactory(ctx), List.of(args));
    } catch (Exception e) {
      // A command class that cannot be built is a bug of this build, not a user's mistake.
      throw new IllegalStateException("cannot build the command line: " + e, e);
    }
    // Paths are UTF-8 in the namespace; printed as such whatever the machine's locale.
    PrintWriter out =
        new PrintWriter(new OutputStreamWriter(ctx.out(), StandardCharsets.UTF_8), true);
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(ctx.err(), StandardCharsets.UTF_8), true);
    cmd.setOut(out).setErr(err);
    boolean debug = "1".equals(ctx.env().get("STRATA_DEBUG"));
    cmd.setParameterExceptionHandler(
        (e, a) -> {
          String help = e.getCommandLine().getCommandSpec().qualifiedName();
          err.println("strata: " + e.getMessage() + " (see `" + help + " --help`)");
          if (debug) {
            e.printStackTrace(err);
          }
          return 2;
        });
    cmd.setExecutionExceptionHandler((e, c, parsed) -> report(ctx, err, e, debug));
    try {
      return cmd.execute(args);
    } finally {
      ctx.out().flush();
    }
  }

  private static int report(ShellContext ctx, PrintWriter err, Exception e, boolean debug) {
    ctx.out().flush();
    Throwable t = ErrorMessages.unwrap(e);
    int code = t instanceof ConfigException || t instanceof UsageException ? 2 : 1;
    String message = code == 2 ? t.getMessage() : ErrorMessages.describe(t);
    err.println("strata: " + message);
    if (debug) {
      t.printStackTrace(err);
    }
    return code;
  }

  @Override
  public Integer call() {
    CommandLine.usage(this, ctx.err());
    return 2;
  }

  /** Builds commands that take the shell context in their constructor. */
  private static final class ContextFactory implements CommandLine.IFactory {
    private final ShellContext ctx;

    ContextFactory(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public <K> K create(Class<K> cls) throws Exception {
      try {
        Constructor<K> c = cls.getDeclaredConstructor(ShellContext.class);
        c.setAccessible(true);
        return c.newInstance(ctx);
      } catch (NoSuchMethodException e) {
        return CommandLine.defaultFactory().create(cls);
      }
    }
  }

  /** Prints the release of this build for {@code --version}. */
  static final class ReleaseVersion implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"Strata " + Version.RELEASE};
    }
  }
}
