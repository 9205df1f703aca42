package io.strata.shell.local;

import io.strata.client.FileSystem;
import io.strata.client.master.MasterClient;
import io.strata.common.auth.ProxyCredentials;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigKey;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.ProxyKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.conf.WorkerKeys;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.shell.Format;
import io.strata.shell.ProcessExits;
import io.strata.shell.ShellContext;
import io.strata.shell.Tcmalloc;
import io.strata.shell.UsageException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * A master (or an odd number of them replicating one journal, see {@link LocalMasters}), a worker
 * and an S3 proxy on this machine, run as background JVMs by {@code strata local up} and stopped by
 * {@code strata local down}. The first {@code up} also writes an access key for the local user to
 * the proxy's credentials file (mode 0600) and prints it; {@code strata proxy credentials} shows it
 * again.
 *
 * <p>Each process gets its classpath from the variable the launcher sets ({@code
 * STRATA_MASTER_CLASSPATH}, {@code STRATA_WORKER_CLASSPATH}), java from {@code JAVA_HOME} or the
 * PATH, a rotated log file {@code ${strata.logs.dir}/<role>.log} (logback's
 * strata-logback-file.xml; {@code <role>.out} keeps what it prints before logging starts), a pid
 * file in {@code ${strata.home}/run/}, and every {@code -Dstrata.*} option the shell was given;
 * with several masters every process also gets their addresses, which {@link LocalClientConf} keeps
 * for later commands. {@code up} returns only when the master answers (with several, when they
 * elected a leader) and the worker is live, or fails within {@code
 * strata.client.local.start.timeout} with a pointer to the log. Starting when already running
 * starts nothing; a stale pid file is ignored.
 */
public final class LocalCluster {
  /** How to run one of the processes. */
  public record Role(
      String name,
      String mainClass,
      String classpathVariable,
      String javaOptsVariable,
      String defaultJavaOpts) {}

