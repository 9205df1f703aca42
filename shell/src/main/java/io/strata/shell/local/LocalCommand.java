package io.strata.shell.local;

import io.strata.shell.CommandGroup;
import io.strata.shell.ShellContext;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code strata local up | down | status}: masters, a worker and an S3 proxy here. */
@Command(
    name = "local",
    mixinStandardHelpOptions = true,
    description =
        "Run a single-machine cluster (a master, or three; a worker and an S3 proxy)"
            + " in the background.")
public final class LocalCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(LocalCommand.Up.class, LocalCommand.Down.class, LocalCommand.Status.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }

  /** {@code strata local up}. */
  @Command(
      name = "up",
      mixinStandardHelpOptions = true,
      description = {
        "Start a master (or --masters N of them), a worker and an S3 proxy in the background on"
            + " the embedded defaults and wait until they serve.",
        "The first start writes an S3 access key for the local user to the proxy's credentials"
            + " file (strata.proxy.credentials.file, mode 0600) and prints it.",
        "Any -Dstrata.* option given to strata is passed on to them."
      })
  static final class Up implements Callable<Integer> {
    private final ShellContext ctx;

    @picocli.CommandLine.Option(
        names = "--no-proxy",
        description = "Start the master and the worker only.")
    boolean noProxy;

    @picocli.CommandLine.Option(
        names = "--proxy-tls",
        description = {
          "Serve the S3 proxy over HTTPS with a self-signed certificate for 127.0.0.1 and"
              + " localhost, made by openssl into ${strata.home}/conf/proxy-tls/ (cert.pem,"
              + " key.pem) the first time and reused after; prints how clients trust it.",
          "Applies to a proxy this start launches; without the flag the proxy serves HTTP."
        })
    boolean proxyTls;

    @picocli.CommandLine.Option(
        names = "--masters",
        paramLabel = "N",
        description = {
          "How many masters: 1 (the default the first time) or an odd number up to 7, which"
              + " replicate one journal and elect a leader; master i serves on the configured"
              + " ports plus 10 x (i - 1), with its folders in ${strata.home}/master-i/.",
          "Without it, as many as the last `local up` started."
        })
    Integer masters;

    @picocli.CommandLine.Option(
        names = "--restore",
        paramLabel = "BACKUP",
        description =
            "A backup folder (from `strata fsadmin backup`) every master whose"
                + " journal is empty starts from.")
    java.nio.file.Path restore;

    Up(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return LocalCluster.standard(ctx, !noProxy).up(masters, restore, proxyTls);
    }
  }

  /** {@code strata local down}. */
  @Command(
      name = "down",
      mixinStandardHelpOptions = true,
      description = "Stop the proxy, worker and masters started by `strata local up`.")
  static final class Down implements Callable<Integer> {
    private final ShellContext ctx;

    Down(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return LocalCluster.standard(ctx, true).down();
    }
  }

  /** {@code strata local status}. */
  @Command(
      name = "status",
      mixinStandardHelpOptions = true,
      description =
          "Say whether the local masters, worker and proxy are running, and which"
              + " master leads.")
  static final class Status implements Callable<Integer> {
    private final ShellContext ctx;

    Status(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      return LocalCluster.standard(ctx, true).status();
    }
  }
}
