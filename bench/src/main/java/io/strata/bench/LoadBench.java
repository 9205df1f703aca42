package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Preloads one generated dataset (many small files and a few large ones) with {@code strata fs
 * load} three times, each on a fresh one-worker cluster with one tier: an SSD folder written with
 * Direct I/O, the same written through the page cache, and a MEM tier in /dev/shm (skipped when it
 * has no room); and compares the load time with {@code cat} of the same files from the under-store
 * folder in the same run. The SSD folder and the under store share this machine's disk, so an
 * SSD-tier load moves twice the bytes {@code cat} moves; the MEM-tier row shows the load with the
 * disk serving reads only. While a load runs, the worker's buffer-pool and JVM direct memory, its
 * RSS and the machine's page cache are sampled every 100 ms. Each fresh cluster first loads a
 * separate warm-up tree (untimed), so the measured load runs on warmed-up JVMs, as in a
 * long-running cluster.
 *
 * <p>{@code cat} runs twice: with the files in the page cache (warm), and, when the benchmark runs
 * as root, after dropping the page cache (cold, read from the disk). Each load starts with the page
 * cache dropped too when root, so it reads its source from the disk as the cold {@code cat} does.
 * After each load {@code fincore} reports how much of the written block files sits in the page
 * cache. Usage: {@code bench/run load [--small 50000] [--small-min 10KB] [--small-max 200KB]
 * [--large-count 4] [--large 1GB] [--threads 16] [--chunk 4MB] [--warmup 3000] [--worker-jvm
 * OPTION] [--conf key=value,...] [--dir /tmp]}.
 */
final class LoadBench {
  private LoadBench() {}

  record Sample(double poolPeak, double directPeak, long rssPeak, long blockPageCache) {}

  record Result(String name, double seconds, double listingSeconds, Sample sample) {}