  public static final Role MASTER =
      new Role(
          "master",
          "io.strata.master.MasterMain",
          "STRATA_MASTER_CLASSPATH",
          "STRATA_MASTER_JAVA_OPTS",
          "-Xms256m -Xmx2g -XX:+UseG1GC");
  public static final Role WORKER =
      new Role(
          "worker",
          "io.strata.worker.WorkerMain",
          "STRATA_WORKER_CLASSPATH",
          "STRATA_WORKER_JAVA_OPTS",
          "-Xms256m -Xmx1g -XX:MaxDirectMemorySize=1g -XX:+UseG1GC");
  public static final Role PROXY =
      new Role(
          "proxy",
          "io.strata.proxy.ProxyMain",
          "STRATA_PROXY_CLASSPATH",
          "STRATA_PROXY_JAVA_OPTS",
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

  /**
   * @param proxy the S3 proxy's role, or null to run none
   */
  public LocalCluster(ShellContext ctx, Role master, Role worker, Role proxy) {
    this.ctx = ctx;
    this.master = master;
    this.worker = worker;
    this.proxy = proxy;
  }

  static LocalCluster standard(ShellContext ctx, boolean withProxy) {
    return new LocalCluster(ctx, MASTER, WORKER, withProxy ? PROXY : null);
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

  /** Starts whatever is not running and waits until all serve; returns the exit code. */
  public int up() throws IOException {
    return up(null, null);
  }

  /**
   * Starts whatever is not running and waits until all serve; returns the exit code.
   *
   * @param masterCount how many masters (see {@link LocalMasters}); null for as many as the last
   *     {@code up} started, one the first time
   * @param restore a backup folder every master with an empty journal starts from, or null
   */
  public int up(Integer masterCount, Path restore) throws IOException {
    return up(masterCount, restore, false);
  }

  /**
   * As {@link #up(Integer, Path)}; with {@code proxyTls} the proxy it starts serves HTTPS with the
   * self-signed certificate of {@link LocalProxyTls}, made the first time.
   */
  public int up(Integer masterCount, Path restore, boolean proxyTls) throws IOException {
    PrintStream out = ctx.out();
    Path backup = restore == null ? null : checkBackup(restore);
    LocalMasters masters =
        LocalMasters.of(
            conf(),
            master,
            masterCount != null ? masterCount : LocalMasters.lastCount(conf()),
            backup);
    refuseOtherLayout(masters);
    List<Optional<ProcessHandle>> m = new ArrayList<>();
    for (LocalMasters.Member mm : masters.members()) {
      m.add(pidFile(mm.role()).running());
    }
    Optional<ProcessHandle> w = pidFile(worker).running();
    Optional<ProcessHandle> x = proxy == null ? Optional.empty() : pidFile(proxy).running();
    if (m.stream().allMatch(Optional::isPresent)
        && w.isPresent()
        && (proxy == null || x.isPresent())) {
      out.println(
          "Strata is already running locally ("
              + (masters.several()
                  ? "master pids "
                      + String.join(
                          ", ", m.stream().map(h -> Long.toString(h.get().pid())).toList())
                  : "master pid " + m.get(0).get().pid())
              + ", worker pid "
              + w.get().pid()
              + "). Stop with: bin/strata local down");
      return 0;
    }
    for (int i = 0; i < m.size(); i++) {
      if (m.get(i).isEmpty()) {
        LocalMasters.Member mm = masters.members().get(i);
        refuseTakenPorts(
            mm.role(),
            mm.properties(),
            CommonKeys.MASTER_RPC_PORT,
            MasterKeys.WEB_PORT,
            MasterKeys.JOURNAL_PORT);
      }
    }
    if (w.isEmpty()) {
      refuseTakenPorts(
          worker, Map.of(), WorkerKeys.RPC_PORT, WorkerKeys.DATA_PORT, WorkerKeys.WEB_PORT);
    }
    if (proxy != null && x.isEmpty()) {
      refuseTakenPorts(proxy, Map.of(), ProxyKeys.PORT, ProxyKeys.WEB_PORT);
    }
    Files.createDirectories(runDir());
    Files.createDirectories(logsDir());
    if (masters.several()) {
      LocalClientConf.write(conf(), masters.addresses());
    } else {
      LocalClientConf.delete(conf());
    }
    long deadline =
        System.nanoTime() + conf().getDuration(ClientKeys.LOCAL_START_TIMEOUT).toNanos();
    // Short retries: this loop does its own waiting and must notice a dead process quickly.
    Map<String, String> polling = new java.util.HashMap<>(masters.clientProperties());
    polling.put(ClientKeys.MASTER_RETRY_DURATION.name(), "1s");
    polling.put(ClientKeys.MASTER_FAILOVER_TIMEOUT.name(), "1s");
    try (FileSystem fs = FileSystem.connect(conf().with(polling));
        MasterClient probe = new MasterClient(conf().with(polling))) {
      long[] masterPids = new long[m.size()];
      List<Started> startedMasters = new ArrayList<>();
      for (int i = 0; i < m.size(); i++) {
        LocalMasters.Member mm = masters.members().get(i);
        if (m.get(i).isPresent()) {
          masterPids[i] = m.get(i).get().pid();
          out.println(
              "The " + mm.role().name() + " is already running (pid " + masterPids[i] + ")");
          continue;
        }
        if (backup != null && LocalMasters.holdsState(mm.journalDir())) {
          out.println(
              "The "
                  + mm.role().name()
                  + "'s journal "
                  + mm.journalDir()
                  + " holds"
                  + " state: it starts from that and ignores the backup (stop it and move the"
                  + " folder away to restore)");
        }
        Process p = start(mm.role(), mm.properties());
        masterPids[i] = p.pid();
        startedMasters.add(new Started(mm.role(), p));
      }
      // With several masters only an elected leader serves GetWorkers, and each master this
      // command started must answer too; one master answers GetMasterInfo once it runs.
      waitUntil(
          masters.several() ? "masters did not elect a leader" : "master did not become" + " ready",
          startedMasters,
          deadline,
          () -> {
            if (!masters.several()) {
              fs.masterInfo();
              return true;
            }
            fs.getWorkers();
            for (Started s : startedMasters) {
              probe.callJournalAt(
                  masters.member(s.role()).address(),
                  stub -> stub.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()));
            }
            return true;
          });
      long workerPid;
      List<Started> startedWorker = new ArrayList<>();
      if (w.isPresent()) {
        workerPid = w.get().pid();
        out.println("The worker is already running (pid " + workerPid + ")");
      } else {
        Process p = start(worker, masters.clientProperties());
        workerPid = p.pid();
        startedWorker.add(new Started(worker, p));
      }
      WorkerInfo[] live = new WorkerInfo[1];
      waitUntil(
          "worker did not become ready",
          startedWorker,
          deadline,
          () -> {
            live[0] = liveWorker(fs.getWorkers());
            return live[0] != null;
          });
      long proxyPid = -1;
      ProxyCredentials.Credential key = null;
      LocalProxyTls.CertificateAndKey tls = null;
      if (proxy != null) {
        key = ensureCredentials(out);
        if (proxyTls) {
          tls =
              LocalProxyTls.ensure(Path.of(conf().getString(CommonKeys.HOME), "conf", "proxy-tls"));
        }
        if (x.isPresent()) {
          proxyPid = x.get().pid();
          out.println("The proxy is already running (pid " + proxyPid + ")");
        } else {
          Map<String, String> properties = new TreeMap<>(masters.clientProperties());
          if (tls != null) {
            properties.put(ProxyKeys.TLS_CERTIFICATE.name(), tls.certificate().toString());
            properties.put(ProxyKeys.TLS_KEY.name(), tls.key().toString());
          }
          Process p = start(proxy, properties);
          proxyPid = p.pid();
          waitUntil(
              "proxy did not become ready",
              List.of(new Started(proxy, p)),
              deadline,
              this::proxyHealthy);
        }
      }
      printSummary(out, fs, masters, masterPids, workerPid, live[0]);
      if (proxy != null) {
        printProxy(out, proxyPid, key, tls);
      }
      out.println("Stop with: bin/strata local down");
    }
    return 0;
  }

  /**
   * Fails before anything starts when a port a process would listen on is taken: otherwise the
   * process dies on it while the wait for it asks whoever holds the port (often the cluster of
   * another STRATA_HOME) and takes that for success.
   */
  private void refuseTakenPorts(Role role, Map<String, String> properties, ConfigKey... ports)
      throws StrataException {
    StrataConfig c = properties.isEmpty() ? conf() : conf().with(properties);
    for (ConfigKey key : ports) {
      int port = c.getInt(key);
      if (port > 0 && taken(port)) {
        throw new StrataException(
            ErrorCode.FAILED_PRECONDITION,
            "Port "
                + port
                + " ("
                + key.name()
                + ") of the "
                + role.name()
                + " is in use by another process, such"
                + " as a cluster of another STRATA_HOME: stop it, or give this cluster other ports"
                + " ("
                + key.envName()
                + "=... or -D"
                + key.name()
                + "=...)");
      }
    }
  }

  private static boolean taken(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress("127.0.0.1", port));
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  /** The backup folder made absolute, when it holds a HEADER; else a usage error. */
  private static Path checkBackup(Path restore) {
    Path dir = restore.toAbsolutePath().normalize();
    if (!Files.isRegularFile(dir.resolve("HEADER"))) {
      throw new UsageException(
          restore
              + " is not a backup: a backup folder (backup-<time>-"
              + "<index>/, printed by `strata fsadmin backup`) holds a HEADER file");
    }
    return dir;
  }

  /** Refuses to start masters of one layout while a master of the other one runs. */
  private void refuseOtherLayout(LocalMasters masters) throws IOException {
    List<String> ours = masters.members().stream().map(mm -> mm.role().name()).toList();
    for (Role r : LocalMasters.pidFileRoles(runDir(), master)) {
      Optional<ProcessHandle> h = pidFile(r).running();
      if (h.isPresent() && !ours.contains(r.name())) {
        int running = LocalMasters.lastCount(conf());
        throw new UsageException(
            "A local cluster with "
                + (running == 1 ? "one master" : running + " masters")
                + " is running ("
                + r.name()
                + ", pid "
                + h.get().pid()
                + "): stop it with `strata local down` before starting "
                + (ours.size() == 1 ? "one master" : ours.size() + " masters"));
      }
    }
  }

  private Path credentialsFile() {
    return Path.of(conf().getString(ProxyKeys.CREDENTIALS_FILE));
  }

  /**
   * The local user's access key, generated into the credentials file (mode 0600) when the file does
   * not exist yet; the first key of the file otherwise.
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
      s.getOutputStream()
          .write(
              ("GET /health HTTP/1.0\r\nHost: " + host + "\r\n\r\n")
                  .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      byte[] head = s.getInputStream().readNBytes(12);
      return new String(head, java.nio.charset.StandardCharsets.US_ASCII).endsWith("200");
    } catch (IOException e) {
      return false;
    }
  }

  private void printProxy(
      PrintStream out,
      long pid,
      ProxyCredentials.Credential key,
      LocalProxyTls.CertificateAndKey tls) {
    StrataConfig c = conf();
    // A proxy already running keeps the scheme it started with, which the flag cannot change.
    boolean https = tls != null || !c.getString(ProxyKeys.TLS_CERTIFICATE).isEmpty();
    out.printf(
        "  S3 proxy:     %s://%s:%d, pid %d%n",
        https ? "https" : "http", c.getString(ProxyKeys.HOSTNAME), c.getInt(ProxyKeys.PORT), pid);
    if (tls != null) {
      out.printf(
          "  S3 TLS:       self-signed certificate %s; clients trust it with%n"
              + "                AWS_CA_BUNDLE=%s (AWS CLI, boto3) or --ca-bundle %s%n",
          tls.certificate(), tls.certificate(), tls.certificate());
    }
    if (key != null) {
      out.printf(
          "  S3 key:       access key %s of user %s; secret in %s%n",
          key.accessKey(), key.user(), credentialsFile());
      out.println("                (`bin/strata proxy credentials` prints the keys)");
    }
  }

  /**
   * Sends SIGTERM to the proxy, the worker and then every master (of either layout), kills them if
   * they linger, and removes the client file of several masters.
   */
  public int down() throws IOException {
    boolean stopped = proxy != null && stop(proxy);
    stopped |= stop(worker);
    for (Role r : LocalMasters.pidFileRoles(runDir(), master)) {
      stopped |= stop(r);
    }
    LocalClientConf.delete(conf());
    if (!stopped) {
      ctx.out().println("Strata is not running locally.");
    }
    return 0;
  }

  /** Prints which processes are running and, with several masters, which one leads. */
  public int status() throws IOException {
    LocalMasters masters = LocalMasters.of(conf(), master, LocalMasters.lastCount(conf()), null);
    if (masters.several()) {
      LocalStatus.printMasters(ctx, masters, this::running);
    } else {
      printRunning(master, "");
    }
    printRunning(worker, "");
    if (proxy != null) {
      printRunning(
          proxy,
          ", S3 endpoint http://"
              + conf().getString(ProxyKeys.HOSTNAME)
              + ":"
              + conf().getInt(ProxyKeys.PORT));
    }
    return 0;
  }

  private void printRunning(Role role, String where) throws IOException {
    Optional<ProcessHandle> h = running(role);
    ctx.out()
        .println(
            role.name()
                + ": "
                + (h.isPresent() ? "running (pid " + h.get().pid() + ")" + where : "not running"));
  }

  /** The process of a role's pid file, when it runs. */
  Optional<ProcessHandle> running(Role role) throws IOException {
    return pidFile(role).running();
  }

  /**
   * Starts a process with the shell's {@code -Dstrata.*} options and then {@code properties}, which
   * win.
   */
  private Process start(Role role, Map<String, String> properties) throws IOException {
    String classpath = ctx.env().get(role.classpathVariable());
    if (classpath == null || classpath.isEmpty()) {
      throw new UsageException(
          role.classpathVariable()
              + " is not set: run `strata local up`"
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
    for (Map.Entry<String, String> e : properties.entrySet()) {
      cmd.add("-D" + e.getKey() + "=" + e.getValue());
    }
    cmd.add("-cp");
    cmd.add(classpath);
    cmd.add(role.mainClass());
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(logsDir().resolve(role.name() + ".out").toFile()));
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

  /** A process this command started. */
  private record Started(Role role, Process process) {}

  /**
   * Polls {@code probe} until it holds. Fails at once when a process it started exits, and at the
   * deadline saying "The {@code what} within ..." after stopping the processes it started.
   */
  private void waitUntil(String what, List<Started> started, long deadline, Probe probe)
      throws IOException {
    while (true) {
      for (Started s : started) {
        if (!s.process().isAlive()) {
          pidFile(s.role()).delete();
          throw new StrataException(
              ErrorCode.UNAVAILABLE,
              "The "
                  + s.role().name()
                  + " exited during start-up (exit code "
                  + s.process().exitValue()
                  + "). See "
                  + logsDir().resolve(s.role().name() + ".log")
                  + " and "
                  + logsDir().resolve(s.role().name() + ".out"));
        }
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
        List<String> logs = new ArrayList<>();
        for (Started s : started) {
          stopProcess(s.process().toHandle());
          pidFile(s.role()).delete();
          logs.add(logsDir().resolve(s.role().name() + ".log").toString());
        }
        throw new StrataException(
            ErrorCode.UNAVAILABLE,
            "The "
                + what
                + " within "
                + conf().getDuration(ClientKeys.LOCAL_START_TIMEOUT).toSeconds()
                + "s"
                + (started.isEmpty()
                    ? ""
                    : " and "
                        + (started.size() == 1 ? "was" : "were")
                        + " stopped. See "
                        + String.join(" and ", logs))
                + " (raise "
                + ClientKeys.LOCAL_START_TIMEOUT.name()
                + " if it only needs longer)");
      }
      try {
        Thread.sleep(POLL_MS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new StrataException(
            ErrorCode.UNAVAILABLE, "Interrupted while waiting: the " + what + " yet");
      }
    }
  }

  /** The live worker this command started: the one at the configured address. */
  private WorkerInfo liveWorker(List<WorkerInfo> workers) {
    String host = conf().getString(WorkerKeys.HOSTNAME);
    int rpcPort = conf().getInt(WorkerKeys.RPC_PORT);
    for (WorkerInfo w : workers) {
      if (w.getState() == WorkerState.WORKER_LIVE
          && w.getAddress().getHost().equals(host)
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
    ctx.out()
        .println(
            "Stopped the "
                + role.name()
                + " (pid "
                + h.get().pid()
                + ")"
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
      throw new StrataException(
          ErrorCode.INTERNAL, "Process " + h.pid() + " is still alive after SIGKILL");
    }
    return true;
  }

  private void printSummary(
      PrintStream out,
      FileSystem fs,
      LocalMasters masters,
      long[] masterPids,
      long workerPid,
      WorkerInfo w) {
    StrataConfig c = conf();
    String masterHost = c.getString(CommonKeys.MASTER_HOSTNAME);
    out.println();
    out.println("Strata is running locally.");
    if (masters.several()) {
      for (int i = 0; i < masterPids.length; i++) {
        LocalMasters.Member mm = masters.members().get(i);
        out.printf(
            "  %-13s %s (gRPC), journal %s, web port %d, pid %d%s%n",
            mm.role().name() + ":",
            mm.address(),
            mm.journalAddress(),
            mm.webPort(),
            masterPids[i],
            mm.address().equals(fs.masterAddress()) ? ", leader" : "");
      }
      out.printf(
          "  client conf:  %s (strata.master.addresses for later commands)%n",
          LocalClientConf.file(c));
    } else {
      out.printf("  master:       %s (gRPC), pid %d%n", fs.masterAddress(), masterPids[0]);
      out.printf(
          "  master web:   http://%s:%d/metrics and /health%n",
          masterHost, c.getInt(MasterKeys.WEB_PORT));
    }
    out.printf(
        "  worker:       %s rpc port %d, data port %d, pid %d%n",
        w.getAddress().getHost(),
        w.getAddress().getRpcPort(),
        w.getAddress().getDataPort(),
        workerPid);
    int webPort =
        w.getAddress().getWebPort() > 0
            ? w.getAddress().getWebPort()
            : c.getInt(WorkerKeys.WEB_PORT);
    out.printf(
        "  worker web:   http://%s:%d/metrics and /health%n", w.getAddress().getHost(), webPort);
    String ufs = c.getString(MasterKeys.ROOT_UFS);
    out.printf(
        "  under store:  %s%n",
        ufs.startsWith("file://") ? ufs.substring("file://".length()) + " (" + ufs + ")" : ufs);
    out.printf("  tiers:        %s%n", tiers(c));
    String masterLogs =
        masters.several()
            ? masters.members().get(0).role().name()
                + ".log ... "
                + masters.members().get(masterPids.length - 1).role().name()
                + ".log"
            : "master.log";
    out.printf(
        "  logs:         %s (%s)%n",
        logsDir(), masterLogs + ", worker.log" + (proxy == null ? "" : ", proxy.log"));
  }

  private static String tiers(StrataConfig c) {
    List<String> out = new ArrayList<>();
    tier(out, c, "MEM", WorkerKeys.MEM_DIR, WorkerKeys.MEM_CAPACITY);
    tier(out, c, "SSD", WorkerKeys.SSD_DIR, WorkerKeys.SSD_CAPACITY);
    tier(out, c, "HDD", WorkerKeys.HDD_DIR, WorkerKeys.HDD_CAPACITY);
    return out.isEmpty() ? "none" : String.join(", ", out);
  }

  private static void tier(
      List<String> out, StrataConfig c, String alias, ConfigKey dir, ConfigKey capacity) {
    long bytes = c.getBytes(capacity);
    if (bytes > 0) {
      out.add(alias + " " + c.getString(dir) + " (" + Format.human(bytes) + ")");
    }
  }
}
