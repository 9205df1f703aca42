package io.strata.bench;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What verifying block checksums costs readers, measured in one run: two one-worker clusters over
 * the same under-store folder, both preloaded, one with verification on (the defaults) and one with
 * it off ({@code strata.worker.block.verify=false} on its worker, {@code
 * strata.client.block.verify=false} on its clients). Each row -- the reads of {@code bench/run
 * fuse} and {@code bench/run read} that verification touches, through the Java client that does the
 * verifying for the mount and the proxy -- runs on both clusters in turn, several rounds, the order
 * swapped every round so that neither setting always runs first; the table gives the median of each
 * and on/off. Usage: {@code bench/run verify [--small 2000] [--small-size 64KB] [--large 256MB]
 * [--rounds 5] [--random-seconds 2] [--dir /tmp]}.
 *
 * <p>Why not two runs of {@code bench/run fuse}: on a small shared machine two runs differ by more
 * than the 5% asked of verification, so only rows measured side by side, in the same minutes,
 * resolve it; and what the mount adds on top is the same with verification on or off.
 */
final class VerifyBench {
  private static final int SEQ_READ = 1 << 20;
  private static final int PAGE = 4096;
  private static final int THREADS = 8;

  private VerifyBench() {}

  /** One cluster's clients: short-circuit and over the worker's data channel. */
  private record Setting(String name, FileSystem local, FileSystem network) {}

  /** One row: what it reads, and how, through a client; returns units per second. */
  private interface Row {
    double run(FileSystem fs) throws Exception;
  }

  static void run(Map<String, String> opts) throws Exception {
    int smallCount = Integer.parseInt(opts.getOrDefault("small", "2000"));
    long smallSize = ConfigType.parseBytes(opts.getOrDefault("small-size", "64KB"));
    long largeSize = ConfigType.parseBytes(opts.getOrDefault("large", "256MB"));
    int rounds = Integer.parseInt(opts.getOrDefault("rounds", "5"));
    double randomSeconds = Double.parseDouble(opts.getOrDefault("random-seconds", "2"));
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-verify");
    Path ufs = Files.createDirectories(base.resolve("ufs"));
    try {
      System.err.printf(
          "generating %d files of %d bytes and one of %d bytes in %s%n",
          smallCount, smallSize, largeSize, ufs);
      List<String> small = new ArrayList<>();
      Random random = new Random(21);
      for (int i = 0; i < smallCount; i++) {
        String rel = "small/d" + (i % 100) + "/f" + i;
        Files.createDirectories(ufs.resolve(rel).getParent());
        TestTree.writeRandom(ufs.resolve(rel), smallSize, random.nextLong());
        small.add("/" + rel);
      }
      Collections.shuffle(small, new Random(22));
      TestTree.writeRandom(ufs.resolve("large.bin"), largeSize, 23);
      long total = smallCount * smallSize + largeSize;
      // Both clusters cache everything: in /dev/shm when both fit, else on disk.
      boolean mem = LoadBench.roomInShm(2 * total);
      String capacity = Long.toString(total * 12 / 10 + (64 << 20));
      try (MultiProcessCluster on = cluster(base.resolve("on"), ufs, mem, capacity, true);
          MultiProcessCluster off = cluster(base.resolve("off"), ufs, mem, capacity, false)) {
        List<Setting> settings = List.of(setting("on", on, true), setting("off", off, false));
        try {
          for (Setting s : settings) {
            long start = System.nanoTime();
            LoadBench.awaitLoad(s.network(), "/", "preload " + s.name());
            System.err.printf(
                "preloaded %.2f GB into the worker of verification %s in %.1f s%n",
                total / 1e9, s.name(), (System.nanoTime() - start) / 1e9);
          }
          List<String> names = new ArrayList<>();
          List<String> units = new ArrayList<>();
          List<Boolean> local = new ArrayList<>();
          List<Row> rows = new ArrayList<>();
          for (boolean shortCircuit : new boolean[] {true, false}) {
            String how = shortCircuit ? "short-circuit" : "worker's data channel";
            names.add("small files read whole, 1 thread, " + how);
            units.add("files/s");
            local.add(shortCircuit);
            rows.add(fs -> smallFiles(fs, small, smallSize, 1));
            names.add("small files read whole, " + THREADS + " threads, " + how);
            units.add("files/s");
            local.add(shortCircuit);
            rows.add(fs -> smallFiles(fs, small, smallSize, THREADS));
            names.add("large file, 1 MiB reads in order, " + how);
            units.add("MB/s");
            local.add(shortCircuit);
            rows.add(fs -> sequential(fs, largeSize));
            names.add("4 KiB reads at random offsets of the large file, " + how);
            units.add("reads/s");
            local.add(shortCircuit);
            rows.add(fs -> randomReads(fs, largeSize, randomSeconds));
          }
          // One untimed pass of every row on each, so that neither pays the JIT's warm-up.
          for (int r = 0; r < rows.size(); r++) {
            for (Setting s : settings) {
              rows.get(r).run(local.get(r) ? s.local() : s.network());
            }
          }
          Table t =
              new Table(
                  "row", "unit", "verification on", "off", "on/off", "spread on", "spread off");
          for (int r = 0; r < rows.size(); r++) {
            double[][] samples = new double[2][rounds];
            for (int round = 0; round < rounds; round++) {
              for (int k = 0; k < 2; k++) {
                int which = (round % 2 == 0) ? k : 1 - k;
                Setting s = settings.get(which);
                samples[which][round] = rows.get(r).run(local.get(r) ? s.local() : s.network());
              }
            }
            double onMedian = median(samples[0]);
            double offMedian = median(samples[1]);
            t.row(
                names.get(r),
                units.get(r),
                Table.f1(onMedian),
                Table.f1(offMedian),
                Table.f2(onMedian / offMedian) + (onMedian / offMedian < 0.95 ? " (<0.95)" : ""),
                spread(samples[0]),
                spread(samples[1]));
            System.err.printf("%s: on %.1f, off %.1f%n", names.get(r), onMedian, offMedian);
          }
          System.out.printf(
              "Block verification on and off, same run: %d small files of %s, one file of %s;"
                  + " one worker per cluster (%s), preloaded; %d cores; median of %d rounds,"
                  + " order swapped each round; spread is (max-min)/median.%n",
              smallCount,
              ReadBench.human(smallSize),
              ReadBench.human(largeSize),
              mem ? "MEM tier in /dev/shm" : "SSD tier in " + base,
              Runtime.getRuntime().availableProcessors(),
              rounds);
          System.out.print(t.render());
          System.out.println("target: every row's on/off >= 0.95");
        } finally {
          for (Setting s : settings) {
            s.local().close();
            s.network().close();
          }
        }
      }
    } finally {
      ReadBench.deleteTree(base);
    }
  }

