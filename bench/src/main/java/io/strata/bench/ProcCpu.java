package io.strata.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time of processes and of their threads, read from {@code /proc/PID/stat} and {@code
 * /proc/PID/task/TID/stat} (user + system time, in clock ticks of 10 ms), so that a benchmark row
 * can say which process and which threads spent the machine's cores.
 */
final class ProcCpu {
  private static final double TICK_SECONDS = 0.01;

  private ProcCpu() {}

  /** User + system CPU seconds a process used so far; 0 when unreadable. */
  static double seconds(long pid) {
    return ticks(Path.of("/proc/" + pid + "/stat")) * TICK_SECONDS;
  }

  /**
   * CPU seconds so far of each thread of a process, summed by thread name with its digits replaced
   * by N (so the threads of one pool count together).
   */
  static Map<String, Double> byThread(long pid) {
    Map<String, Double> out = new HashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        String stat = read(t.resolve("stat"));
        if (stat == null) {
          continue;
        }
        String name =
            stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replaceAll("[0-9]+", "N");
        out.merge(name, ticks(stat) * TICK_SECONDS, Double::sum);
      }
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /** The difference of two {@link #byThread} readings, busiest first, as "name 0.42s". */
  static List<String> busiest(Map<String, Double> before, Map<String, Double> after, int n) {
    return after.entrySet().stream()
        .map(e -> Map.entry(e.getKey(), e.getValue() - before.getOrDefault(e.getKey(), 0.0)))
        .filter(e -> e.getValue() > 0)
        .sorted((a, b) -> Double.compare(b.getValue(), a.getValue()))
        .limit(n)
        .map(e -> String.format("%s %.1fs", e.getKey(), e.getValue()))
        .toList();
  }

  private static long ticks(Path stat) {
    String s = read(stat);
    return s == null ? 0 : ticks(s);
  }

  private static long ticks(String stat) {
    // Fields after the command name (which may hold spaces) start at state, field 3.
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    try {
      return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    } catch (RuntimeException e) {
      return 0;
    }
  }

  private static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      return null;
    }
  }
}
