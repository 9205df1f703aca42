package io.strata.shell.fs;

import java.io.Console;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.util.function.LongSupplier;

/**
 * A status line on stderr that changes over time. On a terminal it is one line redrawn in place
 * with {@code \r} (cut to the terminal's width when that is known, so that it never wraps);
 * elsewhere (a log file, a pipe) it is a plain line printed at most once per {@link
 * #PLAIN_INTERVAL_NANOS}, so that logs stay short. Notes printed between updates go on lines of
 * their own and the status line is drawn again below them. Not thread-safe.
 */
final class StatusLine {
  static final long PLAIN_INTERVAL_NANOS = 2_000_000_000L;

  private final PrintStream err;
  private final boolean terminal;
  private final int width;
  private final LongSupplier nanoClock;
  private String last;
  private int drawn;
  private long lastPrinted;
  private boolean printedOnce;

  /**
   * @param terminal redraw in place (true) or print plain lines (false)
   * @param width the terminal's columns; 0 when unknown
   * @param nanoClock the clock that spaces plain lines
   */
  StatusLine(PrintStream err, boolean terminal, int width, LongSupplier nanoClock) {
    this.err = err;
    this.terminal = terminal;
    this.width = width;
    this.nanoClock = nanoClock;
  }

  /** Whether this process writes to an interactive terminal. */
  static boolean onTerminal() {
    Console console = System.console();
    if (console == null) {
      return false;
    }
    // From Java 22 on a console exists even when redirected; isTerminal() then tells.
    try {
      Method isTerminal = Console.class.getMethod("isTerminal");
      return (Boolean) isTerminal.invoke(console);
    } catch (ReflectiveOperationException e) {
      return true;
    }
  }

  /** The terminal's width from {@code COLUMNS}, or 0 when it is not set or not a number. */
  static int columns(String value) {
    if (value == null) {
      return 0;
    }
    try {
      return Math.max(0, Integer.parseInt(value.trim()));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** Shows the line: redrawn at once on a terminal, else printed if enough time has passed. */
  void show(String line) {
    last = line;
    if (terminal) {
      draw(line);
      return;
    }
    long now = nanoClock.getAsLong();
    if (!printedOnce || now - lastPrinted >= PLAIN_INTERVAL_NANOS) {
      err.println(line);
      printedOnce = true;
      lastPrinted = now;
    }
  }

  /** Prints a message on a line of its own, above the status line. */
  void note(String message) {
    if (terminal && drawn > 0) {
      err.print("\r" + " ".repeat(drawn) + "\r");
      drawn = 0;
    }
    err.println(message);
    if (terminal && last != null) {
      draw(last);
    }
  }

  /** Ends the status line, leaving its last state on screen, before other output follows. */
  void finish() {
    if (terminal && drawn > 0) {
      err.println();
      drawn = 0;
    }
    err.flush();
  }

  private void draw(String line) {
    String text = width > 1 && line.length() >= width ? line.substring(0, width - 1) : line;
    err.print("\r" + text + " ".repeat(Math.max(0, drawn - text.length())));
    err.flush();
    drawn = text.length();
  }
}
