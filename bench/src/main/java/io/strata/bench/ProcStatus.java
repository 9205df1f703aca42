package io.strata.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads memory figures of a process from {@code /proc/PID/status}. */
final class ProcStatus {
  private ProcStatus() {}

  /** A kB field of /proc/PID/status (e.g. {@code "VmRSS:"}) in bytes; 0 when unreadable. */
  static long bytes(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return 0;
    }
    return 0;
  }
}
