package io.strata.docker;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The checkout under test, and the tools of the offline checks of docker/ (Helm,
 * kubernetes-validate, hadolint and compose-config), which bin/setup installs under {@code
 * STRATA_TOOLS_DIR}, by default {@code ~/.cache/strata/tools}, shared by every checkout of the
 * machine.
 */
final class DeploymentTools {
  private DeploymentTools() {}

  /** The root of the checkout these tests run in: the folder above them holding bin/strata. */
  static Path repositoryRoot() {
    for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin/strata")) && Files.isDirectory(p.resolve("docker"))) {
        return p;
      }
    }
    throw new IllegalStateException("bin/strata not found above " + Path.of("").toAbsolutePath());
  }

  /** The tool at {@code relative} in the tools folder; fails the test when it is missing. */
  static Path tool(String relative) {
    String env = System.getenv("STRATA_TOOLS_DIR");
    Path tools =
        env != null && !env.isBlank()
            ? Path.of(env)
            : Path.of(System.getProperty("user.home"), ".cache/strata/tools");
    Path p = tools.resolve(relative);
    if (!Files.isExecutable(p)) {
      fail(
          relative
              + " is not installed at "
              + p
              + ": run bin/setup, which installs Helm,"
              + " compose-config, kubernetes-validate and hadolint under "
              + tools
              + " (or set STRATA_TOOLS_DIR to where they are)");
    }
    return p;
  }

  /** A finished command: its exit code, its standard output and its errors. */
  record Run(int exit, String stdout, String stderr) {
    String output() {
      return stdout + stderr;
    }
  }

  /**
   * Runs {@code cmd} in {@code dir} with {@code env} added to its environment, its output in files
   * (no pipe to fill). One that outlives {@code timeout} is killed with every process it started,
   * and fails the test.
   */
  static Run run(Path dir, Map<String, String> env, List<String> cmd, Duration timeout)
      throws IOException, InterruptedException {
    Path out = Files.createTempFile("strata-checks-", ".out");
    Path err = Files.createTempFile("strata-checks-", ".err");
    try {
      ProcessBuilder pb =
          new ProcessBuilder(cmd)
              .directory(dir.toFile())
              .redirectOutput(out.toFile())
              .redirectError(err.toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        fail(
            String.join(" ", cmd)
                + " did not finish within "
                + timeout
                + ":\n"
                + Files.readString(out, StandardCharsets.UTF_8)
                + Files.readString(err, StandardCharsets.UTF_8));
      }
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
