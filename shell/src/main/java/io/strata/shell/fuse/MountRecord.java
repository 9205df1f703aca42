package io.strata.shell.fuse;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.Properties;

/**
 * The pid file of one mount process started by {@code strata fuse mount}: its pid, mount point,
 * namespace path and log file, in {@code ${strata.home}/fuse/<name>.pid}. The process counts as
 * alive only when that pid runs FuseMain for this mount point, so a pid reused by another program
 * after a crash is never taken for the mount.
 */
record MountRecord(Path file, long pid, Path mountPoint, String namespacePath, Path log) {
  static final String MAIN_CLASS = "io.strata.fuse.FuseMain";

  /** The record's file name part for a mount point: its path with every odd character as '_'. */
  static String sanitize(Path mountPoint) {
    String s = mountPoint.toString().replaceAll("[^A-Za-z0-9._-]", "_").replaceAll("^_+", "");
    return s.isEmpty() ? "root" : s;
  }

  static Path fileFor(Path dir, Path mountPoint) {
    return dir.resolve(sanitize(mountPoint) + ".pid");
  }

  /** Reads a record; empty when the file is gone or not a record. */
  static Optional<MountRecord> read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      return Optional.empty();
    }
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    try {
      return Optional.of(
          new MountRecord(
              file,
              Long.parseLong(p.getProperty("pid", "").trim()),
              Path.of(p.getProperty("mountPoint")),
              p.getProperty("path", "/"),
              Path.of(p.getProperty("log", ""))));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  void write() throws IOException {
    Files.createDirectories(file.getParent());
    Properties p = new Properties();
    p.setProperty("pid", Long.toString(pid));
    p.setProperty("mountPoint", mountPoint.toString());
    p.setProperty("path", namespacePath);
    p.setProperty("log", log.toString());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      p.store(w, "strata fuse mount");
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  void delete() throws IOException {
    Files.deleteIfExists(file);
  }

  /** The mount process, when it is alive and is FuseMain serving this mount point. */
  Optional<ProcessHandle> process() {
    return ProcessHandle.of(pid).filter(ProcessHandle::isAlive).filter(this::isMountProcess);
  }

  private boolean isMountProcess(ProcessHandle h) {
    // /proc has the whole command line; ProcessHandle.Info cuts it at 4 KiB, which the
    // classpath before the main class exceeds.
    Path proc = Path.of("/proc", Long.toString(h.pid()), "cmdline");
    try {
      String cmd = new String(Files.readAllBytes(proc), StandardCharsets.UTF_8);
      return cmd.contains(MAIN_CLASS) && cmd.contains(mountPoint.toString());
    } catch (IOException e) {
      return h.info().commandLine().map(c -> c.contains(MAIN_CLASS)).orElse(true);
    }
  }
}
