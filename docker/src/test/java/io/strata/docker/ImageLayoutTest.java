package io.strata.docker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.docker.DeploymentTools.Run;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The container image, as far as this machine can try it without a container engine: its Dockerfile
 * passes the linter, and its files, laid out by the same script the Dockerfile runs, start a master
 * and a worker as the image's user and a FUSE mount as root through the image's entry point, with
 * the image's environment (docker/check-image-layout).
 */
class ImageLayoutTest {
  private static final Path REPO = DeploymentTools.repositoryRoot();

  @Test
  void theLaidOutImageStartsAClusterAndAMountThroughItsEntryPoint() throws Exception {
    Run run =
        DeploymentTools.run(
            REPO,
            Map.of(),
            List.of(REPO.resolve("docker/check-image-layout").toString()),
            Duration.ofMinutes(5));
    assertEquals(0, run.exit(), run.output());
    for (String step :
        List.of(
            "ok: master (uid 1000) answers /health",
            "ok: worker (uid 1000) answers /health",
            "lists the worker strata-image-check as live",
            "ok: FUSE mount (uid 0) at /mnt/strata answers /health",
            "ok: master, worker and mount publish their resident memory on /metrics",
            "ok: a file of the under store reads back through the mount",
            "ok: a file written through the mount is in the under store at close",
            "ok: SIGTERM to the mount's entry point unmounts /mnt/strata",
            "ok: the worker and the master exit on SIGTERM")) {
      assertTrue(run.output().contains(step), "missing \"" + step + "\" in:\n" + run.output());
    }
  }

  @Test
  void theDockerfilePassesTheLinter() throws Exception {
    Path hadolint = DeploymentTools.tool("venv/bin/hadolint");
    Run run =
        DeploymentTools.run(
            REPO,
            Map.of(),
            List.of(
                hadolint.toString(), "--no-color", REPO.resolve("docker/Dockerfile").toString()),
            Duration.ofMinutes(1));
    assertEquals(0, run.exit(), "hadolint found:\n" + run.output());
  }
}
