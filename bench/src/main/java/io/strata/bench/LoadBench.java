package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Preloads one generated dataset (many small files and a few large ones) with
 * {@code strata fs load}, once with Direct I/O block writes and once through the page cache,
 * each on a fresh one-worker cluster whose only tier is an SSD folder, and compares the load
 * time with {@code cat} of the same files from the under-store folder in the same run. While a
 * load runs, the worker's buffer-pool and JVM direct memory, its RSS and the machine's page
 * cache are sampled every 100 ms.
 *
 * <p>Before the baseline and before each load the under-store files are read once, so all three
 * read them from the page cache; the page-cache growth during a load is then what writing the
 * block files added. Usage: {@code bench/run load [--small 50000] [--small-min 10KB]
 * [--small-max 200KB] [--large-count 4] [--large 1GB] [--threads 4] [--chunk 4MB]
 * [--dir /tmp]}.
 */
final class LoadBench {
  private LoadBench() {}

  record Sample(double poolPeak, double directPeak, long rssPeak, long pageCacheGrowth) {}

  record Result(String name, double seconds, Sample sample) {}

  static void run(Map<String, String> opts) throws Exception {
    int smallCount = Integer.parseInt(opts.getOrDefault("small", "50000"));
    long smallMin = ConfigType.parseBytes(opts.getOrDefault("small-min", "10KB"));
    long smallMax = ConfigType.parseBytes(opts.getOrDefault("small-max", "200KB"));
    int largeCount = Integer.parseInt(opts.getOrDefault("large-count", "4"));
    long largeSize = ConfigType.parseBytes(opts.getOrDefault("large", "1GB"));
    int threads = Integer.parseInt(opts.getOrDefault("threads", "4"));
    String chunk = opts.getOrDefault("chunk", "4MB");
    Path base = Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")),
        "strata-bench-load");
    try {
      Path ufs = Files.createDirectories(base.resolve("ufs"));
      System.err.printf("generating %d files of %d-%d bytes and %d of %d bytes in %s%n",
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

      List<Result> results = new ArrayList<>();
      catAll(ufs.resolve("data"));
      long start = System.nanoTime();
      catAll(ufs.resolve("data"));
      results.add(new Result("cat of the under-store files", (System.nanoTime() - start) / 1e9,
          null));
      for (boolean direct : new boolean[] {true, false}) {
        results.add(load(base, ufs, direct, threads, chunk, total));
      }

      double cat = results.get(0).seconds();
      long chunkBytes = ConfigType.parseBytes(chunk);
      Table t = new Table("case", "seconds", "MB/s", "ratio to cat", "pool peak MB",
          "direct peak MB", "RSS peak MB", "page cache growth MB", "growth / written");
      for (Result r : results) {
        Sample s = r.sample();
        t.row(r.name(), Table.f1(r.seconds()), Table.f1(total / 1e6 / r.seconds()),
            Table.f2(cat / r.seconds()),
            s == null ? "-" : Table.f1(s.poolPeak() / 1e6),
            s == null ? "-" : Table.f1(s.directPeak() / 1e6),
            s == null ? "-" : Table.f1(s.rssPeak() / 1e6),
            s == null ? "-" : Table.f1(s.pageCacheGrowth() / 1e6),
            s == null ? "-" : String.format("%.1f%%", 100.0 * s.pageCacheGrowth() / total));
      }
      System.out.printf("Load benchmark: %d files (%d of %s-%s, %d of %s), %.2f GB; one worker,"
          + " SSD tier only, %d load threads x %s chunks, -XX:MaxDirectMemorySize=256m;"
          + " %d cores%n", files, smallCount, ReadBench.human(smallMin),
          ReadBench.human(smallMax), largeCount, ReadBench.human(largeSize), total / 1e9,
          threads, chunk, Runtime.getRuntime().availableProcessors());
      System.out.print(t.render());
      Result directRun = results.get(1);
      System.out.printf("targets: load >= 0.90x cat: %.2f; pool peak <= threads x chunk + 10%%"
          + " (%.1f MB): %.1f MB; page-cache growth with Direct I/O <= 5%% of written: %.1f%%%n",
          cat / directRun.seconds(), threads * chunkBytes * 1.1 / 1e6,
          directRun.sample().poolPeak() / 1e6,
          100.0 * directRun.sample().pageCacheGrowth() / total);
    } finally {
      ReadBench.deleteTree(base);
    }
  }

  /** {@code cat} of every file below a folder to /dev/null, as one shell pipeline. */
  static void catAll(Path dir) throws Exception {
    Process p = new ProcessBuilder("sh", "-c",
        "find \"$0\" -type f -print0 | xargs -0 -n 2000 cat > /dev/null", dir.toString())
        .inheritIO().start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("cat of " + dir + " failed");
    }
  }

  static Result load(Path base, Path ufs, boolean direct, int threads, String chunk,
      long total) throws Exception {
    String name = direct ? "fs load, Direct I/O" : "fs load, page cache";
    Path home = base.resolve(direct ? "cluster-direct" : "cluster-buffered");
    try (MultiProcessCluster cluster = MultiProcessCluster.builder(home).workers(1)
        .property("strata.master.root.ufs", "file://" + ufs)
        .workerProperty(0, "strata.worker.tier.mem.capacity", "0")
        .workerProperty(0, "strata.worker.tier.ssd.capacity", Long.toString(total * 2))
        .workerProperty(0, "strata.worker.block.write.direct", Boolean.toString(direct))
        .workerProperty(0, "strata.worker.load.threads", Integer.toString(threads))
        .workerProperty(0, "strata.worker.load.chunk.size", chunk)
        .workerJvmOption("-XX:MaxDirectMemorySize=256m")
        .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      catAll(ufs.resolve("data"));
      long pid = cluster.workerPid(0);
      long cachedBefore = pageCacheBytes();
      AtomicBoolean running = new AtomicBoolean(true);
      double[] peaks = new double[2];
      long[] rss = new long[1];
      Thread sampler = new Thread(() -> {
        while (running.get()) {
          String scrape = cluster.scrapeWorker(0);
          peaks[0] = Math.max(peaks[0], MultiProcessCluster.metric(scrape,
              "strata_worker_buffer_pool_in_use_peak_bytes"));
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
      fs.submitLoad("/data", LoadJobOptions.getDefaultInstance());
      LoadJobStatus s;
      long deadline = System.nanoTime() + 3_600_000_000_000L;
      do {
        Thread.sleep(100);
        s = fs.loadStatus("/data", 5);
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(name + " did not end in an hour: " + s);
        }
      } while (s.getState() == LoadJobState.LOAD_LISTING
          || s.getState() == LoadJobState.LOAD_RUNNING
          || s.getState() == LoadJobState.LOAD_VERIFYING);
      double seconds = (System.nanoTime() - start) / 1e9;
      long growth = pageCacheBytes() - cachedBefore;
      running.set(false);
      sampler.join();
      if (s.getState() != LoadJobState.LOAD_SUCCEEDED || s.getBytesLoaded() != total) {
        throw new IllegalStateException(name + " ended " + s.getState() + " with "
            + s.getBytesLoaded() + " of " + total + " bytes loaded: " + s.getFailuresList());
      }
      System.err.printf("%s: %.1fs%n", name, seconds);
      return new Result(name, seconds, new Sample(peaks[0], peaks[1], rss[0], growth));
    }
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
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return 0;
    }
    return 0;
  }

  /** Page cache in use on the machine (Cached in /proc/meminfo). */
  static long pageCacheBytes() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
      if (line.startsWith("Cached:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    throw new IOException("no Cached line in /proc/meminfo");
  }
}
