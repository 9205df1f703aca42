package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3Configuration;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.presigner.S3Presigner;

/**
 * {@code bench/run proxy}: Strata's S3 proxy beside S3Proxy (a Java S3 server of Maven Central,
 * here serving Strata's under-store folder with its filesystem store, so both serve the same files)
 * in the same run, each a JVM of its own on 127.0.0.1: GETs of cached 20 KiB objects by 1, 8 and 32
 * clients, a GET of a cached 1 GiB object, PUTs of 20 KiB and 64 MiB objects, and ListObjectsV2 of
 * 100,000 keys; ratios Strata / S3Proxy, and the Strata proxy's peak RSS. The load generator is in
 * this JVM: persistent raw HTTP connections, one per client thread, sending presigned requests
 * ({@link HttpConnection}), so that its own cost per request stays small next to the servers'.
 */
final class ProxyBench {
  private static final String KEY = "AKSTRATABENCHKEY0001";
  private static final String SECRET = "YmVuY2gtc2VjcmV0LWtleS1vZi10aGUtcHJveHkwMQ";
  private static final String BUCKET = "bench";

  private ProxyBench() {}

  /** One S3 server under test. */
  private record Server(String name, int port, S3Presigner presigner, S3Client client, long pid) {}

  static void run(Map<String, String> opts) throws Exception {
    int smallCount = Integer.parseInt(opts.getOrDefault("small", "2000"));
    int smallSize = (int) ConfigType.parseBytes(opts.getOrDefault("small-size", "20KB"));
    long largeSize = ConfigType.parseBytes(opts.getOrDefault("large", "1GB"));
    int listCount = Integer.parseInt(opts.getOrDefault("list", "100000"));
    int seconds = Integer.parseInt(opts.getOrDefault("seconds", "10"));
    int putSmall = Integer.parseInt(opts.getOrDefault("put-small", "2000"));
    int putLarge = Integer.parseInt(opts.getOrDefault("put-large", "8"));
    long putLargeSize = ConfigType.parseBytes(opts.getOrDefault("put-large-size", "64MB"));
    java.util.Set<String> rows =
        java.util.Set.of(
            opts.getOrDefault("rows", "get-small,get-large,put-small,put-large,list").split(","));
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-proxy");
    Path ufs = base.resolve("ufs");
    Path bucket = ufs.resolve(BUCKET);
    Files.createDirectories(bucket.resolve("small"));
    Files.createDirectories(bucket.resolve("list"));
    System.err.printf(
        "generating %d objects of %d bytes, one of %d bytes and %d to list in %s%n",
        smallCount, smallSize, largeSize, listCount, bucket);
    Random random = new Random(7);
    byte[] buf = new byte[smallSize];
    List<String> smallKeys = new ArrayList<>();
    for (int i = 0; i < smallCount; i++) {
      random.nextBytes(buf);
      String key = String.format("small/%05d", i);
      Files.write(bucket.resolve(key), buf);
      smallKeys.add(key);
    }
    TestTree.writeRandom(bucket.resolve("large.bin"), largeSize, 8);
    for (int i = 0; i < listCount; i++) {
      Files.write(bucket.resolve(String.format("list/k%06d", i)), new byte[0]);
    }
    long cached = (long) smallCount * smallSize + largeSize;
    String capacity = Long.toString(cached * 12 / 10 + (256L << 20));
    boolean mem = LoadBench.roomInShm(cached);
    Process s3proxy = null;
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(base.resolve("cluster"))
            .workers(1)
            .property("strata.master.root.ufs", "file://" + ufs)
            .workerProperty(0, "strata.worker.tier.mem.capacity", mem ? capacity : "0")
            .workerProperty(0, "strata.worker.tier.ssd.capacity", mem ? "0" : capacity)
            .start()) {
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        long start = System.nanoTime();
        LoadBench.awaitLoad(fs, "/" + BUCKET + "/small", "preload small");
        LoadBench.awaitLoad(fs, "/" + BUCKET + "/large.bin", "preload large");
        System.err.printf(
            "preloaded %.2f GB into the worker (%s) in %.1f s%n",
            cached / 1e9, mem ? "MEM tier" : "SSD tier", (System.nanoTime() - start) / 1e9);
      }
      Path credentials = base.resolve("cluster/conf/proxy-credentials");
      Files.writeString(
          credentials, KEY + " " + SECRET + " " + System.getProperty("user.name") + "\n");
      Files.setPosixFilePermissions(credentials, PosixFilePermissions.fromString("rw-------"));
      List<String> proxyJvm =
          new ArrayList<>(
              List.of("-Xms128m", "-Xmx1g", "-XX:MaxDirectMemorySize=512m", "-XX:+UseG1GC"));
      if (!opts.getOrDefault("proxy-jvm", "").isEmpty()) {
        // Extra options for the Strata proxy's JVM, for example a JFR recording.
        proxyJvm.addAll(List.of(opts.get("proxy-jvm").split(" ")));
      }
      // Settings of the Strata proxy, for example its write type.
      Map<String, String> proxyConf =
          Bench.settings("proxy-conf", opts.getOrDefault("proxy-conf", ""));
      cluster.startProxy(proxyConf, proxyJvm);
      int s3proxyPort = freePort();
      s3proxy = startS3Proxy(base, ufs, s3proxyPort);
      Server strata = server("Strata proxy", cluster.proxyPort(), cluster.proxyProcess().pid());
      Server other = server("S3Proxy", s3proxyPort, s3proxy.pid());
      List<Server> both = List.of(strata, other);

