package io.strata.bench;

import io.strata.tests.MultiProcessCluster;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Times one-shot {@code strata} commands as a script runs them, each a new JVM through {@code
 * bin/strata}: {@code --version}, {@code fs ls /} and {@code fs stat} of a file, against a
 * one-worker cluster on loopback. Each runs with the command line's class archive and without it
 * ({@code STRATA_SHELL_CDS=0}), and, with {@code --compare DIR}, through another checkout's {@code
 * DIR/bin/strata} (an older build); the baseline, in the same run, is a bare JVM start, {@code java
 * -version}. Runs are interleaved so that a machine that gets busier slows every row alike. Usage:
 * {@code bench/run cli [--runs 10] [--compare DIR]}.
 */
final class CliBench {
  private CliBench() {}

  private record Variant(String name, String launcher, Map<String, String> env) {}

  private record Row(String command, Variant variant, List<String> args) {}

  static void run(Map<String, String> opts) throws Exception {
    int runs = Math.min(100, Integer.parseInt(opts.getOrDefault("runs", "10")));
    Path repo = Path.of(System.getProperty("user.dir"));
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-cli");
    try (MultiProcessCluster cluster = MultiProcessCluster.builder(base).workers(1).start()) {
      Files.createDirectories(cluster.underStoreRoot().resolve("bench"));
      Files.write(cluster.underStoreRoot().resolve("bench/file"), new byte[4096]);
      // An empty configuration folder: the checkout's conf/ must not point commands elsewhere.
      Path conf = Files.createDirectories(base.resolve("shell-conf"));
      Map<String, String> env =
          Map.of(
              "STRATA_CONF_DIR",
              conf.toString(),
              "STRATA_HOME",
              base.resolve("shell-home").toString());
      List<Variant> variants = new ArrayList<>();
      variants.add(new Variant("class archive", repo.resolve("bin/strata").toString(), env));
      Map<String, String> off = new LinkedHashMap<>(env);
      off.put("STRATA_SHELL_CDS", "0");
      variants.add(new Variant("no class archive", repo.resolve("bin/strata").toString(), off));
      if (opts.containsKey("compare")) {
        Path other = Path.of(opts.get("compare")).toAbsolutePath();
        variants.add(
            new Variant(
                other.getFileName() + " (compared)", other.resolve("bin/strata").toString(), env));
      }
      List<String> conf0 = cluster.configArgs(Map.of());
      List<Row> rows = new ArrayList<>();
      String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      rows.add(
          new Row(
              "java -version (baseline)",
              null,
              List.of(
                  javaBin,
                  "-Xshare:auto",
                  "-XX:TieredStopAtLevel=1",
                  "-XX:+UseSerialGC",
                  "-version")));
      for (String[] command :
          new String[][] {{"--version"}, {"fs", "ls", "/"}, {"fs", "stat", "/bench/file"}}) {
        for (Variant v : variants) {
          List<String> args = new ArrayList<>();
          args.add(v.launcher());
          args.addAll(conf0);
          args.addAll(Arrays.asList(command));
          rows.add(new Row("strata " + String.join(" ", command), v, args));
        }
      }
      Map<Row, double[]> seconds = new LinkedHashMap<>();
      rows.forEach(r -> seconds.put(r, new double[runs]));
      for (Row r : rows) {
        time(r, base); // warm the page cache; not counted
      }
      for (int i = 0; i < runs; i++) {
        for (Row r : rows) {
          seconds.get(r)[i] = time(r, base);
        }
      }
      double baseline = percentile(seconds.get(rows.get(0)), 50);
      Table t = new Table("command", "variant", "runs", "median s", "p90 s", "x baseline");
      for (Row r : rows) {
        double[] s = seconds.get(r);
        t.row(
            r.command(),
            r.variant() == null ? "-" : r.variant().name(),
            runs,
            Table.f2(percentile(s, 50)),
            Table.f2(percentile(s, 90)),
            Table.f1(percentile(s, 50) / baseline));
      }
      System.out.printf(
          "Command-line benchmark: each command a new process, %d runs, against"
              + " a local cluster on 127.0.0.1; %d cores, load average %.1f at the end%n",
          runs,
          Runtime.getRuntime().availableProcessors(),
          java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      System.out.print(t.render());
    } finally {
      ReadBench.deleteTree(base);
    }
  }

  /** Seconds one run of the row's command took; a failed command stops the benchmark. */
  private static double time(Row r, Path base) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(r.args())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(base.resolve("last.err").toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    if (r.variant() != null) {
      pb.environment().putAll(r.variant().env());
    }
    long start = System.nanoTime();
    Process p = pb.start();
    if (!p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(r.command() + " hung for 120s");
    }
    double s = (System.nanoTime() - start) / 1e9;
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          r.command()
              + " ("
              + (r.variant() == null ? "baseline" : r.variant().name())
              + ") failed: "
              + Files.readString(base.resolve("last.err")));
    }
    return s;
  }

  private static double percentile(double[] values, int p) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
