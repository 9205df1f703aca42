package io.strata.shell.local;

import io.strata.client.FileSystem;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigKey;
import io.strata.common.auth.ProxyCredentials;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.ProxyKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.shell.Format;
import io.strata.shell.ProcessExits;
import io.strata.shell.ShellContext;
import io.strata.shell.Tcmalloc;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A master, a worker and an S3 proxy on this machine, run as background JVMs by
 * {@code strata local up} and stopped by {@code strata local down}. The first {@code up} also
 * writes an access key for the local user to the proxy's credentials file (mode 0600) and
 * prints it; {@code strata proxy credentials} shows it again.
 *
 * <p>Each process gets its classpath from the variable the launcher sets
 * ({@code STRATA_MASTER_CLASSPATH}, {@code STRATA_WORKER_CLASSPATH}), java from
 * {@code JAVA_HOME} or the PATH, a rotated log file {@code ${strata.logs.dir}/<role>.log}
 * (logback's strata-logback-file.xml; {@code <role>.out} keeps what it prints before logging
 * starts), a pid file in
 * {@code ${strata.home}/run/}, and every {@code -Dstrata.*} option the shell was given. {@code up}
 * returns only when the master answers and the worker is live, or fails within
 * {@code strata.client.local.start.timeout} with a pointer to the log. Starting when already
 * running starts nothing; a stale pid file is ignored.
 */
public final class LocalCluster {
  /** How to run one of the processes. */
  public record Role(String name, String mainClass, String classpathVariable,
      String javaOptsVariable, String defaultJavaOpts) {}

  public static final Role MASTER = new Role("master", "io.strata.master.MasterMain",
      "STRATA_MASTER_CLASSPATH", "STRATA_MASTER_JAVA_OPTS", "-Xms256m -Xmx2g -XX:+UseG1GC");
  public static final Role WORKER = new Role("worker", "io.strata.worker.WorkerMain",
      "STRATA_WORKER_CLASSPATH", "STRATA_WORKER_JAVA_OPTS",
      "-Xms256m -Xmx1g -XX:MaxDirectMemorySize=1g -XX:+UseG1GC");
  public static final Role PROXY = new Role("proxy", "io.strata.proxy.ProxyMain",
      "STRATA_PROXY_CLASSPATH", "STRATA_PROXY_JAVA_OPTS",
      "-Xms128m -Xmx1g -XX:MaxDirectMemorySize=512m -XX:+UseG1GC");
  private static final long POLL_MS = 200;

  private final ShellContext ctx;
  private final Role master;
  private final Role worker;
  private final Role proxy;

  /** A master and a worker, without the S3 proxy. */
  public LocalCluster(ShellContext ctx, Role master, Role worker) {
    this(ctx, master, worker, null);
  }

  /** @param proxy the S3 proxy's role, or null to run none */
  public LocalCluster(ShellContext ctx, Role master, Role worker, Role proxy) {
    this.ctx = ctx;
    this.master = master;
    this.worker = worker;
    this.proxy = proxy;
  }

  static LocalCluster standard(ShellContext ctx, boolean withProxy) {
    return new LocalCluster(ctx, MASTER, WORKER, withProxy ? PROXY : null);
  }

  private List<Role> roles() {
    return proxy == null ? List.of(master, worker) : List.of(master, worker, proxy);
  }

  private StrataConfig conf() {
    return ctx.conf();
  }

  private Path runDir() {
    return Path.of(conf().getString(CommonKeys.HOME), "run");
  }

  private Path logsDir() {
    return Path.of(conf().getString(CommonKeys.LOGS_DIR));
  }

  private PidFile pidFile(Role role) {
    return new PidFile(runDir().resolve(role.name() + ".pid"), role.mainClass());
  }

