package io.strata.bench;

import io.strata.common.ProcMounts;
import io.strata.shell.Tcmalloc;
import io.strata.shell.fuse.FuseLauncher;
import io.strata.tests.MultiProcessCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One FUSE-mounted folder that the FUSE benchmark reads: a bindfs passthrough of the under-store
 * folder, or the Strata namespace served by a FuseMain JVM started as {@code strata fuse mount}
 * starts it (bounded heap and direct memory, Netty under the JVM's limit, tcmalloc preloaded when
 * installed). A mount is returned only once /proc/mounts lists it; {@link #close()} unmounts with
 * {@code fusermount -u}, falls back to {@code -u -z}, and ends the FuseMain process.
 */
final class BenchMount {

  private final Path point;
  private final Process process;
  private int metricsPort = -1;

  /** A bindfs mount's source folder (null for Strata's), to mount it again. */
  private Path bindfsSource;

  private boolean directIo;

  private BenchMount(Path point, Process process) {
    this.point = point;
    this.process = process;
  }

  Path point() {
    return point;
  }

  long pid() {
    return process.pid();
  }

  /** Fails fast, before any data is generated, when bindfs or fusermount is missing. */
  static void requireTools() throws Exception {
    for (String tool : new String[] {"bindfs", "fusermount"}) {
      Process p;
      try {
        p =
            new ProcessBuilder(tool, "--version")
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
      } catch (IOException e) {
        throw new IllegalStateException(tool + " is not installed; bin/setup installs it");
      }
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /**
   * A bindfs passthrough of {@code source}, served by several threads as Strata's mount is ({@code
   * --multithreaded}), with {@code -o direct_io} when asked and else {@code -o kernel_cache} (the
   * kernel keeps the pages of files it opens again, as Strata's mount lets it for unchanged files).
   */
  static BenchMount bindfs(Path source, Path point, boolean directIo) throws Exception {
    Files.createDirectories(point);
    List<String> cmd =
        new ArrayList<>(
            List.of("bindfs", "--multithreaded", "-o", directIo ? "direct_io" : "kernel_cache"));
    cmd.add(source.toString());
    cmd.add(point.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(
          "bindfs "
              + String.join(" ", cmd)
              + " failed: "
              + new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
              + " (is bindfs installed? bin/setup installs it)");
    }
    awaitMounted(point, null, null);
    BenchMount m = new BenchMount(point, null);
    m.bindfsSource = source;
    m.directIo = directIo;
    return m;
  }

  /** Unmounts this bindfs mount and mounts it again, fresh; replaces it in {@code mounts}. */
  BenchMount remountBindfs(List<BenchMount> mounts) throws Exception {
    mounts.remove(this);
    if (!close()) {
      throw new IllegalStateException("cannot unmount " + point + " to mount it again");
    }
    BenchMount fresh = bindfs(bindfsSource, point, directIo);
    mounts.add(fresh);
    return fresh;
  }

  private static void awaitMounted(Path point, Process p, Path log) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!ProcMounts.isFuseMounted(point)) {
      if (p != null && !p.isAlive()) {
        throw new IllegalStateException(
            "FuseMain for "
                + point
                + " exited with "
                + p.exitValue()
                + "; last lines of "
                + log
                + ":\n"
                + tail(log));
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            point
                + " was not mounted within 60 s"
                + (log == null ? "" : "; last lines of " + log + ":\n" + tail(log)));
      }
      Thread.sleep(50);
    }
  }

  /** Unmounts (fusermount -u, then -u -z) and waits for a FuseMain process to end. */
  boolean close() {
    try {
      if (ProcMounts.isFuseMounted(point) && !fusermount(false)) {
        fusermount(true);
      }
      if (process != null && !process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      }
      return !ProcMounts.isFuseMounted(point);
    } catch (Exception e) {
      System.err.println("cannot unmount " + point + ": " + e);
      if (process != null) {
        process.destroyForcibly();
      }
      return false;
    }
  }

  private boolean fusermount(boolean lazy) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("fusermount", "-u"));
    if (lazy) {
      cmd.add("-z");
    }
    cmd.add(point.toString());
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return false;
    }
    return p.exitValue() == 0;
  }

  /**
   * Unmounts every mount in the list (each tried even when another fails) and removes the ones that
   * went away; true when the list ends empty.
   */
  static boolean closeAll(List<BenchMount> mounts) {
    mounts.removeIf(BenchMount::close);
    return mounts.isEmpty();
  }

  /** Starts Strata mounts as {@code strata fuse mount} does, against one cluster. */
  /**
   * From the FuseMain's metrics endpoint, the counters so far: [0] seconds and [1] count of the
   * read upcalls its own code answered ({@code strata_fuse_upcall_seconds{operation="read"}}), [2]
   * bytes it fetched from workers or under stores, [3] bytes it returned to reads; zeros for a
   * mount that is not Strata's.
   */
  double[] fuseCounters() throws Exception {
    double[] out = new double[4];
    if (metricsPort < 0) {
      return out;
    }
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    for (String line : r.body().split("\n")) {
      if (line.startsWith("#")) {
        continue;
      }
      double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      boolean read = line.contains("operation=\"read\"");
      if (read && line.startsWith("strata_fuse_upcall_seconds_sum")) {
        out[0] = v;
      } else if (read && line.startsWith("strata_fuse_upcall_seconds_count")) {
        out[1] = v;
      } else if (line.startsWith("strata_fuse_read_source_bytes_total")) {
        out[2] = v;
      } else if (line.startsWith("strata_fuse_read_bytes_total")) {
        out[3] = v;
      }
    }
    return out;
  }

  /**
   * From the FuseMain's metrics endpoint, its upcall timers so far ({@code
   * strata_fuse_upcall_seconds{operation=...}}): per operation, [0] seconds spent in the mount's
   * handlers and [1] upcalls; empty for a mount that is not Strata's.
   */
  Map<String, double[]> upcallTimers() throws Exception {
    Map<String, double[]> out = new java.util.TreeMap<>();
    if (metricsPort < 0) {
      return out;
    }
    java.net.http.HttpResponse<String> r =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + metricsPort + "/metrics"))
                    .timeout(java.time.Duration.ofSeconds(10))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    for (String line : r.body().split("\n")) {
      int at = line.indexOf("operation=\"");
      boolean sum = line.startsWith("strata_fuse_upcall_seconds_sum{");
      if (at < 0 || (!sum && !line.startsWith("strata_fuse_upcall_seconds_count{"))) {
        continue;
      }
      String operation = line.substring(at + 11, line.indexOf('"', at + 11));
      double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      out.computeIfAbsent(operation, k -> new double[2])[sum ? 0 : 1] += v;
    }
    return out;
  }

  static final class Launcher {
    private final Path base;
    private final String classpath;
    private final MultiProcessCluster cluster;

    /** Per mount folder name: how it was mounted and its current mount. */
    private final Map<String, Spec> specs = new HashMap<>();

    private record Spec(boolean directIo, boolean shortCircuit, BenchMount current) {}

    private final List<String> fuseConf;

    /**
     * @param fuseConf {@code key=value} settings given to every FuseMain as {@code -D} options
     */
    Launcher(Path base, String classpath, MultiProcessCluster cluster, List<String> fuseConf) {
      this.fuseConf = fuseConf;
      this.base = base;
      this.classpath = classpath;
      this.cluster = cluster;
    }

    /** The {@code --fuse-conf} settings as a map. */
    Map<String, String> settings() {
      return Bench.settings("fuse-conf", String.join(",", fuseConf));
    }

    /** Mounts the namespace root at {@code base/name} with a FuseMain JVM of its own. */
    BenchMount strata(String name, boolean directIo, boolean shortCircuit) throws Exception {
      Path point = Files.createDirectories(base.resolve(name));
      List<String> cmd = new ArrayList<>();
      cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      // The JVM options `strata fuse mount` gives a mount process.
      cmd.addAll(FuseLauncher.jvmOptions(io.strata.common.conf.StrataConfig.load(settings())));
      cmd.addAll(
          cluster.configArgs(
              Map.of("strata.client.short.circuit.enabled", Boolean.toString(shortCircuit))));
      int port;
      try (java.net.ServerSocket free =
          new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        port = free.getLocalPort();
      }
      cmd.add("-Dstrata.fuse.web.port=" + port);
      for (String setting : fuseConf) {
        cmd.add("-D" + setting);
      }
      cmd.addAll(List.of("-cp", classpath, "io.strata.fuse.FuseMain", point.toString(), "/"));
      if (directIo) {
        cmd.addAll(List.of("-o", "direct_io"));
      }
      ProcessBuilder pb = new ProcessBuilder(cmd);
      // The same preload rule as `strata fuse mount`.
      Tcmalloc.preloadInto(pb, System.getenv());
      Path log = cluster.logsDir().resolve("fuse-" + name + ".log");
      Process p =
          pb.redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
              .start();
      p.getOutputStream().close();
      BenchMount m = new BenchMount(point, p);
      m.metricsPort = port;
      try {
        awaitMounted(point, p, log);
      } catch (Exception e) {
        m.close();
        throw e;
      }
      specs.put(name, new Spec(directIo, shortCircuit, m));
      return m;
    }

    /** The mount at {@code base/name} now. */
    BenchMount current(String name) {
      return specs.get(name).current();
    }

    /** Unmounts the mount at {@code base/name} and mounts it again with a fresh FuseMain. */
    BenchMount remount(String name, List<BenchMount> mounts) throws Exception {
      Spec s = specs.get(name);
      BenchMount m = s.current();
      mounts.remove(m);
      if (!m.close()) {
        throw new IllegalStateException("cannot unmount " + m.point() + " to mount it again");
      }
      BenchMount fresh = strata(name, s.directIo(), s.shortCircuit());
      mounts.add(fresh);
      return fresh;
    }
  }

  /**
   * FuseMain's classpath: {@code STRATA_FUSE_CLASSPATH} when set, else the packaged
   * integration/fuse module and its runtime jars, as {@code bin/strata} gives it to {@code strata
   * fuse mount}.
   */
  static String fuseClasspath() throws IOException {
    String env = System.getenv("STRATA_FUSE_CLASSPATH");
    if (env != null && !env.isEmpty()) {
      return env;
    }
    Path target = Path.of("integration/fuse/target").toAbsolutePath();
    if (Files.isDirectory(target.resolve("lib"))) {
      try (Stream<Path> files = Files.list(target)) {
        for (Path f : files.toList()) {
          String name = f.getFileName().toString();
          if (name.startsWith("strata-fuse-")
              && name.endsWith(".jar")
              && !name.contains("-sources")
              && !name.contains("-tests")) {
            return f + ":" + target.resolve("lib") + "/*";
          }
        }
      }
    }
    throw new IllegalStateException(
        "integration/fuse is not built (no jar and lib/ in "
            + target
            + "); build it from the repository root with: mvn -B -q -o package -DskipTests"
            + " -pl integration/fuse -am");
  }

  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(cannot read " + log + ")";
    }
  }
}
