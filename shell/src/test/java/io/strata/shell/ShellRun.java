package io.strata.shell;

import io.strata.common.conf.StrataConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Runs one {@code strata} command in this JVM as a user's shell would, and keeps what it printed:
 * the one way tests of the command line capture its output.
 */
public final class ShellRun {
  private ShellRun() {}

  /** A finished command: its exit code and what it printed (standard output also as bytes). */
  public record Result(int code, String out, byte[] bytes, String err) {}

  /**
   * Runs {@code args} with the configuration {@code conf} (read when the command loads it, so later
   * changes to the map apply), no environment variables and no system properties.
   */
  public static Result run(Map<String, String> conf, String... args) {
    return run(conf, Map.of(), Map.of(), args);
  }

  /**
   * Runs {@code args} with the configuration {@code conf}, the environment {@code env} and the
   * system properties {@code props} the command sees.
   */
  public static Result run(
      Map<String, String> conf,
      Map<String, String> env,
      Map<String, String> props,
      String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code;
    try (ShellContext ctx =
        new ShellContext(
            () -> StrataConfig.load(conf),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            env,
            props)) {
      code = StrataShell.run(ctx, args);
    }
    return new Result(
        code,
        out.toString(StandardCharsets.UTF_8),
        out.toByteArray(),
        err.toString(StandardCharsets.UTF_8));
  }
}
