package io.strata.shell.fs;

import io.strata.client.FileSystem;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import picocli.CommandLine.Option;

/**
 * A subcommand of {@code strata fs}: runs against the shell's file system client and prints to its
 * output. Failures propagate as exceptions and become one line on stderr. {@code -h} is left free
 * for human-readable sizes, so help is {@code --help} only.
 */
abstract class FsAction implements Callable<Integer> {
  @Option(names = "--help", usageHelp = true, description = "Show this help and exit.")
  boolean help;

  final ShellContext ctx;

  FsAction(ShellContext ctx) {
    this.ctx = ctx;
  }

  FileSystem fs() {
    return ctx.fs();
  }

  PrintStream out() {
    return ctx.out();
  }

  @Override
  public final Integer call() throws Exception {
    run();
    return 0;
  }

  abstract void run() throws Exception;
}
