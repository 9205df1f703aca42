package io.strata.tests;

import io.strata.common.conf.StrataConfig;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * A Strata cluster of real processes on 127.0.0.1: one master JVM (or an odd number replicating one
 * journal, each on a loopback address a test may choose, see {@link ClusterMasters}) and N worker
 * JVMs, each with its own ports, folders and log file under a base folder, started the way
 * `bin/strata` starts them (same main classes, configuration as -D properties). Tests and
 * benchmarks drive it through the public client API and the command line, and can kill -9, pause
 * (SIGSTOP) and restart any process. Every process and client gets the masters' addresses.
 *
 * <p>The child JVMs use this JVM's classpath (under Surefire, its test classpath), so whatever the
 * build just compiled is what runs, unless a test starts processes from another {@link Release}
 * (such as {@link Release#previous()}) to run two releases side by side: each process then gets
 * only the configuration keys its release knows, and {@link #releaseOf} says what each one runs. A
 * process started again without a release named keeps the one it ran.
 */
public final class MultiProcessCluster implements AutoCloseable {
  private final Path base;
  private final Map<String, String> common;
  private final Map<Integer, Map<String, String>> perWorker;

  /** The release a process starts from unless a test names another. */
  private final Release release;

  /** The release each process last started from, by its name in the logs folder. */
  private final Map<String, Release> releases = new HashMap<>();

  private final ClusterLauncher launcher;
  private final ClusterMounts mounts;
  private final String memTierRoot;
  private final List<String> workerJvmOptions;
  private final ClusterMasters masters;
  private Process proxy;
  private int proxyPort;
  private int proxyWebPort;
  private final Map<Integer, Process> workers = new LinkedHashMap<>();
  private final Map<Integer, int[]> workerPorts = new HashMap<>();

  private MultiProcessCluster(Builder b) throws IOException {
    this.base = b.base;
    this.common = new LinkedHashMap<>(b.properties);
    this.perWorker = b.perWorker;
    this.workerJvmOptions = b.workerJvmOptions;
    this.release = b.release;
    this.launcher = new ClusterLauncher(logsDir());
    this.mounts = new ClusterMounts(launcher, logsDir());
    this.memTierRoot = "/dev/shm/strata-test-" + UUID.randomUUID();
    this.masters = new ClusterMasters(base, b.masterHosts, b.masterHostsGiven);
    Files.createDirectories(base.resolve("conf"));
    Files.createDirectories(underStoreRoot());
    Files.createDirectories(logsDir());
    common.putIfAbsent("strata.home", base.toString());
    common.putIfAbsent("strata.conf.dir", base.resolve("conf").toString());
    masters.commonProperties().forEach(common::putIfAbsent);
    common.putIfAbsent("strata.master.root.ufs", "file://" + underStoreRoot());
    common.putIfAbsent("strata.client.master.retry.max.duration", "20s");
  }

  /**
   * The classpath for Strata's processes: this JVM's, less the test servers that tests run
   * in-process (the HDFS mini-cluster and the S3 server). The mini-cluster jar carries its own copy
   * of Netty's native epoll library, which would silently turn epoll off in a worker.
   */
  static String serverClasspath(String classpath) {
    StringBuilder out = new StringBuilder();
    for (String entry : classpath.split(File.pathSeparator)) {
      String name =
          Path.of(entry).getFileName() == null ? entry : Path.of(entry).getFileName().toString();
      if (name.startsWith("hadoop-client-minicluster") || name.startsWith("s3proxy")) {
        continue;
      }
      if (out.length() > 0) {
        out.append(File.pathSeparator);
      }
      out.append(entry);
    }
    return out.toString();
  }

  public static Builder builder(Path base) {
    return new Builder(base);
  }

  /** Configures and starts a cluster. */
  public static final class Builder {
    private final Path base;
    private final Map<String, String> properties = new LinkedHashMap<>();
    private final Map<Integer, Map<String, String>> perWorker = new HashMap<>();
    private final List<String> workerJvmOptions = new ArrayList<>();
    private int workerCount = 1;
    private List<String> masterHosts = List.of("127.0.0.1");
    private boolean masterHostsGiven;
    private Release release = Release.current();

    private Builder(Path base) {
      this.base = base;
    }

    /** The release every process starts from, unless a test names another (default: current). */
    public Builder release(Release r) {
      this.release = java.util.Objects.requireNonNull(r);
      return this;
    }

    public Builder workers(int count) {
      this.workerCount = count;
      return this;
    }

    /**
     * How many masters: 1 (the default) or an odd number that replicate one journal, all on
     * 127.0.0.1 with ports of their own.
     */
    public Builder masters(int count) {
      if (count < 1 || count % 2 == 0) {
        throw new IllegalArgumentException("masters: 1 or an odd number, not " + count);
      }
      this.masterHosts = java.util.Collections.nCopies(count, "127.0.0.1");
      this.masterHostsGiven = false;
      return this;
    }

    /**
     * One master per host address given (such as 127.0.0.2, 127.0.0.3, 127.0.0.4), each binding,
     * advertising and replicating on its own address.
     */
    public Builder masterHosts(String... hosts) {
      if (hosts.length < 1 || hosts.length % 2 == 0) {
        throw new IllegalArgumentException("masters: 1 or an odd number, not " + hosts.length);
      }
      this.masterHosts = List.of(hosts);
      this.masterHostsGiven = true;
      return this;
    }

    /** A configuration value for every process and for clients. */
    public Builder property(String key, String value) {
      properties.put(key, value);
      return this;
    }

    /** A configuration value for one worker only. */
    public Builder workerProperty(int worker, String key, String value) {
      perWorker.computeIfAbsent(worker, w -> new LinkedHashMap<>()).put(key, value);
      return this;
    }

    public Builder workerJvmOption(String option) {
      workerJvmOptions.add(option);
      return this;
    }

    public MultiProcessCluster start() throws IOException {
      MultiProcessCluster c = new MultiProcessCluster(this);
      try {
        c.startMaster();
        for (int i = 0; i < workerCount; i++) {
          c.startWorker(i);
        }
        c.waitForLiveWorkers(workerCount, Duration.ofSeconds(60));
      } catch (IOException | RuntimeException e) {
        c.close();
        throw e;
      }
      return c;
    }
  }

  public Path base() {
    return base;
  }

  /** The folder mounted at the namespace root. */
  public Path underStoreRoot() {
    return base.resolve("underfs");
  }

  public Path logsDir() {
    return base.resolve("logs");
  }

  /** The gRPC port of the (first) master. */
  public int masterPort() {
    return masters.master(0).rpcPort();
  }

  /** The web port of the (first) master. */
  public int masterWebPort() {
    return masters.master(0).webPort();
  }

  /** How many masters the cluster has. */
  public int masterCount() {
    return masters.count();
  }

  /** Every master's gRPC address, host:port, in index order. */
  public List<String> masterAddresses() {
    return masters.addresses();
  }

  /** The web port of master i. */
  public int masterWebPort(int i) {
    return masters.master(i).webPort();
  }

  /**
   * The folder of master i's journal: {@code <base>/master<i>/journal} with several masters, {@code
   * <base>/master/journal} (the default under strata.home) with one.
   */
  public Path masterJournalDir(int i) {
    return masters.several()
        ? masters.master(i).dir().resolve("journal")
        : base.resolve("master/journal");
  }

  /**
   * The index of the leading master, asking each running one (GetQuorumInfo); -1 while none leads.
   */
  public synchronized int leaderIndex() {
    return masters.leaderIndex(clientConfig());
  }

  /** Waits until a master leads and returns its index. */
  public int awaitLeader(Duration timeout) {
    return masters.awaitLeader(clientConfig(), timeout);
  }

  public int workerWebPort(int worker) {
    return workerPorts.get(worker)[3];
  }

  public int workerDataPort(int worker) {
    return workerPorts.get(worker)[1];
  }

  /** Configuration for a client of this cluster, with optional overrides. */
  public StrataConfig clientConfig(Map<String, String> overrides) {
    Map<String, String> all = new LinkedHashMap<>(common);
    all.putAll(overrides);
    return StrataConfig.load(all);
  }

  public StrataConfig clientConfig() {
    return clientConfig(Map.of());
  }

  /** The configuration every process gets, as -D arguments. */
  public List<String> configArgs(Map<String, String> extra) {
    List<String> args = new ArrayList<>();
    configuration(extra).forEach((k, v) -> args.add("-D" + k + "=" + v));
    return args;
  }

  /** The configuration every process gets, with {@code extra} over it. */
  private Map<String, String> configuration(Map<String, String> extra) {
    Map<String, String> all = new LinkedHashMap<>(common);
    all.putAll(extra);
    return all;
  }

  /** The release process {@code name} last started from, else the cluster's. */
  private Release releaseFor(String name) {
    return releases.getOrDefault(name, release);
  }

  /**
   * The release a process last started from: a master or worker by index, the proxy with index 0
   * (FUSE mounts say theirs: {@link FuseProcess#release()}).
   *
   * @throws IllegalStateException when that process never started
   */
  public synchronized Release releaseOf(Release.Role role, int index) {
    String name =
        switch (role) {
          case MASTER -> masters.master(index).name();
          case WORKER -> "worker" + index;
          case PROXY -> "proxy";
          default ->
              throw new IllegalArgumentException(
                  "a cluster starts no " + role + " process by index");
        };
    Release r = releases.get(name);
    if (r == null) {
      throw new IllegalStateException(role + " " + index + " never started");
    }
    return r;
  }

  /**
   * Starts every master that is not running and waits until each serves its web endpoint and, with
   * several, until one leads. Fails when the (only) master already runs.
   */
  public synchronized void startMaster() throws IOException {
    if (!masters.several() && masters.running(0)) {
      throw new IllegalStateException("master already running");
    }
    List<Integer> started = new ArrayList<>();
    for (int i = 0; i < masters.count(); i++) {
      if (!masters.running(i)) {
        masters.launch(i, masterLauncher(releaseFor(masters.master(i).name())));
        started.add(i);
      }
    }
    for (int i : started) {
      awaitMasterWeb(i);
    }
    if (masters.several()) {
      masters.awaitLeader(clientConfig(), Duration.ofSeconds(60));
    }
  }

  /**
   * Starts master i again on its ports and folders (after {@link #killMaster(int)}, or stopping it
   * with SIGTERM first when it runs) and waits until it serves its web endpoint. It runs the
   * release it ran before.
   */
  public synchronized void restartMaster(int i) throws IOException, InterruptedException {
    restartMaster(i, releaseFor(masters.master(i).name()));
  }

  /** As {@link #restartMaster(int)}, starting master i from release {@code r}. */
  public synchronized void restartMaster(int i, Release r)
      throws IOException, InterruptedException {
    Process p = masters.process(i);
    if (masters.running(i)) {
      masters.resume(i);
      p.destroy();
      if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
        masters.kill(i);
      }
    }
    masters.launch(i, masterLauncher(r));
    awaitMasterWeb(i);
  }

  private ClusterMasters.Launcher masterLauncher(Release r) {
    return (name, props, jvm) -> launch(name, Release.Role.MASTER, r, props, jvm);
  }

  private void awaitMasterWeb(int i) {
    ClusterMasters.Master m = masters.master(i);
    try {
      waitFor(
          m.name() + " web endpoint",
          Duration.ofSeconds(60),
          () -> healthy(m.host(), m.webPort()),
          masters.process(i));
    } catch (IllegalStateException e) {
      throw new IllegalStateException(
          e.getMessage()
              + "; last lines of its log:\n"
              + tail(logsDir().resolve(m.name() + ".log"))
              + tail(logsDir().resolve(m.name() + ".out")),
          e);
    }
  }

  /**
   * Starts worker {@code index} (again, after {@link #killWorker(int)}, on the same ports and
   * folders) from the release it ran before, else the cluster's, and waits until it serves its web
   * endpoint.
   */
  public synchronized void startWorker(int index) throws IOException {
    startWorker(index, releaseFor("worker" + index));
  }

  /** As {@link #startWorker(int)}, from release {@code r}. */
  public synchronized void startWorker(int index, Release r) throws IOException {
    Process old = workers.get(index);
    if (old != null && old.isAlive()) {
      throw new IllegalStateException("worker " + index + " already running");
    }
    boolean freshPorts = !workerPorts.containsKey(index);
    // Free ports are picked before the worker binds them, so another process can take one in
    // between; a first start that dies on a taken port is tried again on other ports.
    for (int attempt = 1; ; attempt++) {
      try {
        launchWorker(index, r);
        return;
      } catch (IllegalStateException e) {
        String log =
            tail(logsDir().resolve("worker" + index + ".log"))
                + tail(logsDir().resolve("worker" + index + ".out"));
        if (freshPorts
            && attempt < 3
            && !workers.get(index).isAlive()
            && log.contains("already in use")) {
          workerPorts.remove(index);
          continue;
        }
        throw new IllegalStateException(e.getMessage() + "; last lines of its log:\n" + log, e);
      }
    }
  }

  /**
   * Stops worker {@code index} with SIGTERM and waits for it to exit (killing it after 30 s), then
   * starts it from release {@code r} on the same ports and folders: a rolling upgrade or downgrade
   * of one worker.
   */
  public synchronized void restartWorker(int index, Release r)
      throws IOException, InterruptedException {
    Process p = workers.get(index);
    if (p == null) {
      throw new IllegalStateException("worker " + index + " never started");
    }
    if (p.isAlive()) {
      p.destroy();
      if (!p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
        kill(p);
      }
    }
    startWorker(index, r);
  }

  /** The last 20 lines of a log file, or "" when it cannot be read. */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size())) + "\n";
    } catch (IOException | UncheckedIOException e) {
      return "";
    }
  }

  private void launchWorker(int index, Release r) throws IOException {
    int[] ports = workerPorts.get(index);
    if (ports == null) {
      ports = new int[] {freePort(), freePort(), 0, freePort()};
      workerPorts.put(index, ports);
    }
    Map<String, String> props = new LinkedHashMap<>();
    props.put("strata.worker.rpc.port", Integer.toString(ports[0]));
    props.put("strata.worker.data.port", Integer.toString(ports[1]));
    props.put("strata.worker.web.port", Integer.toString(ports[3]));
    props.put("strata.worker.tier.mem.dir", memTierRoot + "/worker" + index);
    props.put("strata.worker.tier.ssd.dir", base.resolve("worker" + index + "/ssd").toString());
    props.put("strata.worker.tier.hdd.dir", base.resolve("worker" + index + "/hdd").toString());
    props.putIfAbsent("strata.worker.tier.mem.capacity", "64MB");
    props.putIfAbsent("strata.worker.tier.ssd.capacity", "1GB");
    props.putAll(perWorker.getOrDefault(index, Map.of()));
    List<String> jvm = new ArrayList<>(List.of("-Xmx512m"));
    jvm.addAll(workerJvmOptions);
    Process p = launch("worker" + index, Release.Role.WORKER, r, props, jvm);
    workers.put(index, p);
    int web = ports[3];
    waitFor("worker " + index + " web endpoint", Duration.ofSeconds(60), () -> healthy(web), p);
  }

  /** Starts a server process of the cluster from release {@code r} and records its release. */
  private Process launch(
      String name, Release.Role role, Release r, Map<String, String> props, List<String> jvmOptions)
      throws IOException {
    Map<String, String> all = new LinkedHashMap<>();
    all.put("logback.configurationFile", "strata-logback-file.xml");
    all.put("strata.log.file", logsDir().resolve(name + ".log").toString());
    all.putAll(configuration(props));
    Process p = launcher.launch(name, r, role, all, jvmOptions, List.of());
    releases.put(name, r);
    return p;
  }

  /**
   * Starts an S3 proxy with these extra properties and JVM options (for example a heap bound) and
   * waits until it serves; its port is {@link #proxyPort()}. The credentials file is {@code
   * strata.proxy.credentials.file} when given, else {@code conf/proxy-credentials}.
   */
  public synchronized void startProxy(Map<String, String> extra, List<String> jvmOptions)
      throws IOException {
    startProxy(extra, jvmOptions, releaseFor("proxy"));
  }

  /** As {@link #startProxy(Map, List)}, from release {@code r}. */
  public synchronized void startProxy(Map<String, String> extra, List<String> jvmOptions, Release r)
      throws IOException {
    if (proxy != null && proxy.isAlive()) {
      throw new IllegalStateException("proxy already running");
    }
    if (proxyPort == 0) {
      proxyPort = freePort();
      proxyWebPort = freePort();
    }
    Map<String, String> props = new LinkedHashMap<>();
    props.put("strata.proxy.port", Integer.toString(proxyPort));
    props.put("strata.proxy.web.port", Integer.toString(proxyWebPort));
    props.put("strata.proxy.credentials.file", base.resolve("conf/proxy-credentials").toString());
    props.putAll(extra);
    List<String> jvm = new ArrayList<>(List.of("-Xmx512m"));
    jvm.addAll(jvmOptions);
    proxy = launch("proxy", Release.Role.PROXY, r, props, jvm);
    int web = proxyWebPort;
    try {
      waitFor("proxy web endpoint", Duration.ofSeconds(60), () -> healthy(web), proxy);
    } catch (IllegalStateException e) {
      throw new IllegalStateException(
          e.getMessage()
              + "; last lines of its log:\n"
              + tail(logsDir().resolve("proxy.log"))
              + tail(logsDir().resolve("proxy.out")),
          e);
    }
  }

  public int proxyPort() {
    return proxyPort;
  }

  public int proxyWebPort() {
    return proxyWebPort;
  }

  /** The proxy's process, to read its memory or see whether it died. */
  public synchronized Process proxyProcess() {
    return proxy;
  }

  public synchronized void killProxy() throws InterruptedException {
    kill(proxy);
  }

  /**
   * Mounts the namespace root at {@code mountPoint} (an existing folder) with a FUSE process of
   * release {@code r}, started as {@code strata fuse mount} starts it (FuseMain, the heap bounds of
   * strata.fuse.heap.size and strata.fuse.direct.memory.size, the cluster's configuration with
   * {@code extra} over it), and waits until the kernel lists the mount. Its logs are {@code
   * <logs>/<name>.log} and {@code .out}, named by {@link FuseProcess#name()}.
   */
  public synchronized FuseProcess startFuse(Path mountPoint, Map<String, String> extra, Release r)
      throws IOException {
    return mounts.start(
        mountPoint,
        configuration(extra),
        io.strata.shell.fuse.FuseLauncher.jvmOptions(clientConfig(extra)),
        r);
  }

  /**
   * Unmounts a FUSE mount and ends its process: SIGTERM, then {@code fusermount -u -z} and a kill
   * when it does not go within 30 s.
   *
   * @return whether SIGTERM alone unmounted it and ended the process
   * @throws IllegalStateException when the mount point stays mounted
   */
  public synchronized boolean stopFuse(FuseProcess fuse) throws InterruptedException {
    return mounts.stop(fuse);
  }

  /**
   * Writes the proxy's credentials file ({@code conf/proxy-credentials}, readable by its owner
   * only), one key per entry: {@code "<access key> <secret key> <user>"}. Call before {@link
   * #startProxy}.
   */
  public void writeProxyCredentials(String... keys) throws IOException {
    Path credentials = base().resolve("conf/proxy-credentials");
    Files.writeString(credentials, "# test keys\n" + String.join("\n", keys) + "\n");
    Files.setPosixFilePermissions(
        credentials, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
  }

  /** Kills a FUSE mount's process with SIGKILL and detaches its dead mount point. */
  public synchronized void killFuse(FuseProcess fuse) throws InterruptedException {
    mounts.kill(fuse);
  }

  /**
   * The files of a cached block in every tier of every worker: what a test damages to check that
   * nobody is handed a block that changed at rest.
   */
  public List<Path> blockFiles(long blockId) throws IOException {
    List<Path> out = new ArrayList<>();
    for (int index : workers.keySet()) {
      for (Path tier :
          List.of(
              Path.of(memTierRoot, "worker" + index),
              base.resolve("worker" + index + "/ssd"),
              base.resolve("worker" + index + "/hdd"))) {
        Path f = io.strata.common.BlockFiles.committed(tier, blockId);
        if (Files.isRegularFile(f)) {
          out.add(f);
        }
      }
    }
    return out;
  }

  /** The process id of a running worker (for RSS readings). */
  public synchronized long workerPid(int index) {
    return workers.get(index).pid();
  }

  /** The process id of the running (first) master. */
  public synchronized long masterPid() {
    return masters.process(0).pid();
  }

  /** The process id of master i. */
  public synchronized long masterPid(int i) {
    return masters.process(i).pid();
  }

  /** kill -9 of every master. */
  public synchronized void killMaster() throws InterruptedException {
    for (int i = 0; i < masters.count(); i++) {
      masters.kill(i);
    }
  }

  /** kill -9 of master i. */
  public synchronized void killMaster(int i) throws InterruptedException {
    masters.kill(i);
  }

  /** SIGSTOP of master i: it keeps its connections open and answers nothing. */
  public synchronized void pauseMaster(int i) throws IOException, InterruptedException {
    masters.pause(i);
  }

  /** SIGCONT of a paused master i. */
  public synchronized void resumeMaster(int i) throws IOException, InterruptedException {
    masters.resume(i);
  }

  /** kill -9 of one worker. */
  public synchronized void killWorker(int index) throws InterruptedException {
    kill(workers.get(index));
  }

  private static void kill(Process p) throws InterruptedException {
    if (p != null && p.isAlive()) {
      p.destroyForcibly();
      p.waitFor();
    }
  }

  /** Waits until the (leading) master reports {@code count} live workers. */
  public void waitForLiveWorkers(int count, Duration timeout) {
    waitFor(
        count + " live workers",
        timeout,
        () -> liveWorkers() == count,
        masters.several() ? null : masters.process(0));
  }

  /** Live workers according to the (leading) master's metrics endpoint. */
  public int liveWorkers() {
    String metrics = scrapeMaster();
    for (String line : metrics.split("\n")) {
      if (line.startsWith("strata_master_workers") && line.contains("state=\"live\"")) {
        return (int) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** The value of a metric line (name and tags as printed by Prometheus), summed over tags. */
  public static double metric(String scrape, String name) {
    double sum = 0;
    for (String line : scrape.split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  public String scrapeWorker(int index) {
    return scrape(workerWebPort(index));
  }

  /** The metrics of any process of this machine by its web port. */
  public static String scrapePort(int port) {
    return scrape(port);
  }

  /** The metrics of the master, or with several of the leader ("" while none leads). */
  public String scrapeMaster() {
    int i = masters.several() ? leaderIndex() : 0;
    return i < 0 ? "" : scrape(masters.master(i).host(), masters.master(i).webPort());
  }

  static String scrape(int port) {
    return scrape("127.0.0.1", port);
  }

  private static String scrape(String host, int port) {
    try {
      HttpURLConnection c =
          (HttpURLConnection)
              URI.create("http://" + host + ":" + port + "/metrics").toURL().openConnection();
      c.setConnectTimeout(2000);
      c.setReadTimeout(5000);
      try (var in = c.getInputStream()) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      return "";
    }
  }

  private static boolean healthy(int port) {
    return healthy("127.0.0.1", port);
  }

  private static boolean healthy(String host, int port) {
    try {
      HttpURLConnection c =
          (HttpURLConnection)
              URI.create("http://" + host + ":" + port + "/health").toURL().openConnection();
      c.setConnectTimeout(500);
      c.setReadTimeout(1000);
      return c.getResponseCode() == 200;
    } catch (IOException e) {
      return false;
    }
  }

  /** Polls a condition until it holds; fails when the deadline passes or the process died. */
  public static void waitFor(
      String what, Duration timeout, BooleanSupplier condition, Process process) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (process != null && !process.isAlive()) {
        throw new IllegalStateException(
            "process died (exit " + process.exitValue() + ") while waiting for " + what);
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + timeout + " waiting for " + what);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what);
      }
    }
  }

  /** Result of running the command line. */
  public record ShellResult(int exitCode, String stdout, String stderr) {}

  /**
   * Runs {@code strata ARGS...} in a new JVM as a user would, against this cluster, with optional
   * extra configuration (as -D properties).
   */
  public ShellResult shell(Map<String, String> conf, String... args) throws IOException {
    Path out = Files.createTempFile(base, "shell", ".out");
    try {
      ShellResult r = run(conf, out, args);
      return new ShellResult(r.exitCode(), Files.readString(out), r.stderr());
    } finally {
      Files.delete(out);
    }
  }

  /** Runs the command line with its standard output going to a file (for binary output). */
  public ShellResult shellToFile(Path stdout, String... args) throws IOException {
    return run(Map.of(), stdout, args);
  }

  private ShellResult run(Map<String, String> conf, Path out, String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.addAll(configArgs(conf));
    cmd.add("-cp");
    cmd.add(Release.current().classpath(Release.Role.SHELL));
    cmd.add(Release.Role.SHELL.mainClass());
    cmd.addAll(List.of(args));
    Path err = Files.createTempFile(base, "shell", ".err");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    Process p = pb.start();
    try {
      if (!p.waitFor(180, java.util.concurrent.TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("strata " + String.join(" ", args) + " hung for 180s");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
    ShellResult r = new ShellResult(p.exitValue(), "", Files.readString(err));
    Files.delete(err);
    return r;
  }

  public ShellResult shell(String... args) throws IOException {
    return shell(Map.of(), args);
  }

  private static int freePort() throws IOException {
    return ClusterMasters.freePort("127.0.0.1");
  }

  @Override
  public synchronized void close() {
    // First, while the masters and workers they read from still serve.
    mounts.stopAll();
    List<Process> all = new ArrayList<>(workers.values());
    if (proxy != null) {
      all.add(0, proxy);
    }
    all.addAll(masters.forClose());
    for (Process p : all) {
      if (p.isAlive()) {
        p.destroy();
      }
    }
    for (Process p : all) {
      try {
        if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
          p.destroyForcibly();
          p.waitFor();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    deleteTree(Path.of(memTierRoot));
  }

  static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
