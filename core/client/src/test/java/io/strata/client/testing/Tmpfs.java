package io.strata.client.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real small file system for tests of what a full disk does: a tmpfs mounted on a folder (the
 * tests run as root). Shared through this module's test jar by the master's and the worker's tests.
 */
public final class Tmpfs {
  private Tmpfs() {}

  /** Mounts a tmpfs of {@code size} (as mount(8) takes it, such as "2m") on {@code folder}. */
  public static void mount(Path folder, String size) throws Exception {
    run("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", folder.toString());
  }

  public static void unmount(Path folder) throws Exception {
    run("umount", folder.toString());
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", command) + " did not end");
    assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
  }
}