  static void run(Map<String, String> opts) throws Exception {
    int smallCount = Integer.parseInt(opts.getOrDefault("small", "50000"));
    long smallMin = ConfigType.parseBytes(opts.getOrDefault("small-min", "10KB"));
    long smallMax = ConfigType.parseBytes(opts.getOrDefault("small-max", "200KB"));
    int largeCount = Integer.parseInt(opts.getOrDefault("large-count", "4"));
    long largeSize = ConfigType.parseBytes(opts.getOrDefault("large", "1GB"));
    int threads = Integer.parseInt(opts.getOrDefault("threads", "16"));
    String chunk = opts.getOrDefault("chunk", "4MB");
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-load");
    try {
      Path ufs = Files.createDirectories(base.resolve("ufs"));
      System.err.printf(
          "generating %d files of %d-%d bytes and %d of %d bytes in %s%n",
          smallCount, smallMin, smallMax, largeCount, largeSize, ufs);
      Random random = new Random(7);
      long total = 0;
      for (int i = 0; i < smallCount; i++) {
        Path f = ufs.resolve("data/small/d" + (i % 500) + "/f" + i);
        Files.createDirectories(f.getParent());
        long len = smallMin + (long) (random.nextDouble() * (smallMax - smallMin));
        TestTree.writeRandom(f, len, random.nextLong());
        total += len;
      }
      for (int i = 0; i < largeCount; i++) {
        Path f = ufs.resolve("data/large/part-" + i);
        Files.createDirectories(f.getParent());
        TestTree.writeRandom(f, largeSize, i);
        total += largeSize;
      }
      int files = smallCount + largeCount;
      // Loaded (untimed) by each fresh cluster before the measured load, so that the measured
      // one runs on warmed-up JVMs as a long-running cluster does.
      int warmupFiles = Integer.parseInt(opts.getOrDefault("warmup", "3000"));
      for (int i = 0; i < warmupFiles; i++) {
        Path f = ufs.resolve("warmup/d" + (i % 50) + "/f" + i);
        Files.createDirectories(f.getParent());
        TestTree.writeRandom(
            f, smallMin + (long) (random.nextDouble() * (smallMax - smallMin)), random.nextLong());
      }

      List<Result> results = new ArrayList<>();
      catAll(ufs.resolve("data"));
      long start = System.nanoTime();
      catAll(ufs.resolve("data"));
      results.add(
          new Result("cat, files in page cache", (System.nanoTime() - start) / 1e9, 0, null));
      boolean cold = dropPageCache();
      if (cold) {
        start = System.nanoTime();
        catAll(ufs.resolve("data"));
        results.add(
            new Result("cat, files read from disk", (System.nanoTime() - start) / 1e9, 0, null));
      }
      for (Tier tier : Tier.values()) {
        if (tier == Tier.MEM && !roomInShm(total)) {
          System.err.println(
              "skipping the MEM-tier load: /dev/shm has no room for " + total + " bytes");
          continue;
        }
        results.add(
            load(
                base,
                ufs,
                tier,
                threads,
                chunk,
                total,
                opts.getOrDefault("worker-jvm", ""),
                opts.getOrDefault("conf", "")));
      }

      // The baseline is cat of the same source as the loads read: from disk when the cache
      // could be dropped.
      Result baseline = results.get(cold ? 1 : 0);
      double cat = baseline.seconds();
      long chunkBytes = ConfigType.parseBytes(chunk);
      Table t =
          new Table(
              "case",
              "seconds",
              "of which listing",
              "MB/s",
              "files/s",
              "ratio to baseline",
              "pool peak MB",
              "direct peak MB",
              "RSS peak MB",
              "blocks in page cache MB",
              "of written");
      for (Result r : results) {
        Sample s = r.sample();
        t.row(
            r.name(),
            Table.f1(r.seconds()),
            s == null ? "-" : Table.f1(r.listingSeconds()),
            Table.f1(total / 1e6 / r.seconds()),
            Table.f1(files / r.seconds()),
            Table.f2(cat / r.seconds()),
            s == null ? "-" : Table.f1(s.poolPeak() / 1e6),
            s == null ? "-" : Table.f1(s.directPeak() / 1e6),
            s == null ? "-" : Table.f1(s.rssPeak() / 1e6),
            s == null ? "-" : Table.f1(s.blockPageCache() / 1e6),
            s == null ? "-" : String.format("%.1f%%", 100.0 * s.blockPageCache() / total));
      }
      System.out.printf(
          "Load benchmark: %d files (%d of %s-%s, %d of %s), %.2f GB; one worker"
              + " with one tier per row, %d load threads x %s chunks, -XX:MaxDirectMemorySize=256m;"
              + " %d cores%n",
          files,
          smallCount,
          ReadBench.human(smallMin),
          ReadBench.human(smallMax),
          largeCount,
          ReadBench.human(largeSize),
          total / 1e9,
          threads,
          chunk,
          Runtime.getRuntime().availableProcessors());
      System.out.print(t.render());
      Result directRun = results.get(cold ? 2 : 1);
      System.out.printf("baseline: %s%n", baseline.name());
      // Disk traffic: an SSD-tier load reads the source and writes the copy on the same disk.
      System.out.printf(
          "disk traffic of the SSD Direct I/O load: %.1f MB/s (read + write) "
              + "against %.1f MB/s for the baseline cat%n",
          2 * total / 1e6 / directRun.seconds(), total / 1e6 / cat);
      System.out.printf(
          "targets: load >= 0.90x cat: %.2f; pool peak <= threads x chunk + 10%%"
              + " (%.1f MB): %.1f MB; page-cache growth with Direct I/O <= 5%% of written: %.1f%%%n",
          cat / directRun.seconds(),
          threads * chunkBytes * 1.1 / 1e6,
          directRun.sample().poolPeak() / 1e6,
          100.0 * directRun.sample().blockPageCache() / total);
    } finally {
      ReadBench.deleteTree(base);
    }
  }

