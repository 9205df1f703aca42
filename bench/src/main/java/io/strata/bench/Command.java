package io.strata.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An external program run to its end within a time limit (tar, git, sync). Its output and errors go
 * to files of a log folder, so a program that prints thousands of error lines neither blocks on a
 * full pipe nor fills the benchmark's memory. Past the limit the program and its children are
 * killed and the result says so.
 */
final class Command {
  private static final AtomicInteger NEXT = new AtomicInteger();

  /** Error lines kept in a result; the rest are only counted. */
  private static final int KEPT_ERRORS = 20;

  private final Path logs;
  private final Map<String, String> env;

  /**
   * @param logs the folder of the programs' output files
   * @param env variables set for every program, on top of this process's
   */
  Command(Path logs, Map<String, String> env) {
    this.logs = logs;
    this.env = env;
  }

  /**
   * How a program ended: its exit code (-1 when it was killed at the limit), its whole standard
   * output, the first error lines and how many there were, and the seconds it ran.
   */
  record Result(
      int exit,
      String out,
      List<String> errors,
      long errorLines,
      double seconds,
      boolean timedOut) {
    boolean ok() {
      return exit == 0;
    }
  }

  /** Runs {@code cmd} in {@code dir} (null: the current folder) for at most {@code limit}. */
  Result run(List<String> cmd, Path dir, Duration limit) throws IOException, InterruptedException {
    int n = NEXT.incrementAndGet();
    Path out = logs.resolve("cmd-" + n + ".out");
    Path err = logs.resolve("cmd-" + n + ".err");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    if (dir != null) {
      pb.directory(dir.toFile());
    }
    pb.environment().putAll(env);
    long start = System.nanoTime();
    Process p = pb.start();
    p.getOutputStream().close();
    boolean ended = p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
    double seconds = (System.nanoTime() - start) / 1e9;
    if (!ended) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      // A program stuck in a FUSE call may not end at once; the mount's undoing frees it.
      p.waitFor(10, TimeUnit.SECONDS);
    }
    List<String> errors;
    long errorLines;
    // Readers, not Files.lines: they replace bytes that are not UTF-8 instead of throwing.
    try (BufferedReader lines = reader(err)) {
      errors = new ArrayList<>();
      errorLines = 0;
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        if (errorLines++ < KEPT_ERRORS) {
          errors.add(line);
        }
      }
    }
    StringBuilder stdout = new StringBuilder();
    try (BufferedReader lines = reader(out)) {
      char[] buf = new char[8192];
      for (int k = lines.read(buf); k > 0; k = lines.read(buf)) {
        stdout.append(buf, 0, k);
      }
    }
    Files.deleteIfExists(out);
    Files.deleteIfExists(err);
    return new Result(
        ended ? p.exitValue() : -1, stdout.toString(), errors, errorLines, seconds, !ended);
  }

  private static BufferedReader reader(Path file) throws IOException {
    return new BufferedReader(
        new InputStreamReader(Files.newInputStream(file), StandardCharsets.UTF_8));
  }

  /** Runs {@code cmd} and throws, with its first error line, unless it exits with 0. */
  String check(List<String> cmd, Path dir, Duration limit)
      throws IOException, InterruptedException {
    Result r = run(cmd, dir, limit);
    if (!r.ok()) {
      throw new IllegalStateException(
          String.join(" ", cmd)
              + " failed ("
              + (r.timedOut() ? "killed after " + limit.toSeconds() + " s" : "exit " + r.exit())
              + "): "
              + String.join("\n", r.errors()));
    }
    return r.out();
  }
}
