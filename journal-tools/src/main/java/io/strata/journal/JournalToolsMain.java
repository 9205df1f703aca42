package io.strata.journal;

import io.strata.common.error.ErrorMessages;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;

/**
 * Entry point of {@code strata journal ...} (the launcher passes the words after {@code journal}).
 * Failures are one line on stderr, {@code strata journal: <message>}; a stack trace only with
 * {@code STRATA_DEBUG=1}.
 *
 * <p>Exit codes: {@link #OK}, {@link #DAMAGED}, {@link #USAGE}, {@link #IN_USE}, {@link #REFUSED}.
 */
public final class JournalToolsMain {
  /** The command did its job and found no damage. */
  public static final int OK = 0;

  /** Damage was found, or a file could not be read. */
  public static final int DAMAGED = 1;

  /** Bad arguments, or a folder that is not a journal or backup folder. */
  public static final int USAGE = 2;

  /** A running master holds the folder. */
  public static final int IN_USE = 3;

  /** A conversion that cannot be done honestly was refused. */
  public static final int REFUSED = 4;

  private JournalToolsMain() {}

  public static void main(String[] args) {
    // Quiet, console-only logging of our own unless the user chose a configuration: the server
    // modules on the classpath bring an INFO-level logback.xml meant for long-running servers.
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "strata-journal-logback.xml");
    }
    PrintWriter out =
        new PrintWriter(
            new BufferedWriter(
                new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16));
    PrintWriter err =
        new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
    System.exit(run(out, err, "1".equals(System.getenv("STRATA_DEBUG")), args));
  }

  /** Runs one command line ({@code dump ...}, {@code verify ...}, ...); returns the exit code. */
  public static int run(PrintWriter out, PrintWriter err, boolean debug, String... args) {
    CommandLine cmd = new CommandLine(new JournalCommand());
    cmd.setCommandName("strata journal");
    cmd.setOut(out).setErr(err);
    cmd.setParameterExceptionHandler(
        (e, a) -> {
          err.println(
              "strata journal: "
                  + e.getMessage()
                  + " (see `"
                  + e.getCommandLine().getCommandSpec().qualifiedName()
                  + " --help`)");
          return USAGE;
        });
    cmd.setExecutionExceptionHandler(
        (e, c, parsed) -> {
          out.flush();
          int code = e instanceof ToolFailure f ? f.exitCode() : DAMAGED;
          String message =
              (e instanceof ToolFailure || e instanceof JournalDamage) && e.getMessage() != null
                  ? e.getMessage()
                  : ErrorMessages.describe(e);
          err.println("strata journal: " + message);
          if (debug) {
            e.printStackTrace(err);
          }
          return code;
        });
    try {
      return cmd.execute(args);
    } finally {
      out.flush();
      err.flush();
    }
  }
}