  /** Starts whatever is not running and waits until both serve; returns the exit code. */
  public int up() throws IOException {
    PrintStream out = ctx.out();
    Optional<ProcessHandle> m = pidFile(master).running();
    Optional<ProcessHandle> w = pidFile(worker).running();
    Optional<ProcessHandle> x = proxy == null ? Optional.empty() : pidFile(proxy).running();
    if (m.isPresent() && w.isPresent() && (proxy == null || x.isPresent())) {
      out.println("Strata is already running locally (master pid " + m.get().pid()
          + ", worker pid " + w.get().pid() + "). Stop with: bin/strata local down");
      return 0;
    }
    Files.createDirectories(runDir());
    Files.createDirectories(logsDir());
    long deadline = System.nanoTime() + conf().getDuration(ClientKeys.LOCAL_START_TIMEOUT)
        .toNanos();
    // Short retries: this loop does its own waiting and must notice a dead process quickly.
    StrataConfig polling = conf().with(Map.of(ClientKeys.MASTER_RETRY_DURATION.name(), "1s"));
    try (FileSystem fs = FileSystem.connect(polling)) {
      long masterPid;
      if (m.isPresent()) {
        masterPid = m.get().pid();
        out.println("The master is already running (pid " + masterPid + ")");
      } else {
        Process p = start(master);
        masterPid = p.pid();
        waitUntil(master, p, deadline, () -> {
          fs.masterInfo();
          return true;
        });
      }
      long workerPid;
      Process workerProcess = null;
      if (w.isPresent()) {
        workerPid = w.get().pid();
        out.println("The worker is already running (pid " + workerPid + ")");
      } else {
        workerProcess = start(worker);
        workerPid = workerProcess.pid();
      }
      WorkerInfo[] live = new WorkerInfo[1];
      waitUntil(worker, workerProcess, deadline, () -> {
        live[0] = liveWorker(fs.getWorkers());
        return live[0] != null;
      });
      long proxyPid = -1;
      ProxyCredentials.Credential key = null;
      if (proxy != null) {
        key = ensureCredentials(out);
        if (x.isPresent()) {
          proxyPid = x.get().pid();
          out.println("The proxy is already running (pid " + proxyPid + ")");
        } else {
          Process p = start(proxy);
          proxyPid = p.pid();
          waitUntil(proxy, p, deadline, this::proxyHealthy);
        }
      }
      printSummary(out, fs, masterPid, workerPid, live[0]);
      if (proxy != null) {
        printProxy(out, proxyPid, key);
      }
      out.println("Stop with: bin/strata local down");
    }
    return 0;
  }

  private Path credentialsFile() {
    return Path.of(conf().getString(ProxyKeys.CREDENTIALS_FILE));
  }

  /**
   * The local user's access key, generated into the credentials file (mode 0600) when the
   * file does not exist yet; the first key of the file otherwise.
   */
  private ProxyCredentials.Credential ensureCredentials(PrintStream out) throws IOException {
    Path file = credentialsFile();
    if (!Files.exists(file)) {
      Files.createDirectories(file.toAbsolutePath().getParent());
      ProxyCredentials.Credential c = ProxyCredentials.generate(System.getProperty("user.name"));
      ProxyCredentials.append(file, c);
      out.println("Wrote an S3 access key for " + c.user() + " to " + file + " (mode 0600)");
      return c;
    }
    List<ProxyCredentials.Credential> all = ProxyCredentials.load(file).all();
    return all.isEmpty() ? null : all.get(0);
  }