      Table t =
          new Table("operation", "clients", "Strata proxy", "S3Proxy", "Strata/S3Proxy", "target");
      // Warm both servers and their JVMs on every object once.
      for (Server s : both) {
        gets(s, smallKeys, 8, 0, smallKeys.size());
        gets(s, List.of("large.bin"), 1, 0, 1);
      }
      String getCpu = null;
      for (int clients : rows.contains("get-small") ? new int[] {1, 8, 32} : new int[0]) {
        long self = ProcessHandle.current().pid();
        double proxyCpu = Breakdown.cpuSeconds(strata.pid());
        double selfCpu = Breakdown.cpuSeconds(self);
        double a = gets(strata, smallKeys, clients, seconds, 0);
        if (clients == 32) {
          double n = a * seconds;
          getCpu =
              String.format(
                  "CPU per cached %s GET at 32 clients: Strata proxy %.1f us,"
                      + " load generator %.1f us (both cores: %.1f us)",
                  ReadBench.human(smallSize),
                  (Breakdown.cpuSeconds(strata.pid()) - proxyCpu) / n * 1e6,
                  (Breakdown.cpuSeconds(self) - selfCpu) / n * 1e6,
                  2e6 / a);
        }
        double b = gets(other, smallKeys, clients, seconds, 0);
        t.row(
            "GET " + ReadBench.human(smallSize) + " cached (objects/s)",
            clients,
            Table.f1(a),
            Table.f1(b),
            Table.f2(a / b),
            clients == 32 ? verdict(a / b >= 2, ">= 2x") : "");
      }
      if (rows.contains("get-large")) {
        double ga = bestOf(2, () -> gets(strata, List.of("large.bin"), 1, 0, 1) * largeSize / 1e6);
        double gb = bestOf(2, () -> gets(other, List.of("large.bin"), 1, 0, 1) * largeSize / 1e6);
        t.row(
            "GET " + ReadBench.human(largeSize) + " cached (MB/s)",
            1,
            Table.f1(ga),
            Table.f1(gb),
            Table.f2(ga / gb),
            verdict(ga / gb >= 2, ">= 2x"));
      }
      Breakdown breakdown = null;
      if (rows.contains("put-small")) {
        // Warm both servers' write paths first, as the GET rows are warmed above.
        for (Server s : both) {
          puts(s, "warm-up", Math.min(putSmall, 1000), smallSize, 8);
        }
        Breakdown before = Breakdown.scrape(cluster);
        int putClients = Integer.parseInt(opts.getOrDefault("put-clients", "8"));
        double pa = puts(strata, "put-small", putSmall, smallSize, putClients);
        breakdown = Breakdown.scrape(cluster).minus(before);
        double pb = puts(other, "put-small", putSmall, smallSize, putClients);
        t.row(
            "PUT " + ReadBench.human(smallSize) + " (objects/s)",
            putClients,
            Table.f1(pa),
            Table.f1(pb),
            Table.f2(pa / pb),
            verdict(pa / pb >= 0.5, ">= 0.5x"));
      }
      if (rows.contains("put-large")) {
        double la = puts(strata, "put-large", putLarge, putLargeSize, 4) * putLargeSize / 1e6;
        double lb = puts(other, "put-large", putLarge, putLargeSize, 4) * putLargeSize / 1e6;
        t.row(
            "PUT " + ReadBench.human(putLargeSize) + " (MB/s)",
            4,
            Table.f1(la),
            Table.f1(lb),
            Table.f2(la / lb),
            verdict(la / lb >= 1, ">= 1x"));
      }
      for (String pass : rows.contains("list") ? new String[] {"first", "second"} : new String[0]) {
        double ka = list(strata, listCount);
        double kb = list(other, listCount);
        t.row(
            "ListObjectsV2 " + listCount + " keys, " + pass + " pass (keys/s)",
            1,
            Table.f1(ka),
            Table.f1(kb),
            Table.f2(ka / kb),
            pass.equals("second") ? verdict(ka / kb >= 2, ">= 2x") : "");
      }
      long peak = ProcStatus.bytes(strata.pid(), "VmHWM:");
      long otherPeak = ProcStatus.bytes(other.pid(), "VmHWM:");
      System.out.printf(
          "S3 proxy benchmark: %d objects of %s, one of %s, %d keys listed;"
              + " cluster of one worker (%s); both servers JVMs with -Xmx1g on 127.0.0.1; %d cores"
              + " shared with the load generator; Strata proxy settings: %s%n%n",
          smallCount,
          ReadBench.human(smallSize),
          ReadBench.human(largeSize),
          listCount,
          mem ? "MEM tier" : "SSD tier",
          Runtime.getRuntime().availableProcessors(),
          proxyConf.isEmpty() ? "defaults" : proxyConf);
      System.out.print(t.render());
      if (getCpu != null) {
        System.out.printf("%n%s%n", getCpu);
      }
      if (breakdown != null) {
        System.out.printf(
            "%nWhere a %s PUT's time went (means over the Strata PUT row, from the"
                + " processes' own timers; calls in brackets): proxy PutObject %.2f ms (%.0f), of"
                + " which worker WriteSmallFile %.2f ms (%.0f) or WriteFile %.2f ms (%.0f), master"
                + " CommitNewFile %.2f ms (%.0f), or CreateFile %.2f ms (%.0f) and CompleteFile"
                + " %.2f ms (%.0f)%n",
            ReadBench.human(smallSize),
            breakdown.mean("put"),
            breakdown.count("put"),
            breakdown.mean("write-small"),
            breakdown.count("write-small"),
            breakdown.mean("write"),
            breakdown.count("write"),
            breakdown.mean("commit"),
            breakdown.count("commit"),
            breakdown.mean("create"),
            breakdown.count("create"),
            breakdown.mean("complete"),
            breakdown.count("complete"));
        System.out.printf(
            "CPU per PUT: proxy %.2f ms, master %.2f ms, worker %.2f ms%n",
            breakdown.cpuPerRequest("proxy"),
            breakdown.cpuPerRequest("master"),
            breakdown.cpuPerRequest("worker"));
      }
      System.out.printf(
          "%nPeak RSS (VmHWM) over the run: Strata proxy %.1f MB (%s, < 1 GiB),"
              + " S3Proxy %.1f MB%n",
          peak / 1e6, peak < (1L << 30) ? "met" : "MISSED", otherPeak / 1e6);
      for (Server s : both) {
        s.presigner().close();
        s.client().close();
      }
    } finally {
      if (s3proxy != null) {
        s3proxy.destroy();
        s3proxy.waitFor(10, TimeUnit.SECONDS);
        s3proxy.destroyForcibly();
      }
      ReadBench.deleteTree(base);
    }
  }

  private static String verdict(boolean met, String what) {
    return (met ? "met" : "missed") + " (" + what + ")";
  }

  interface Measure {
    double run() throws Exception;
  }

  private static double bestOf(int n, Measure m) throws Exception {
    double best = 0;
    for (int i = 0; i < n; i++) {
      best = Math.max(best, m.run());
    }
    return best;
  }

  private static Server server(String name, int port, long pid) {
    URI endpoint = URI.create("http://127.0.0.1:" + port);
    StaticCredentialsProvider creds =
        StaticCredentialsProvider.create(AwsBasicCredentials.create(KEY, SECRET));
    S3Configuration pathStyle = S3Configuration.builder().pathStyleAccessEnabled(true).build();
    return new Server(
        name,
        port,
        S3Presigner.builder()
            .endpointOverride(endpoint)
            .region(Region.US_EAST_1)
            .credentialsProvider(creds)
            .serviceConfiguration(pathStyle)
            .build(),
        S3Client.builder()
            .endpointOverride(endpoint)
            .region(Region.US_EAST_1)
            .credentialsProvider(creds)
            .forcePathStyle(true)
            .build(),
        pid);
  }

  private static String target(URL url) {
    return url.getPath() + (url.getQuery() == null ? "" : "?" + url.getQuery());
  }

  /**
   * GETs of presigned URLs of {@code keys} by {@code clients} threads, each taking keys in a
   * shuffled order: for {@code seconds} seconds, or {@code rounds} times through the keys when
   * seconds is 0. Returns objects per second.
   */
  private static double gets(Server s, List<String> keys, int clients, int seconds, int rounds)
      throws Exception {
    List<String> targets = new ArrayList<>();
    for (String k : keys) {
      targets.add(
          target(
              s.presigner()
                  .presignGetObject(
                      b ->
                          b.signatureDuration(Duration.ofHours(2))
                              .getObjectRequest(g -> g.bucket(BUCKET).key(k)))
                  .url()));
    }
    return load(
        s,
        clients,
        seconds,
        rounds == 0 ? 0 : rounds,
        targets.size(),
        (c, i) -> c.get(targets.get(i)));
  }

  /** PUTs of {@code count} objects of {@code size} bytes by {@code clients} threads; objects/s. */
  private static double puts(Server s, String prefix, int count, long size, int clients)
      throws Exception {
    List<String> targets = new ArrayList<>();
    String folder = prefix + "-" + s.port();
    for (int i = 0; i < count; i++) {
      String k = String.format("%s/%05d", folder, i);
      targets.add(
          target(
              s.presigner()
                  .presignPutObject(
                      b ->
                          b.signatureDuration(Duration.ofHours(2))
                              .putObjectRequest(p -> p.bucket(BUCKET).key(k)))
                  .url()));
    }
    byte[] body = new byte[(int) Math.min(size, 1 << 20)];
    new Random(3).nextBytes(body);
    return load(s, clients, 0, 1, count, (c, i) -> c.put(targets.get(i), body, size));
  }

  interface Call {
    long call(HttpConnection c, int index) throws Exception;
  }

  private static double load(Server s, int clients, int seconds, int rounds, int items, Call call)
      throws Exception {
    AtomicLong done = new AtomicLong();
    AtomicInteger next = new AtomicInteger();
    long total = (long) rounds * items;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    long start = System.nanoTime();
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < clients; t++) {
        int seed = t;
        futures.add(
            pool.submit(
                () -> {
                  Random r = new Random(seed);
                  try (HttpConnection c = new HttpConnection("127.0.0.1", s.port())) {
                    while (true) {
                      int i;
                      if (seconds > 0) {
                        if (System.nanoTime() > deadline) {
                          return null;
                        }
                        i = r.nextInt(items);
                      } else {
                        long n = next.getAndIncrement();
                        if (n >= total) {
                          return null;
                        }
                        i = (int) (n % items);
                      }
                      call.call(c, i);
                      done.incrementAndGet();
                    }
                  }
                }));
      }
      for (Future<?> f : futures) {
        f.get(30, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    return done.get() / ((System.nanoTime() - start) / 1e9);
  }

  /** Lists every key under list/ in pages of 1000 with ListObjectsV2; keys per second. */
  private static double list(Server s, int expected) {
    long start = System.nanoTime();
    long keys = 0;
    for (ListObjectsV2Response page :
        s.client().listObjectsV2Paginator(b -> b.bucket(BUCKET).prefix("list/").maxKeys(1000))) {
      keys += page.keyCount();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    if (keys != expected) {
      throw new IllegalStateException(s.name() + " listed " + keys + " keys, not " + expected);
    }
    return keys / seconds;
  }

  private static Process startS3Proxy(Path base, Path ufs, int port) throws Exception {
    Path props = base.resolve("s3proxy.properties");
    Files.writeString(
        props,
        String.join(
                "\n",
                "s3proxy.endpoint=http://127.0.0.1:" + port,
                "s3proxy.authorization=aws-v2-or-v4",
                "s3proxy.identity=" + KEY,
                "s3proxy.credential=" + SECRET,
                "jclouds.provider=filesystem",
                "jclouds.filesystem.basedir=" + ufs)
            + "\n");
    Path logback = base.resolve("s3proxy-logback.xml");
    Files.writeString(logback, "<configuration><root level=\"WARN\"/></configuration>\n");
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xms128m",
            "-Xmx1g",
            "-XX:+UseG1GC",
            "-Dlogback.configurationFile=" + logback,
            "-cp",
            System.getProperty("java.class.path"),
            "org.gaul.s3proxy.Main",
            "--properties",
            props.toString());
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(base.resolve("s3proxy.out").toFile())
            .start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new IllegalStateException(
            "S3Proxy exited: " + Files.readString(base.resolve("s3proxy.out")));
      }
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
        return p;
      } catch (IOException e) {
        Thread.sleep(100);
      }
    }
    p.destroyForcibly();
    throw new IllegalStateException("S3Proxy did not listen on " + port + " within 60 s");
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return s.getLocalPort();
    }
  }

  /** Sums and counts of the timers a PUT passes through, scraped from the processes. */
  private record Breakdown(Map<String, double[]> timers) {
    static Breakdown scrape(MultiProcessCluster c) {
      String proxy = MultiProcessCluster.scrapePort(c.proxyWebPort());
      String master = c.scrapeMaster();
      String worker = c.scrapeWorker(0);
      Map<String, double[]> t = new java.util.HashMap<>();
      t.put("put", timer(proxy, "strata_proxy_requests_seconds", "operation=\"PutObject\""));
      t.put("create", timer(master, "strata_master_rpc_latency_seconds", "method=\"CreateFile\""));
      t.put(
          "complete",
          timer(master, "strata_master_rpc_latency_seconds", "method=\"CompleteFile\""));
      t.put("write", timer(worker, "strata_worker_rpc_latency_seconds", "method=\"WriteFile\""));
      t.put(
          "write-small",
          timer(worker, "strata_worker_rpc_latency_seconds", "method=\"WriteSmallFile\""));
      t.put(
          "commit", timer(master, "strata_master_rpc_latency_seconds", "method=\"CommitNewFile\""));
      t.put("cpu-proxy", new double[] {cpuSeconds(c.proxyProcess().pid()), 1});
      t.put("cpu-master", new double[] {cpuSeconds(c.masterPid()), 1});
      t.put("cpu-worker", new double[] {cpuSeconds(c.workerPid(0)), 1});
      return new Breakdown(t);
    }

    /** User and system CPU seconds of a process so far (/proc/PID/stat, 100 ticks a second). */
    static double cpuSeconds(long pid) {
      try {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
      } catch (IOException | RuntimeException e) {
        return 0;
      }
    }

    /** CPU milliseconds a process spent per request of the row. */
    double cpuPerRequest(String process) {
      double requests = timers.get("put")[1];
      return requests == 0 ? 0 : timers.get("cpu-" + process)[0] / requests * 1000;
    }

    private static double[] timer(String scrape, String name, String tag) {
      double sum = 0;
      double count = 0;
      for (String line : scrape.split("\n")) {
        if (line.contains(tag) && line.startsWith(name + "_sum{")) {
          sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        } else if (line.contains(tag) && line.startsWith(name + "_count{")) {
          count += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
      return new double[] {sum, count};
    }

    Breakdown minus(Breakdown before) {
      Map<String, double[]> t = new java.util.HashMap<>();
      timers.forEach(
          (k, v) -> {
            double[] b = before.timers().get(k);
            t.put(k, new double[] {v[0] - b[0], v[1] - b[1]});
          });
      return new Breakdown(t);
    }

    /** How many times one timer counted. */
    double count(String key) {
      return timers.get(key)[1];
    }

    /** Mean milliseconds of one timer; 0 when it counted nothing. */
    double mean(String key) {
      double[] v = timers.get(key);
      return v[1] == 0 ? 0 : v[0] / v[1] * 1000;
    }
  }
}
