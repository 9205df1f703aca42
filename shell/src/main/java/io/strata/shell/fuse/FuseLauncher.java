package io.strata.shell.fuse;

import io.strata.common.DaemonThreads;
import io.strata.common.PathNames;
import io.strata.common.ProcMounts;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigRegistry;
import io.strata.common.conf.FuseKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.shell.ProcessExits;
import io.strata.shell.ShellContext;
import io.strata.shell.Tcmalloc;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * Runs FUSE mounts of Strata as processes of their own (FuseMain, from the classpath in {@code
 * STRATA_FUSE_CLASSPATH}), keeps one {@link MountRecord} per mount under {@code
 * ${strata.home}/fuse/}, and unmounts them. A mount is reported started only once the kernel lists
 * it in /proc/mounts; one left behind by a process that died is detached with {@code fusermount -u
 * -z} before the folder is mounted again, and one whose process is alive is never mounted over.
 *
 * <p>A background mount writes its own log, rotated by size ({@code strata-fuse-logback-file.xml}
 * of integration/fuse, bounded by {@code strata.fuse.log.max.size} and {@code
 * strata.fuse.log.max.files}); what the JVM itself prints (a crash, an out-of-memory report,
 * libfuse's messages) goes to a small {@code .out} file beside it, emptied at each start.
 */
public final class FuseLauncher {
  static final String CLASSPATH_VARIABLE = "STRATA_FUSE_CLASSPATH";
  static final String JAVA_OPTS_VARIABLE = "STRATA_FUSE_JAVA_OPTS";
  static final String LOG_CONFIGURATION = "strata-fuse-logback-file.xml";
  // FixedWindowRollingPolicy keeps at most 20 rotated files whatever it is asked for.
  private static final int MAX_LOG_FILES = 20;
  private static final int LOG_TAIL_LINES = 30;

  /** strerror(ENOTCONN): the kernel's answer for a mount whose process is gone. */
  private static final String NOT_CONNECTED = "Transport endpoint is not connected";

  // A stat of a mount that hangs cannot be interrupted; daemon threads let the command exit.
  private static final Executor STAT_THREADS =
      Executors.newCachedThreadPool(DaemonThreads.named("strata-fuse-probe"));
  private static final long POLL_MS = 100;

  private final ShellContext ctx;

  /** This mount's own settings ({@code --conf}), over the shell's configuration. */
  private Map<String, String> settings = Map.of();

  private StrataConfig conf;

  public FuseLauncher(ShellContext ctx) {
    this.ctx = ctx;
  }

  /** The shell's configuration with this mount's settings on top. */
  private StrataConfig conf() {
    if (conf == null) {
      conf = settings.isEmpty() ? ctx.conf() : ctx.conf().with(settings);
    }
    return conf;
  }

  /**
   * The {@code KEY=VALUE} settings of {@code --conf}, in order (a key given twice keeps the last
   * value). Only keys a mount reads are taken: {@code strata.fuse.*}, client and common keys; a
   * server's key or a line without '=' is a usage error naming the fix. Values are checked when the
   * configuration is built.
   */
  public static Map<String, String> parseSettings(List<String> settings) {
    Map<String, String> out = new java.util.LinkedHashMap<>();
    for (String s : settings) {
      int eq = s.indexOf('=');
      if (eq <= 0) {
        throw new UsageException(
            "--conf takes KEY=VALUE, not '"
                + s
                + "' (for example --conf "
                + FuseKeys.METADATA_CACHE_SIZE.name()
                + "=1000000)");
      }
      String key = s.substring(0, eq).trim();
      if (ConfigRegistry.find(key) != null
          && !ConfigRegistry.declaredIn(key, FuseKeys.class, ClientKeys.class, CommonKeys.class)) {
        throw new UsageException(
            "--conf "
                + key
                + ": a mount does not read this key (it"
                + " configures "
                + (key.startsWith("strata.master.")
                    ? "the master"
                    : key.startsWith("strata.worker.") ? "workers" : "another process")
                + "); give a"
                + " strata.fuse.*, client or common key, and set "
                + key
                + " where that process"
                + " reads its configuration");
      }
      out.put(key, s.substring(eq + 1).trim());
    }
    return out;
  }

  /**
   * The JVM options of a mount process on {@code conf}: heap and direct-memory bounds, Netty's
   * buffers counted under the latter, and the client compiler only. A mount is usually fresh for
   * each job and spends its first minute of reads compiling: C2 took a fifth of the two cores
   * during a first pass over 20,000 small files, and with C1 alone that pass read 30% more files a
   * second, with later passes and streaming the same and 4 KiB random reads 5 to 10% slower at 8
   * threads. STRATA_FUSE_JAVA_OPTS comes after these and may undo any of them
   * (-XX:TieredStopAtLevel=4).
   */
  public static List<String> jvmOptions(StrataConfig conf) {
    return List.of(
        "-Xmx" + megabytes(conf.getBytes(FuseKeys.HEAP_SIZE)) + "m",
        "-XX:MaxDirectMemorySize=" + megabytes(conf.getBytes(FuseKeys.DIRECT_MEMORY_SIZE)) + "m",
        // Netty then allocates through the JDK, so its buffers count under MaxDirectMemorySize.
        "-Dio.netty.maxDirectMemory=0",
        "-XX:TieredStopAtLevel=1");
  }

  private Path recordDir() {
    return Path.of(conf().getString(CommonKeys.HOME), "fuse");
  }

  private Path logsDir() {
    return Path.of(conf().getString(CommonKeys.LOGS_DIR));
  }

  private Duration timeout() {
    return conf().getDuration(FuseKeys.MOUNT_TIMEOUT);
  }

  /**
   * Mounts {@code namespacePath} at {@code mountPoint}: in the background (returns once mounted)
   * or, with {@code foreground}, in this terminal until the mount ends. Returns the exit code.
   */
  public int mount(Path mountPoint, String namespacePath, List<String> options, boolean foreground)
      throws IOException {
    return mount(mountPoint, namespacePath, options, foreground, Map.of());
  }

  /**
   * As {@link #mount(Path, String, List, boolean)}, with settings of this mount only (see {@link
   * #parseSettings}): they apply to what this launcher reads (heap, logs, timeout) and reach the
   * mount process as {@code -D} options after the shell's own.
   */
  public int mount(
      Path mountPoint,
      String namespacePath,
      List<String> options,
      boolean foreground,
      Map<String, String> mountSettings)
      throws IOException {
    this.settings = Map.copyOf(mountSettings);
    this.conf = null;
    conf();
    Path point = mountPoint.toAbsolutePath().normalize();
    String root = PathNames.normalize(namespacePath);
    Path recordFile = MountRecord.fileFor(recordDir(), point);
    Optional<MountRecord> old = MountRecord.read(recordFile);
    Optional<ProcessHandle> oldProcess = old.flatMap(MountRecord::process);
    if (oldProcess.isPresent()) {
      throw new StrataException(
          ErrorCode.ALREADY_EXISTS,
          point
              + " is already mounted by pid "
              + oldProcess.get().pid()
              + "; unmount it first with: strata fuse unmount "
              + point);
    }
    if (ProcMounts.isFuseMounted(point)) {
      if (old.isEmpty()) {
        throw new StrataException(
            ErrorCode.ALREADY_EXISTS,
            point
                + " is already a FUSE mount"
                + " that strata fuse did not start; unmount it with: fusermount -u "
                + point);
      }
      ctx.out()
          .println(
              "Cleaning the stale mount at "
                  + point
                  + " (its process, pid "
                  + old.get().pid()
                  + ", is gone): fusermount -u -z");
      fusermount(point, true);
      if (ProcMounts.isFuseMounted(point)) {
        throw new StrataException(
            ErrorCode.FAILED_PRECONDITION,
            "Cannot detach the stale mount" + " at " + point + "; try: fusermount -u -z " + point);
      }
    }
    if (old.isPresent()) {
      old.get().delete();
    }
    if (!Files.isDirectory(point)) {
      throw new UsageException(
          "Mount point is not a folder: "
              + point
              + " (create it with"
              + " mkdir -p "
              + point
              + ")");
    }
    Path log = logsDir().resolve("fuse-" + MountRecord.sanitize(point) + ".log");
    Path out = logsDir().resolve("fuse-" + MountRecord.sanitize(point) + ".out");
    ProcessBuilder pb = new ProcessBuilder(command(point, root, options, foreground ? null : log));
    Tcmalloc.preloadInto(pb, ctx.env());
    MountRecord record =
        new MountRecord(recordFile, 0, point, root, foreground ? Path.of("") : log);
    if (foreground) {
      return runInForeground(pb.inheritIO(), record);
    }
    Files.createDirectories(logsDir());
    // Emptied at each start: it holds only what this run printed outside the log.
    Process p =
        pb.redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.to(out.toFile()))
            .start();
    p.getOutputStream().close();
    record = new MountRecord(recordFile, p.pid(), point, root, log);
    record.write();
    return awaitMounted(p, record, out);
  }

  private int runInForeground(ProcessBuilder pb, MountRecord template) throws IOException {
    Process p = pb.start();
    MountRecord record =
        new MountRecord(
            template.file(),
            p.pid(),
            template.mountPoint(),
            template.namespacePath(),
            template.log());
    record.write();
    // SIGTERM to this command (a container's stop, which signals its first process) is passed
    // on to the mount process, which unmounts and writes staged files through before it exits;
    // without this the mount would outlive the command, or die with the container unannounced.
    Thread stopMount = new Thread(() -> stopForegroundMount(p, record), "strata-fuse-stop");
    Runtime.getRuntime().addShutdownHook(stopMount);
    try {
      return p.waitFor();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroy();
      return 1;
    } finally {
      record.delete();
    }
  }

  private void stopForegroundMount(Process p, MountRecord record) {
    if (!p.isAlive()) {
      return;
    }
    p.destroy();
    try {
      if (!p.waitFor(timeout().toMillis(), TimeUnit.MILLISECONDS)) {
        System.err.println(
            "strata: the mount process "
                + p.pid()
                + " did not exit within "
                + timeout()
                + " of SIGTERM (strata.fuse.mount.timeout)");
        return;
      }
      record.delete();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (IOException e) {
      System.err.println("strata: cannot remove " + record.file() + ": " + e.getMessage());
    }
  }

  private int awaitMounted(Process p, MountRecord record, Path outFile) throws IOException {
    long deadline = System.nanoTime() + timeout().toNanos();
    while (!servesRequests(p, record.mountPoint(), deadline)) {
      String failure = null;
      if (!p.isAlive()) {
        failure = "the mount process exited (exit code " + p.exitValue() + ")";
      } else if (System.nanoTime() > deadline) {
        failure =
            (ProcMounts.isFuseMounted(record.mountPoint())
                    ? "it is listed in /proc/mounts but did not answer a stat of its folder within "
                    : "it did not appear in /proc/mounts within ")
                + timeout().toSeconds()
                + " s (raise "
                + FuseKeys.MOUNT_TIMEOUT.name()
                + " if it only needs longer)";
        p.destroy();
        if (!ProcessExits.await(p.toHandle(), Duration.ofSeconds(10))) {
          p.destroyForcibly();
        }
      }
      if (failure != null) {
        record.delete();
        ctx.err()
            .println(
                "strata: Cannot mount at "
                    + record.mountPoint()
                    + ": "
                    + failure
                    + ". Last lines of "
                    + record.log()
                    + ":");
        printTail(record.log());
        if (Files.isRegularFile(outFile) && Files.size(outFile) > 0) {
          ctx.err().println("Last lines of " + outFile + " (what the process printed):");
          printTail(outFile);
        }
        return 1;
      }
      sleep();
    }
    PrintStream out = ctx.out();
    out.println("Mounted " + record.namespacePath() + " at " + record.mountPoint());
    out.println("  pid: " + record.pid());
    out.println("  log: " + record.log());
    out.println("Unmount with: strata fuse unmount " + record.mountPoint());
    return 0;
  }

  /**
   * Whether the mount at {@code point} is listed and its process answers a request. Being listed is
   * not enough: libfuse mounts before it checks the rest of its options, so a mount that then fails
   * shows in /proc/mounts for a moment before it is taken down again. A stat of the mount point
   * waits for the process to have started serving; any answer it gives counts, even an error (the
   * master may be down, which the mount's log says), and only the kernel's "not connected", for a
   * process that gave up, does not.
   */
  private static boolean servesRequests(Process p, Path point, long deadline) {
    if (!ProcMounts.isFuseMounted(point)) {
      return false;
    }
    CompletableFuture<Boolean> stat =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                Files.readAttributes(point, BasicFileAttributes.class);
                return true;
              } catch (FileSystemException e) {
                return e.getReason() == null || !e.getReason().contains(NOT_CONNECTED);
              } catch (IOException e) {
                return false;
              }
            },
            STAT_THREADS);
    try {
      long left = Math.max(deadline - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(100));
      return stat.get(left, TimeUnit.NANOSECONDS) && p.isAlive() && ProcMounts.isFuseMounted(point);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException | TimeoutException e) {
      return false;
    }
  }

  private void printTail(Path file) {
    for (String line : tail(file)) {
      ctx.err().println("  " + line);
    }
  }

  /** The foreground mount process's command with these settings of its own (for tests). */
  List<String> foregroundCommand(
      Path point, String root, List<String> options, Map<String, String> mountSettings) {
    this.settings = Map.copyOf(mountSettings);
    this.conf = null;
    return command(point, root, options, null);
  }

  /** The mount process's command; {@code log} is null in the foreground (logs to the terminal). */
  private List<String> command(Path point, String root, List<String> options, Path log) {
    String classpath = ctx.env().get(CLASSPATH_VARIABLE);
    if (classpath == null || classpath.isEmpty()) {
      throw new UsageException(
          CLASSPATH_VARIABLE
              + " is not set: run `strata fuse mount`"
              + " through the launcher bin/strata, which sets it once integration/fuse is built");
    }
    List<String> cmd = new ArrayList<>();
    if (log != null && Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      // A session of its own: closing the terminal or Ctrl-C in it does not end the mount.
      cmd.add("/usr/bin/setsid");
    }
    cmd.add(java());
    cmd.addAll(jvmOptions(conf()));
    String extra = ctx.env().getOrDefault(JAVA_OPTS_VARIABLE, "");
    for (String o : extra.trim().split("\\s+")) {
      if (!o.isEmpty()) {
        cmd.add(o);
      }
    }
    for (Map.Entry<String, String> e : new TreeMap<>(ctx.strataProperties()).entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    // After the shell's own: a later -D of a property wins.
    for (Map.Entry<String, String> e : settings.entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    if (log != null) {
      // After the command's own -D options, so that these win over a stray -Dstrata.log.file.
      cmd.add("-Dlogback.configurationFile=" + LOG_CONFIGURATION);
      cmd.add("-D" + CommonKeys.LOG_FILE.name() + "=" + log);
      cmd.add(
          "-D"
              + FuseKeys.LOG_MAX_SIZE.name()
              + "="
              + Math.max(1 << 20, conf().getBytes(FuseKeys.LOG_MAX_SIZE)));
      cmd.add(
          "-D"
              + FuseKeys.LOG_MAX_FILES.name()
              + "="
              + Math.min(MAX_LOG_FILES, Math.max(1, conf().getInt(FuseKeys.LOG_MAX_FILES))));
    }
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(MountRecord.MAIN_CLASS);
    cmd.add(point.toString());
    cmd.add(root);
    for (String o : options) {
      cmd.add("-o");
      cmd.add(o);
    }
    return cmd;
  }

  private static long megabytes(long bytes) {
    return Math.max(1, (bytes + (1 << 20) - 1) >> 20);
  }

  /** Unmounts {@code mountPoint} and waits for its process to end. Returns the exit code. */
  public int unmount(Path mountPoint) throws IOException {
    Path point = mountPoint.toAbsolutePath().normalize();
    Optional<MountRecord> record = MountRecord.read(MountRecord.fileFor(recordDir(), point));
    if (!ProcMounts.isFuseMounted(point)) {
      if (record.isPresent() && record.get().process().isEmpty()) {
        record.get().delete();
      }
      throw new StrataException(
          ErrorCode.NOT_FOUND, "Nothing is mounted at " + point + " (see strata fuse status)");
    }
    if (!fusermount(point, false)) {
      ctx.out()
          .println(
              point
                  + " is busy: detaching it lazily (fusermount -u -z); it goes away"
                  + " when the last open file closes");
      fusermount(point, true);
    }
    if (ProcMounts.isFuseMounted(point)) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          "Cannot unmount " + point + "; try: fusermount -u -z " + point);
    }
    if (record.isPresent()) {
      Optional<ProcessHandle> h = record.get().process();
      if (h.isPresent() && !ProcessExits.await(h.get(), timeout())) {
        // Unmounted but still running: ask it to end, as Ctrl-C would.
        h.get().destroy();
        if (!ProcessExits.await(h.get(), Duration.ofSeconds(10))) {
          h.get().destroyForcibly();
        }
      }
      record.get().delete();
    }
    ctx.out().println("Unmounted " + point);
    return 0;
  }

  /** Prints one line per recorded mount. Returns the exit code. */
  public int status() throws IOException {
    List<MountRecord> records = new ArrayList<>();
    if (Files.isDirectory(recordDir())) {
      try (Stream<Path> files = Files.list(recordDir())) {
        for (Path f : files.filter(f -> f.toString().endsWith(".pid")).sorted().toList()) {
          MountRecord.read(f).ifPresent(records::add);
        }
      }
    }
    if (records.isEmpty()) {
      ctx.out().println("No Strata FUSE mounts (none started by strata fuse mount).");
      return 0;
    }
    for (MountRecord r : records) {
      ctx.out()
          .println(
              r.mountPoint() + "  " + r.namespacePath() + "  pid " + r.pid() + "  " + state(r));
    }
    return 0;
  }

  static String state(boolean mounted, boolean alive) {
    if (mounted && alive) {
      return "mounted";
    }
    if (mounted) {
      return "stale (process gone; run strata fuse mount again or strata fuse unmount)";
    }
    return alive ? "not mounted (process still running)" : "not mounted";
  }

  private static String state(MountRecord r) {
    return state(ProcMounts.isFuseMounted(r.mountPoint()), r.process().isPresent());
  }

  /** Runs fusermount -u (with -z when lazy); returns whether it succeeded. */
  private boolean fusermount(Path point, boolean lazy) throws IOException {
    List<String> cmd = new ArrayList<>(List.of("fusermount", "-u"));
    if (lazy) {
      cmd.add("-z");
    }
    cmd.add(point.toString());
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    p.getOutputStream().close();
    try {
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      return false;
    }
    return p.exitValue() == 0;
  }

  private static List<String> tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size());
    } catch (IOException e) {
      return List.of("(cannot read " + log + ": " + e.getMessage() + ")");
    }
  }

  private String java() {
    String home = ctx.env().get("JAVA_HOME");
    if (home != null && !home.isEmpty() && Files.isExecutable(Path.of(home, "bin", "java"))) {
      return Path.of(home, "bin", "java").toString();
    }
    return "java";
  }

  private static void sleep() throws StrataException {
    try {
      Thread.sleep(POLL_MS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new StrataException(ErrorCode.UNAVAILABLE, "Interrupted while waiting for the mount");
    }
  }
}