  /** {@code cat} of every file below a folder to /dev/null, as one shell pipeline. */
  static void catAll(Path dir) throws Exception {
    Process p =
        new ProcessBuilder(
                "sh",
                "-c",
                "find \"$0\" -type f -print0 | xargs -0 -n 2000 cat > /dev/null",
                dir.toString())
            .inheritIO()
            .start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("cat of " + dir + " failed");
    }
  }

  /** Where the loaded blocks go. */
  enum Tier {
    /** The SSD tier folder (on the disk that also holds the under store), Direct I/O. */
    SSD_DIRECT("fs load, SSD tier, Direct I/O", "cluster-direct"),
    /** The same, written through the page cache. */
    SSD_PAGE_CACHE("fs load, SSD tier, page cache", "cluster-buffered"),
    /** The MEM tier in /dev/shm: the disk only serves the under-store reads, as for cat. */
    MEM("fs load, MEM tier (tmpfs)", "cluster-mem");

    final String title;
    final String folder;

    Tier(String title, String folder) {
      this.title = title;
      this.folder = folder;
    }
  }

  static boolean roomInShm(long bytes) throws IOException {
    return Files.getFileStore(Path.of("/dev/shm")).getUsableSpace() > bytes * 12 / 10;
  }

  /**
   * @param workerJvm an extra JVM option of the worker (a profiler, say), or ""
   */
  static Result load(
      Path base,
      Path ufs,
      Tier tier,
      int threads,
      String chunk,
      long total,
      String workerJvm,
      String conf)
      throws Exception {
    String name = tier.title;
    Path home = base.resolve(tier.folder);
    boolean mem = tier == Tier.MEM;
    MultiProcessCluster.Builder builder = MultiProcessCluster.builder(home).workers(1);
    for (String pair : conf.split(",")) {
      if (!pair.isBlank()) {
        String[] kv = pair.split("=", 2);
        builder.property(kv[0].trim(), kv[1].trim());
      }
    }
    if (!workerJvm.isEmpty()) {
      builder.workerJvmOption(workerJvm);
    }
    try (MultiProcessCluster cluster =
            builder
                .property("strata.master.root.ufs", "file://" + ufs)
                .workerProperty(
                    0,
                    "strata.worker.tier.mem.capacity",
                    mem ? Long.toString(total * 11 / 10) : "0")
                .workerProperty(
                    0, "strata.worker.tier.ssd.capacity", mem ? "0" : Long.toString(total * 2))
                .workerProperty(
                    0,
                    "strata.worker.block.write.direct",
                    Boolean.toString(tier != Tier.SSD_PAGE_CACHE))
                .workerProperty(0, "strata.worker.load.threads", Integer.toString(threads))
                .workerProperty(0, "strata.worker.load.chunk.size", chunk)
                .workerJvmOption("-XX:MaxDirectMemorySize=256m")
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      awaitLoad(fs, "/warmup", "warm-up load");
      dropPageCache();
      long pid = cluster.workerPid(0);
      AtomicBoolean running = new AtomicBoolean(true);
      double[] peaks = new double[2];
      long[] rss = new long[1];
      Thread sampler =
          new Thread(
              () -> {
                while (running.get()) {
                  String scrape = cluster.scrapeWorker(0);
                  peaks[0] =
                      Math.max(
                          peaks[0],
                          MultiProcessCluster.metric(
                              scrape, "strata_worker_buffer_pool_in_use_peak_bytes"));
                  peaks[1] = Math.max(peaks[1], directBytes(scrape));
                  rss[0] = Math.max(rss[0], rssBytes(pid));
                  try {
                    Thread.sleep(100);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
      sampler.start();
      long start = System.nanoTime();
      long[] listed = new long[1];
      LoadJobStatus s = awaitLoad(fs, "/data", name, listed);
      double seconds = (System.nanoTime() - start) / 1e9;
      running.set(false);
      sampler.join();
      if (s.getState() != LoadJobState.LOAD_SUCCEEDED || s.getBytesLoaded() != total) {
        throw new IllegalStateException(
            name
                + " ended "
                + s.getState()
                + " with "
                + s.getBytesLoaded()
                + " of "
                + total
                + " bytes loaded: "
                + s.getFailuresList());
      }
      String scrape = cluster.scrapeWorker(0);
      double calls = rpcStat(scrape, "strata_worker_rpc_latency_seconds_count");
      double callSeconds = rpcStat(scrape, "strata_worker_rpc_latency_seconds_sum");
      System.err.printf(
          "%s: %.1fs; %.0f LoadBlocks calls of %.1f ms on average%n",
          name, seconds, calls, calls == 0 ? 0 : callSeconds * 1000 / calls);
      // tmpfs pages are the tier itself, not page cache in front of a disk.
      long inCache = mem ? 0 : pageCacheOf(home.resolve("worker0/ssd"));
      return new Result(
          name,
          seconds,
          (listed[0] - start) / 1e9,
          new Sample(peaks[0], peaks[1], rss[0], inCache));
    }
  }

  static LoadJobStatus awaitLoad(FileSystem fs, String path, String name) throws Exception {
    return awaitLoad(fs, path, name, new long[1]);
  }

  /** Submits a load and polls it to its end; {@code listedAt[0]} gets when its count ended. */
  static LoadJobStatus awaitLoad(FileSystem fs, String path, String name, long[] listedAt)
      throws Exception {
    fs.submitLoad(path, LoadJobOptions.getDefaultInstance());
    LoadJobStatus s;
    long deadline = System.nanoTime() + 3_600_000_000_000L;
    do {
      Thread.sleep(50);
      s = fs.loadStatus(path, 5);
      if (listedAt[0] == 0 && s.getState() != LoadJobState.LOAD_LISTING) {
        listedAt[0] = System.nanoTime();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(name + " did not end in an hour: " + s);
      }
    } while (s.getState() == LoadJobState.LOAD_LISTING
        || s.getState() == LoadJobState.LOAD_RUNNING
        || s.getState() == LoadJobState.LOAD_VERIFYING);
    if (s.getState() != LoadJobState.LOAD_SUCCEEDED) {
      throw new IllegalStateException(name + " ended " + s.getState() + ": " + s.getFailuresList());
    }
    return s;
  }

  static double rpcStat(String scrape, String name) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith(name + "{") && line.contains("method=\"LoadBlocks\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** The JVM's direct buffer memory as the worker publishes it. */
  static double directBytes(String scrape) {
    for (String line : scrape.split("\n")) {
      if (line.startsWith("jvm_buffer_memory_used_bytes{") && line.contains("id=\"direct\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  static long rssBytes(long pid) {
    return ProcStatus.bytes(pid, "VmRSS:");
  }

  /** Drops the page cache (writes back dirty pages first); false when not allowed (not root). */
  static boolean dropPageCache() throws Exception {
    Process sync = new ProcessBuilder("sync").inheritIO().start();
    sync.waitFor();
    try {
      Files.writeString(Path.of("/proc/sys/vm/drop_caches"), "3");
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Bytes of the files below a folder that are in the page cache, as fincore counts them. */
  static long pageCacheOf(Path dir) throws Exception {
    Process p =
        new ProcessBuilder(
                "sh",
                "-c",
                "find \"$0\" -type f -print0 | xargs -0 -r "
                    + "fincore --bytes --noheadings --raw --output RES",
                dir.toString())
            .redirectErrorStream(true)
            .start();
    long sum = 0;
    for (String line :
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
      if (!line.isBlank()) {
        sum += Long.parseLong(line.trim());
      }
    }
    if (p.waitFor() != 0) {
      throw new IllegalStateException("fincore failed on " + dir);
    }
    return sum;
  }
}