  private boolean proxyHealthy() {
    String host = conf().getString(ProxyKeys.HOSTNAME);
    int port = conf().getInt(ProxyKeys.WEB_PORT);
    try (java.net.Socket s = new java.net.Socket()) {
      s.connect(new java.net.InetSocketAddress(host, port), 500);
      s.setSoTimeout(2000);
      s.getOutputStream().write(("GET /health HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
          .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      byte[] head = s.getInputStream().readNBytes(12);
      return new String(head, java.nio.charset.StandardCharsets.US_ASCII).endsWith("200");
    } catch (IOException e) {
      return false;
    }
  }

  private void printProxy(PrintStream out, long pid, ProxyCredentials.Credential key) {
    StrataConfig c = conf();
    out.printf("  S3 proxy:     http://%s:%d, pid %d%n", c.getString(ProxyKeys.HOSTNAME),
        c.getInt(ProxyKeys.PORT), pid);
    if (key != null) {
      out.printf("  S3 key:       access key %s of user %s; secret in %s%n", key.accessKey(),
          key.user(), credentialsFile());
      out.println("                (`bin/strata proxy credentials` prints the keys)");
    }
  }

  /** Sends SIGTERM to the proxy, the worker and then the master, kills them if they linger. */
  public int down() throws IOException {
    boolean stopped = (proxy != null && stop(proxy)) | stop(worker) | stop(master);
    if (!stopped) {
      ctx.out().println("Strata is not running locally.");
    }
    return 0;
  }

  /** Prints which processes are running. */
  public int status() throws IOException {
    for (Role role : roles()) {
      Optional<ProcessHandle> h = pidFile(role).running();
      String where = role == proxy ? ", S3 endpoint http://" + conf().getString(
          ProxyKeys.HOSTNAME) + ":" + conf().getInt(ProxyKeys.PORT) : "";
      ctx.out().println(role.name() + ": " + (h.isPresent()
          ? "running (pid " + h.get().pid() + ")" + where : "not running"));
    }
    return 0;
  }

  private Process start(Role role) throws IOException {
    String classpath = ctx.env().get(role.classpathVariable());
    if (classpath == null || classpath.isEmpty()) {
      throw new UsageException(role.classpathVariable() + " is not set: run `strata local up`"
          + " through the launcher bin/strata, which sets it");
    }
    List<String> cmd = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
      // A session of its own: closing the terminal or Ctrl-C in it does not reach the server.
      cmd.add("/usr/bin/setsid");
    }
    cmd.add(java());
    String opts = ctx.env().getOrDefault(role.javaOptsVariable(), role.defaultJavaOpts());
    for (String o : opts.trim().split("\\s+")) {
      if (!o.isEmpty()) {
        cmd.add(o);
      }
    }
    Path log = logsDir().resolve(role.name() + ".log");
    cmd.add("-Dlogback.configurationFile=strata-logback-file.xml");
    cmd.add("-Dstrata.log.file=" + log);
    for (Map.Entry<String, String> e : new TreeMap<>(ctx.strataProperties()).entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(role.mainClass());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(
            logsDir().resolve(role.name() + ".out").toFile()));
    Tcmalloc.preloadInto(pb, ctx.env());
    Process p = pb.start();
    p.getOutputStream().close();
    pidFile(role).write(p.pid());
    ctx.out().println("Started the " + role.name() + " (pid " + p.pid() + "), log " + log);
    return p;
  }

  private String java() {
    String home = ctx.env().get("JAVA_HOME");
    if (home != null && !home.isEmpty() && Files.isExecutable(Path.of(home, "bin", "java"))) {
      return Path.of(home, "bin", "java").toString();
    }
    return "java";
  }

  /** A condition that may fail while the process is still starting. */
  private interface Probe {
    boolean ready() throws StrataException, IOException;
  }

  private void waitUntil(Role role, Process p, long deadline, Probe probe) throws IOException {
    while (true) {
      if (p != null && !p.isAlive()) {
        pidFile(role).delete();
        throw new StrataException(ErrorCode.UNAVAILABLE, "The " + role.name()
            + " exited during start-up (exit code " + p.exitValue() + "). See "
            + logsDir().resolve(role.name() + ".log") + " and "
            + logsDir().resolve(role.name() + ".out"));
      }
      try {
        if (probe.ready()) {
          return;
        }
      } catch (StrataException e) {
        if (e.code() != ErrorCode.UNAVAILABLE) {
          throw e;
        }
      }
      if (System.nanoTime() > deadline) {
        if (p != null) {
          stopProcess(p.toHandle());
          pidFile(role).delete();
        }
        throw new StrataException(ErrorCode.UNAVAILABLE, "The " + role.name()
            + " did not become ready within " + conf().getDuration(
                ClientKeys.LOCAL_START_TIMEOUT).toSeconds() + "s and was stopped. See "
            + logsDir().resolve(role.name() + ".log") + " (raise "
            + ClientKeys.LOCAL_START_TIMEOUT.name() + " if it only needs longer)");
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StrataException(ErrorCode.UNAVAILABLE, "Interrupted while waiting for the "
            + role.name());
      }
    }
  }

  /** The live worker this command started: the one at the configured address. */
  private WorkerInfo liveWorker(List<WorkerInfo> workers) {
    String host = conf().getString(WorkerKeys.HOSTNAME);
    int rpcPort = conf().getInt(WorkerKeys.RPC_PORT);
    for (WorkerInfo w : workers) {
      if (w.getState() == WorkerState.WORKER_LIVE && w.getAddress().getHost().equals(host)
          && (rpcPort == 0 || w.getAddress().getRpcPort() == rpcPort)) {
        return w;
      }
    }
    return null;
  }

  private boolean stop(Role role) throws IOException {
    PidFile pid = pidFile(role);
    Optional<ProcessHandle> h = pid.running();
    if (h.isEmpty()) {
      pid.delete();
      return false;
    }
    boolean killed = stopProcess(h.get());
    pid.delete();
    ctx.out().println("Stopped the " + role.name() + " (pid " + h.get().pid() + ")"
        + (killed ? ": it did not stop after SIGTERM and was killed" : ""));
    return true;
  }

  /** SIGTERM, a bounded wait, then SIGKILL; returns whether it had to kill. */
  private boolean stopProcess(ProcessHandle h) throws StrataException {
    Duration grace = conf().getDuration(ClientKeys.LOCAL_STOP_TIMEOUT);
    h.destroy();
    if (ProcessExits.await(h, grace)) {
      return false;
    }
    h.destroyForcibly();
    if (!ProcessExits.await(h, Duration.ofSeconds(10))) {
      throw new StrataException(ErrorCode.INTERNAL, "Process " + h.pid()
          + " is still alive after SIGKILL");
    }
    return true;
  }

  private void printSummary(PrintStream out, FileSystem fs, long masterPid, long workerPid,
      WorkerInfo w) {
    StrataConfig c = conf();
    String masterHost = c.getString(CommonKeys.MASTER_HOSTNAME);
    out.println();
    out.println("Strata is running locally.");
    out.printf("  master:       %s (gRPC), pid %d%n", fs.masterAddress(), masterPid);
    out.printf("  master web:   http://%s:%d/metrics and /health%n", masterHost,
        c.getInt(MasterKeys.WEB_PORT));
    out.printf("  worker:       %s rpc port %d, data port %d, pid %d%n", w.getAddress().getHost(),
        w.getAddress().getRpcPort(), w.getAddress().getDataPort(), workerPid);
    int webPort = w.getAddress().getWebPort() > 0 ? w.getAddress().getWebPort()
        : c.getInt(WorkerKeys.WEB_PORT);
    out.printf("  worker web:   http://%s:%d/metrics and /health%n", w.getAddress().getHost(),
        webPort);
    String ufs = c.getString(MasterKeys.ROOT_UFS);
    out.printf("  under store:  %s%n", ufs.startsWith("file://")
        ? ufs.substring("file://".length()) + " (" + ufs + ")" : ufs);
    out.printf("  tiers:        %s%n", tiers(c));
    out.printf("  logs:         %s (%s)%n", logsDir(), proxy == null ? "master.log, worker.log"
        : "master.log, worker.log, proxy.log");
  }

  private static String tiers(StrataConfig c) {
    List<String> out = new ArrayList<>();
    tier(out, c, "MEM", WorkerKeys.MEM_DIR, WorkerKeys.MEM_CAPACITY);
    tier(out, c, "SSD", WorkerKeys.SSD_DIR, WorkerKeys.SSD_CAPACITY);
    tier(out, c, "HDD", WorkerKeys.HDD_DIR, WorkerKeys.HDD_CAPACITY);
    return out.isEmpty() ? "none" : String.join(", ", out);
  }

  private static void tier(List<String> out, StrataConfig c, String alias, ConfigKey dir,
      ConfigKey capacity) {
    long bytes = c.getBytes(capacity);
    if (bytes > 0) {
      out.add(alias + " " + c.getString(dir) + " (" + Format.human(bytes) + ")");
    }
  }
}
