package io.strata.fuse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** Runs a command line tool against a mount in tests, bounded in time. */
final class Commands {
  record Run(int exit, String out, String err) {}

  private Commands() {}

  /** Runs {@code cmd}, its output captured in files under {@code dir}; fails after 120 s. */
  static Run run(Path dir, String... cmd) throws Exception {
    return run(dir, Duration.ofSeconds(120), cmd);
  }

  /** Runs {@code cmd}, its output captured in files under {@code dir}; fails after limit. */
  static Run run(Path dir, Duration limit, String... cmd) throws Exception {
    Path out = Files.createTempFile(dir, "cmd", ".out");
    Path err = Files.createTempFile(dir, "cmd", ".err");
    Process p =
        new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", cmd) + " hung for " + limit.toSeconds() + " s");
    }
    return new Run(
        p.exitValue(),
        Files.readString(out, StandardCharsets.UTF_8),
        Files.readString(err, StandardCharsets.UTF_8));
  }
}