  private static MultiProcessCluster cluster(
      Path base, Path ufs, boolean mem, String capacity, boolean verify) throws Exception {
    return MultiProcessCluster.builder(base)
        .workers(1)
        .property("strata.master.root.ufs", "file://" + ufs)
        .workerProperty(0, "strata.worker.block.verify", Boolean.toString(verify))
        .workerProperty(0, "strata.worker.tier.mem.capacity", mem ? capacity : "0")
        .workerProperty(0, "strata.worker.tier.ssd.capacity", mem ? "0" : capacity)
        // The scrubber would read beside the timed rows of one cluster only.
        .workerProperty(0, "strata.worker.scrub.rate", "0")
        .start();
  }

  private static Setting setting(String name, MultiProcessCluster cluster, boolean verify)
      throws Exception {
    String v = Boolean.toString(verify);
    return new Setting(
        name,
        FileSystem.connect(
            cluster.clientConfig(
                Map.of(
                    "strata.client.block.verify",
                    v,
                    "strata.client.short.circuit.enabled",
                    "true"))),
        FileSystem.connect(
            cluster.clientConfig(
                Map.of(
                    "strata.client.block.verify",
                    v,
                    "strata.client.short.circuit.enabled",
                    "false"))));
  }

  private static double smallFiles(FileSystem fs, List<String> small, long size, int threads)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long start = System.nanoTime();
    try {
      List<Future<Long>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  byte[] buf = new byte[(int) Math.max(size, PAGE)];
                  long bytes = 0;
                  for (int i = next.getAndIncrement();
                      i < small.size();
                      i = next.getAndIncrement()) {
                    try (InputStream in = fs.openFile(small.get(i))) {
                      int n;
                      while ((n = in.read(buf)) > 0) {
                        bytes += n;
                      }
                    }
                  }
                  return bytes;
                }));
      }
      long bytes = 0;
      for (Future<Long> f : done) {
        bytes += f.get(30, TimeUnit.MINUTES);
      }
      if (bytes != size * small.size()) {
        throw new IllegalStateException("read " + bytes + " bytes of the small files");
      }
    } finally {
      pool.shutdownNow();
    }
    return small.size() / ((System.nanoTime() - start) / 1e9);
  }

  private static double sequential(FileSystem fs, long size) throws Exception {
    byte[] buf = new byte[SEQ_READ];
    long read = 0;
    long start = System.nanoTime();
    try (InputStream in = fs.openFile("/large.bin")) {
      int n;
      while ((n = in.read(buf)) > 0) {
        read += n;
      }
    }
    if (read != size) {
      throw new IllegalStateException("read " + read + " bytes of the large file");
    }
    return size / 1e6 / ((System.nanoTime() - start) / 1e9);
  }

  private static double randomReads(FileSystem fs, long size, double seconds) throws Exception {
    byte[] buf = new byte[PAGE];
    Random random = new Random(31);
    long pages = size / PAGE;
    long reads = 0;
    long start = System.nanoTime();
    long end = start + (long) (seconds * 1e9);
    try (FileInStream in = fs.openFile("/large.bin")) {
      // Bounded by count as well as by time.
      for (; reads < 10_000_000 && System.nanoTime() < end; reads++) {
        in.readFully((random.nextLong() & Long.MAX_VALUE) % pages * PAGE, buf, 0, PAGE);
      }
    }
    return reads / ((System.nanoTime() - start) / 1e9);
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int n = sorted.length;
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static String spread(double[] values) {
    double min = Arrays.stream(values).min().orElse(0);
    double max = Arrays.stream(values).max().orElse(0);
    double m = median(values);
    return m == 0 ? "-" : String.format("%.0f%%", 100 * (max - min) / m);
  }
}
