package io.strata.shell.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The pid file of a process started by {@code strata local up}. A pid counts as running only when
 * that process is alive and its command line names the expected main class, so a stale file whose
 * pid was reused by another program is never mistaken for Strata.
 */
final class PidFile {
  private final Path file;
  private final String mainClass;

  PidFile(Path file, String mainClass) {
    this.file = file;
    this.mainClass = mainClass;
  }

  Path path() {
    return file;
  }

  boolean exists() {
    return Files.exists(file);
  }

  /** The process this file names, when it is alive and is the expected program. */
  Optional<ProcessHandle> running() throws IOException {
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(this::isExpected);
  }

  private boolean isExpected(ProcessHandle h) {
    // /proc has the whole command line; ProcessHandle.Info cuts it at 4 KiB, which a long
    // classpath before the main class exceeds.
    Path proc = Path.of("/proc", Long.toString(h.pid()), "cmdline");
    try {
      if (Files.isReadable(proc)) {
        return new String(Files.readAllBytes(proc), StandardCharsets.UTF_8).contains(mainClass);
      }
    } catch (IOException e) {
      // Gone or not ours to read: decide from what the JDK can tell.
    }
    // Without a readable command line (another user's process) the pid file is trusted.
    return h.info().commandLine().map(c -> c.contains(mainClass)).orElse(true);
  }

  void write(long pid) throws IOException {
    Files.createDirectories(file.getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, pid + "\n", StandardCharsets.UTF_8);
    Files.move(
        tmp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  void delete() throws IOException {
    Files.deleteIfExists(file);
  }
}
