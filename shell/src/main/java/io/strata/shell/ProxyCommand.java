package io.strata.shell;

import io.strata.common.auth.ProxyCredentials;
import io.strata.common.conf.ProxyKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code strata proxy}: {@code start} runs the S3 proxy in the foreground (handled by the launcher,
 * bin/strata, before Java starts); {@code credentials} shows the access keys the proxy accepts and
 * adds new ones.
 */
@Command(
    name = "proxy",
    mixinStandardHelpOptions = true,
    description = "Run the S3 proxy, or show and add its access keys.")
public final class ProxyCommand implements Callable<Integer>, CommandGroup {
  @Override
  public List<Class<?>> subcommands() {
    return List.of(ProxyCommand.Start.class, ProxyCommand.Credentials.class);
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return 2;
  }

  /** {@code strata proxy start}. */
  @Command(
      name = "start",
      mixinStandardHelpOptions = true,
      description = "Start an S3 proxy in the foreground (run by bin/strata).")
  static final class Start implements Callable<Integer> {
    @Override
    public Integer call() {
      throw new UsageException(
          "`strata proxy start` is run by the launcher: use bin/strata" + " proxy start");
    }
  }

  /** {@code strata proxy credentials [--add USER]}. */
  @Command(
      name = "credentials",
      mixinStandardHelpOptions = true,
      description = {
        "Print the access keys the S3 proxy accepts (strata.proxy.credentials.file), one"
            + " 'access-key secret-key user' a line.",
        "With --add, first generate a new key pair for a Strata user and add it to the file"
            + " (created with mode 0600); the proxy picks it up within a second."
      })
  static final class Credentials implements Callable<Integer> {
    private final ShellContext ctx;

    @Option(
        names = "--add",
        paramLabel = "USER",
        description = "Generate an access key and secret for this Strata user and add them.")
    String addUser;

    Credentials(ShellContext ctx) {
      this.ctx = ctx;
    }

    @Override
    public Integer call() throws Exception {
      Path file = Path.of(ctx.conf().getString(ProxyKeys.CREDENTIALS_FILE));
      if (addUser != null) {
        if (addUser.isBlank() || addUser.chars().anyMatch(Character::isWhitespace)) {
          throw new UsageException("--add needs a user name without spaces");
        }
        ProxyCredentials.Credential c = ProxyCredentials.generate(addUser);
        Files.createDirectories(file.toAbsolutePath().getParent());
        ProxyCredentials.append(file, c);
        ctx.out().println("Added an access key for " + addUser + " to " + file);
      }
      if (!Files.exists(file)) {
        ctx.err()
            .println(
                "strata: no credentials file at "
                    + file
                    + ": `strata local up`"
                    + " writes one, or add a key with `strata proxy credentials --add USER`");
        return 1;
      }
      ProxyCredentials all = ProxyCredentials.load(file);
      ctx.out().println("# " + file + " (" + ProxyCredentials.LINE_FORMAT + ")");
      for (ProxyCredentials.Credential c : all.all()) {
        ctx.out().println(c.accessKey() + " " + c.secretKey() + " " + c.user());
      }
      return 0;
    }
  }
}
