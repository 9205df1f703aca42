package io.strata.docker;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The checkout under test, and the tools of the offline checks of docker/ (Helm,
 * kubernetes-validate, hadolint and compose-config), which bin/setup installs under
 * {@code STRATA_TOOLS_DIR}, by default {@code ~/.cache/strata/tools}, shared by every checkout
 * of the machine.
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
    Path tools = env != null && !env.isBlank() ? Path.of(env)
        : Path.of(System.getProperty("user.home"), ".cache/strata/tools");
    Path p = tools.resolve(relative);
    if (!Files.isExecutable(p)) {
      fail(relative + " is not installed at " + p + ": run bin/setup, which installs Helm,"
          + " compose-config, kubernetes-validate and hadolint under " + tools
          + " (or set STRATA_TOOLS_DIR to where they are)");
    }
    return p;
  }
}
