package io.strata.shell;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;

/**
 * The logging of a {@code strata} command, set up in code: what {@code logback.xml} of this module
 * says (client warnings on stderr, {@code STRATA_LOG_LEVEL} for more), without parsing XML, which
 * costs a one-shot command a noticeable part of its start-up. It applies only to a process started
 * by {@link StrataShell#main} with no {@code logback.configurationFile} of its own; anything else
 * that has this module on its classpath (tests, other processes) is configured as logback would
 * without it.
 */
public final class ShellLogging extends ContextAwareBase implements Configurator {
  private static volatile boolean shellProcess;

  /** Called first thing by the command line's main, before anything logs. */
  static void useForThisProcess() {
    shellProcess = true;
  }

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (!shellProcess || System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern("%d{HH:mm:ss.SSS} %-5level %logger{24} - %msg%n");
    encoder.start();
    ConsoleAppender<ILoggingEvent> err = new ConsoleAppender<>();
    err.setContext(context);
    err.setName("ERR");
    err.setTarget("System.err");
    err.setEncoder(encoder);
    err.start();
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.ERROR);
    root.addAppender(err);
    String level = System.getenv("STRATA_LOG_LEVEL");
    context.getLogger("io.strata").setLevel(Level.toLevel(level, Level.WARN));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }
}
