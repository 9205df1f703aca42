package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.shell.fuse.FuseLauncher;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The FUSE benchmark of {@code bench/run fuse}: the same reads done in one run (i) on the local
 * folder that is the under store, (ii) through a {@code bindfs} passthrough mount of that folder
 * (the cost of FUSE itself) and (iii) through a Strata mount (FuseMain as a JVM of its own, as
 * {@code strata fuse mount} starts it), on a one-worker cluster whose cache already holds the whole
 * dataset. Prints one table per measure with ratios Strata/local and Strata/bindfs and the targets
 * of the FUSE work: small files (files/s, cold and warm, 1 and 8 threads), a large file read
 * sequentially (MB/s), the same by 1, 2 and 4 threads, 4 KiB random reads (IOPS and read
 * amplification) and the FUSE process's RSS over a random-read soak. Every mount is undone and the
 * cluster stopped on the way out, also after a failure. Usage: {@code bench/run fuse [--small
 * 20000] [--small-size 20KB] [--large 2GB] [--random-seconds 20] [--soak-seconds 600]
 * [--short-circuit true] [--fuse-conf key=value,...] [--conf key=value,...] [--dir /tmp]}.
 */
final class FuseBench {
  private static final int FOLDERS = 100;

  /** The Strata mount that keeps the kernel's caches (mounted afresh for cold rows). */
  private static final String CACHED = "mnt-strata";

  private static final int SEQ_READ = 1 << 20;
  private static final int PAGE = 4096;

  /** No single pass of a measure may take longer than this. */
  private static final long PASS_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(30);

  private FuseBench() {}

  static void run(Map<String, String> opts) throws Exception {
    int smallCount = Integer.parseInt(opts.getOrDefault("small", "20000"));
    long smallSize = ConfigType.parseBytes(opts.getOrDefault("small-size", "20KB"));
    long largeSize = ConfigType.parseBytes(opts.getOrDefault("large", "2GB"));
    int randomSeconds = Integer.parseInt(opts.getOrDefault("random-seconds", "20"));
    int soakSeconds = Integer.parseInt(opts.getOrDefault("soak-seconds", "600"));
    // Short-circuit reads bypass the worker's byte counter, so the direct_io mount that measures
    // read amplification reads over the data channel unless told otherwise.
    boolean shortCircuit = Boolean.parseBoolean(opts.getOrDefault("short-circuit", "true"));
    String fuseClasspath = BenchMount.fuseClasspath();
    BenchMount.requireTools();
    Path base =
        Files.createTempDirectory(Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-fuse");
    Path ufs = Files.createDirectories(base.resolve("ufs"));
    List<BenchMount> mounts = new ArrayList<>();
    try {
      System.err.printf(
          "generating %d files of %d bytes in %d folders and one of %d bytes in %s%n",
          smallCount, smallSize, FOLDERS, largeSize, ufs);
      List<String> small = new ArrayList<>();
      Random random = new Random(11);
      for (int i = 0; i < smallCount; i++) {
        String rel = "small/d" + (i % FOLDERS) + "/f" + i;
        Files.createDirectories(ufs.resolve(rel).getParent());
        TestTree.writeRandom(ufs.resolve(rel), smallSize, random.nextLong());
        small.add(rel);
      }
      Collections.shuffle(small, new Random(12));
      TestTree.writeRandom(ufs.resolve("large.bin"), largeSize, 13);
      FuseInvalidation.prepare(ufs);
      long total = smallCount * smallSize + largeSize;
      boolean mem = LoadBench.roomInShm(total);
      String tier = mem ? "MEM tier in /dev/shm" : "SSD tier in " + base;
      String capacity = Long.toString(total * 12 / 10 + (64 << 20));
      System.err.println("worker cache: " + tier);
      MultiProcessCluster.Builder builder = MultiProcessCluster.builder(base).workers(1);
      // Settings of every process (--conf), such as strata.worker.block.verify=false.
      for (String pair : opts.getOrDefault("conf", "").split(",")) {
        if (!pair.isBlank()) {
          String[] kv = pair.split("=", 2);
          builder.property(kv[0].trim(), kv[1].trim());
        }
      }
      try (MultiProcessCluster cluster =
          builder
              .property("strata.master.root.ufs", "file://" + ufs)
              .workerProperty(0, "strata.worker.tier.mem.capacity", mem ? capacity : "0")
              .workerProperty(0, "strata.worker.tier.ssd.capacity", mem ? "0" : capacity)
              .start()) {
        try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
          long start = System.nanoTime();
          LoadBench.awaitLoad(fs, "/", "preload");
          System.err.printf(
              "preloaded %.2f GB into the worker in %.1f s%n",
              total / 1e9, (System.nanoTime() - start) / 1e9);
        }
        boolean root = LoadBench.dropPageCache();
        if (!root) {
          System.err.println("not root: the page cache cannot be dropped, so cold rows are warm");
        }
        // Mounts go before the cluster stops, so that no FuseMain outlives its master.
        try {
          List<String> fuseConf =
              opts.getOrDefault("fuse-conf", "").isEmpty()
                  ? List.of()
                  : List.of(opts.get("fuse-conf").split(","));
          BenchMount.Launcher launcher =
              new BenchMount.Launcher(base, fuseClasspath, cluster, fuseConf);
          if (!fuseConf.isEmpty()) {
            System.err.println("FuseMain settings: " + fuseConf);
          }
          BenchMount bindfs = BenchMount.bindfs(ufs, base.resolve("mnt-bindfs"), false);
          mounts.add(bindfs);
          BenchMount bindfsDirect = BenchMount.bindfs(ufs, base.resolve("mnt-bindfs-direct"), true);
          mounts.add(bindfsDirect);
          mounts.add(launcher.strata(CACHED, false, true));
          BenchMount strataDirect = launcher.strata("mnt-strata-direct", true, shortCircuit);
          mounts.add(strataDirect);

          FuseSmallFiles smallFiles =
              new FuseSmallFiles(
                  small, smallSize, FOLDERS, ufs, cluster, launcher, CACHED, bindfs, mounts);
          Table t1 = smallFiles.run();
          bindfs = smallFiles.bindfs();
          Table t2 = sequential(largeSize, ufs, bindfs, mounts, launcher);
          Table t3 = parallel(largeSize, ufs, bindfsDirect, strataDirect);
          Table t4 =
              random(
                  largeSize, ufs, bindfsDirect, strataDirect, randomSeconds, cluster, shortCircuit);
          Table t6;
          try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
            t6 =
                new FuseInvalidation(
                        fs,
                        ufs,
                        launcher.current(CACHED).point(),
                        mounts.stream()
                            .filter(m -> m.point().endsWith("mnt-bindfs"))
                            .findFirst()
                            .orElseThrow()
                            .point())
                    .run();
          }
          Soak soak = soak(largeSize, strataDirect, soakSeconds);

          System.out.printf(
              "FUSE benchmark: %d files of %s in %d folders, one file of %s; one"
                  + " worker (%s), preloaded; %d cores; Strata mounts FuseMain %s%s; page cache"
                  + " dropped for cold rows: %s%n",
              smallCount,
              ReadBench.human(smallSize),
              FOLDERS,
              ReadBench.human(largeSize),
              tier,
              Runtime.getRuntime().availableProcessors(),
              String.join(
                  " ",
                  FuseLauncher.jvmOptions(
                      io.strata.common.conf.StrataConfig.load(launcher.settings()))),
              io.strata.shell.Tcmalloc.applies(System.getenv()) ? ", tcmalloc" : "",
              root ? "yes" : "NO");
          System.out.println();
          System.out.println(
              "1. Small files read whole in shuffled order (files/s); bindfs"
                  + " --multithreaded -o kernel_cache; first passes: page cache dropped, fresh"
                  + " bindfs and Strata mounts (the workers hold the files, except in (c)).");
          System.out.print(t1.render());
          System.out.println();
          System.out.println("2. Large file read sequentially with 1 MiB reads (MB/s).");
          System.out.print(t2.render());
          System.out.println();
          System.out.println(
              "3. Large file read by N threads at once, each a contiguous 1/N of"
                  + " it (aggregate MB/s); direct_io mounts (bindfs --multithreaded), ufs in the"
                  + " page cache.");
          System.out.print(t3.render());
          System.out.println();
          System.out.printf(
              "4. 4 KiB reads at random 4 KiB-aligned offsets of the large file,"
                  + " %d s per row; direct_io mounts (Strata short-circuit %s).%n",
              randomSeconds, shortCircuit ? "on" : "off");
          System.out.print(t4.render());
          System.out.println();
          System.out.printf(
              "6. Changes made elsewhere, seen through a mount at its default"
                  + " settings (ms from the change to the first poll that shows it; %d of each,"
                  + " polled every ms).%n",
              FuseInvalidation.SAMPLES);
          System.out.print(t6.render());
          System.out.println();
          System.out.printf(
              "5. RSS of the Strata FUSE process (direct_io mount) over a %d s"
                  + " soak of 4 threads reading 4 KiB-1 MiB at random offsets, sampled every 10 s.%n",
              soakSeconds);
          System.out.print(soak.table().render());
          System.out.println(soak.summary());
        } finally {
          BenchMount.closeAll(mounts);
        }
      }
    } finally {
      if (BenchMount.closeAll(mounts)) {
        ReadBench.deleteTree(base);
      } else {
        System.err.println("left " + base + " in place: a mount below it did not go away");
      }
    }
  }

  // ---- 2. sequential ---------------------------------------------------------------------

  private static Table sequential(
      long size, Path ufs, BenchMount bindfs, List<BenchMount> mounts, BenchMount.Launcher launcher)
      throws Exception {
    String rel = "large.bin";
    // Served by the workers: nothing in the kernel's cache, a fresh FUSE process.
    LoadBench.dropPageCache();
    BenchMount strata = launcher.remount(CACHED, mounts);
    double strataWorkers = readRange(strata.point().resolve(rel), 0, size);
    double strataKept = readRange(strata.point().resolve(rel), 0, size);
    // bindfs reading a cold disk, then the FUSE cost alone: its source in the page cache (read
    // natively first), through a fresh bindfs mount whose own kernel cache holds nothing.
    LoadBench.dropPageCache();
    bindfs = bindfs.remountBindfs(mounts);
    double bindfsDisk = readRange(bindfs.point().resolve(rel), 0, size);
    LoadBench.dropPageCache();
    readRange(ufs.resolve(rel), 0, size);
    bindfs = bindfs.remountBindfs(mounts);
    double bindfsCeiling = readRange(bindfs.point().resolve(rel), 0, size);
    double localWarm = readRange(ufs.resolve(rel), 0, size);
    Table t =
        new Table(
            "case",
            "Strata MB/s",
            "baseline",
            "baseline MB/s",
            "Strata/baseline",
            "bindfs, source cached MB/s (ceiling)",
            "Strata/ceiling",
            "bindfs, cold disk MB/s",
            "Strata/cold bindfs",
            "target");
    t.row(
        "(a) re-read, kernel cache kept",
        Table.f1(strataKept),
        "local folder, page cache warm",
        Table.f1(localWarm),
        Table.f2(strataKept / localWarm),
        Table.f1(bindfsCeiling),
        Table.f2(strataKept / bindfsCeiling),
        Table.f1(bindfsDisk),
        Table.f2(strataKept / bindfsDisk),
        verdict(strataKept / localWarm, 0.5) + " (>= 0.5x local)");
    t.row(
        "(b) served by workers, page cache dropped, fresh mount",
        Table.f1(strataWorkers),
        "bindfs, source cached (fresh mount)",
        Table.f1(bindfsCeiling),
        Table.f2(strataWorkers / bindfsCeiling),
        Table.f1(bindfsCeiling),
        Table.f2(strataWorkers / bindfsCeiling),
        Table.f1(bindfsDisk),
        Table.f2(strataWorkers / bindfsDisk),
        verdict(strataWorkers / bindfsCeiling, 0.7) + " (>= 0.7x bindfs, source cached)");
    return t;
  }

  /** Reads {@code [from, to)} of a file with 1 MiB reads; returns MB/s. */
  private static double readRange(Path file, long from, long to) throws IOException {
    long start = System.nanoTime();
    long got = readSpan(file, from, to);
    double seconds = (System.nanoTime() - start) / 1e9;
    System.err.printf("%s [%d, %d): %.2f s%n", file, from, to, seconds);
    return got / 1e6 / seconds;
  }

  private static long readSpan(Path file, long from, long to) throws IOException {
    ByteBuffer buf = ByteBuffer.allocateDirect(SEQ_READ);
    long got = 0;
    long deadline = System.nanoTime() + PASS_LIMIT_NANOS;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      for (long pos = from; pos < to; ) {
        buf.clear().limit((int) Math.min(SEQ_READ, to - pos));
        int n = ch.read(buf, pos);
        if (n <= 0) {
          throw new IllegalStateException(file + " ended at " + pos + ", expected " + to);
        }
        pos += n;
        got += n;
        checkDeadline(deadline, "reading " + file);
      }
    }
    return got;
  }

  // ---- 3. threads on one file ------------------------------------------------------------

  private static Table parallel(
      long size, Path ufs, BenchMount bindfsDirect, BenchMount strataDirect) throws Exception {
    Table t =
        new Table(
            "threads",
            "each reads",
            "local MB/s",
            "bindfs direct_io MB/s",
            "Strata direct_io MB/s",
            "Strata x one thread",
            "bindfs x one thread",
            "Strata/local",
            "Strata/bindfs",
            "target (4 threads)");
    Path[] files = {
      ufs.resolve("large.bin"),
      bindfsDirect.point().resolve("large.bin"),
      strataDirect.point().resolve("large.bin")
    };
    // Warm: the JVM of the fresh direct_io mount compiled and every byte once in each cache.
    for (Path file : files) {
      readSpan(file, 0, size);
    }
    double[] one = new double[3];
    for (int threads : new int[] {1, 2, 4}) {
      double[] rate = new double[3];
      for (int k = 0; k < 3; k++) {
        Path file = files[k];
        long share = size / threads;
        double seconds =
            inThreads(
                threads, i -> readSpan(file, i * share, i == threads - 1 ? size : (i + 1) * share));
        rate[k] = size / 1e6 / seconds;
        System.err.printf("%s by %d threads: %.2f s%n", file, threads, seconds);
      }
      if (threads == 1) {
        one = rate;
      }
      t.row(
          threads,
          threads == 1 ? "whole file" : threads == 2 ? "a half" : "a quarter",
          Table.f1(rate[0]),
          Table.f1(rate[1]),
          Table.f1(rate[2]),
          Table.f2(rate[2] / one[2]),
          Table.f2(rate[1] / one[1]),
          Table.f2(rate[2] / rate[0]),
          Table.f2(rate[2] / rate[1]),
          threads == 4
              ? verdict(rate[2] / one[2], 1.5)
                  + " (>= 1.5x one thread); "
                  + verdict(rate[2] / rate[1], 0.7)
                  + " (>= 0.7x bindfs)"
              : "");
    }
    return t;
  }

  // ---- 4. random 4 KiB reads -------------------------------------------------------------

  private static Table random(
      long size,
      Path ufs,
      BenchMount bindfsDirect,
      BenchMount strataDirect,
      int seconds,
      MultiProcessCluster cluster,
      boolean shortCircuit)
      throws Exception {
    Table t =
        new Table(
            "threads",
            "local IOPS",
            "bindfs direct_io IOPS",
            "Strata direct_io IOPS",
            "Strata/local",
            "Strata/bindfs",
            "amplification",
            "bindfs us/read",
            "Strata us/read",
            "of it in Strata's Java code",
            "target");
    for (int threads : new int[] {1, 8}) {
      double local =
          randomReads(ufs.resolve("large.bin"), size, threads, seconds, PAGE, PAGE).iops();
      double bindfs =
          randomReads(bindfsDirect.point().resolve("large.bin"), size, threads, seconds, PAGE, PAGE)
              .iops();
      double before = workerBytes(cluster);
      double[] upcallsBefore = strataDirect.fuseCounters();
      RandomResult strata =
          randomReads(
              strataDirect.point().resolve("large.bin"), size, threads, seconds, PAGE, PAGE);
      double[] upcallsAfter = strataDirect.fuseCounters();
      // Bytes the mount fetched from the workers (over the data channel, or from their block
      // files by short-circuit) per byte it returned; the worker's own counters see only the
      // data channel.
      double amplification =
          (upcallsAfter[2] - upcallsBefore[2]) / Math.max(1, upcallsAfter[3] - upcallsBefore[3]);
      double workerSide = (workerBytes(cluster) - before) / strata.bytes();
      // Latency of one read syscall as each thread saw it, and the part of it spent in the
      // mount's read handler: the rest is the kernel, libfuse and jnr-fuse's upcall.
      double handlerUs =
          (upcallsAfter[0] - upcallsBefore[0])
              / Math.max(1, upcallsAfter[1] - upcallsBefore[1])
              * 1e6;
      t.row(
          threads,
          Table.f1(local),
          Table.f1(bindfs),
          Table.f1(strata.iops()),
          Table.f2(strata.iops() / local),
          Table.f2(strata.iops() / bindfs),
          Table.f2(amplification) + (shortCircuit ? "" : " (worker: " + Table.f2(workerSide) + ")"),
          Table.f1(threads * 1e6 / bindfs),
          Table.f1(threads * 1e6 / strata.iops()),
          Table.f1(handlerUs),
          verdict(strata.iops() / bindfs, 0.5)
              + " (>= 0.5x bindfs)"
              + "; "
              + verdict(1.1, amplification)
              + " (ampl. <= 1.1)");
    }
    return t;
  }

  /** Bytes the worker's data channel has served, from its tiers and from the under store. */
  private static double workerBytes(MultiProcessCluster cluster) {
    String scrape = cluster.scrapeWorker(0);
    return MultiProcessCluster.metric(scrape, "strata_worker_read_cache_bytes_total")
        + MultiProcessCluster.metric(scrape, "strata_worker_read_ufs_bytes_total");
  }

  record RandomResult(long ops, long bytes, double seconds) {
    double iops() {
      return ops / seconds;
    }
  }

  /**
   * Reads at random 4 KiB-aligned offsets, {@code minLen..maxLen} bytes each (multiples of 4 KiB),
   * from {@code threads} threads with a descriptor each, for {@code seconds}.
   */
  private static RandomResult randomReads(
      Path file, long size, int threads, double seconds, int minLen, int maxLen) throws Exception {
    AtomicLong ops = new AtomicLong();
    AtomicLong bytes = new AtomicLong();
    long pages = (size - maxLen) / PAGE + 1;
    long maxOps = 1_000_000_000L;
    double took =
        inThreads(
            threads,
            i -> {
              ByteBuffer buf = ByteBuffer.allocateDirect(maxLen);
              ThreadLocalRandom r = ThreadLocalRandom.current();
              long end = System.nanoTime() + (long) (seconds * 1e9);
              try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
                for (long k = 0; k < maxOps && System.nanoTime() < end; k++) {
                  int len =
                      minLen == maxLen
                          ? maxLen
                          : PAGE * r.nextInt(minLen / PAGE, maxLen / PAGE + 1);
                  buf.clear().limit(len);
                  int n = ch.read(buf, r.nextLong(pages) * PAGE);
                  if (n <= 0) {
                    throw new IllegalStateException("short read of " + file);
                  }
                  ops.incrementAndGet();
                  bytes.addAndGet(n);
                }
              }
            });
    System.err.printf(
        "%s random reads by %d threads: %d in %.2f s%n", file, threads, ops.get(), took);
    return new RandomResult(ops.get(), bytes.get(), took);
  }

  // ---- 5. RSS soak -----------------------------------------------------------------------

  record Soak(Table table, String summary) {}

  private static Soak soak(long size, BenchMount strataDirect, int seconds) throws Exception {
    long pid = strataDirect.pid();
    Path file = strataDirect.point().resolve("large.bin");
    // Each sample: second, VmRSS, RssAnon (the process's own heap and native memory; the rest
    // of VmRSS is mapped files, here the worker's block files read by short-circuit).
    List<long[]> samples = Collections.synchronizedList(new ArrayList<>());
    long start = System.nanoTime();
    Thread sampler =
        new Thread(
            () -> {
              // Samples at 0, 10, 20 ... s while the soak runs.
              for (int k = 0; 10L * k < seconds; k++) {
                long at = start + TimeUnit.SECONDS.toNanos(10L * k);
                long wait = at - System.nanoTime();
                try {
                  if (wait > 0) {
                    TimeUnit.NANOSECONDS.sleep(wait);
                  }
                } catch (InterruptedException e) {
                  return;
                }
                samples.add(new long[] {10L * k, rss(pid, "VmRSS:"), rss(pid, "RssAnon:")});
              }
            },
            "rss-sampler");
    sampler.start();
    RandomResult r;
    try {
      r = randomReads(file, size, 4, seconds, PAGE, 1 << 20);
    } finally {
      sampler.interrupt();
      sampler.join(5_000);
    }
    long[] closed = {Math.round(r.seconds()), rss(pid, "VmRSS:"), rss(pid, "RssAnon:")};
    Table t = new Table("second", "RSS MB", "of it anonymous MB");
    for (long[] s : samples) {
      t.row(s[0], Table.f1(s[1] / 1e6), Table.f1(s[2] / 1e6));
    }
    t.row(closed[0] + " (readers closed)", Table.f1(closed[1] / 1e6), Table.f1(closed[2] / 1e6));
    long warmAt = seconds / 6;
    long[] last = samples.get(samples.size() - 1);
    long[] warm = last;
    long peak = 0;
    for (long[] s : samples) {
      if (s[0] >= warmAt && warm == last) {
        warm = s;
      }
      if (s[0] >= warm[0]) {
        peak = Math.max(peak, s[1]);
      }
    }
    double change = 100.0 * (last[1] - warm[1]) / warm[1];
    double growth = 100.0 * (peak - warm[1]) / warm[1];
    String summary =
        String.format(
            "RSS after warm-up (second %d): %.1f MB; at the last sample"
                + " of the soak (second %d): %.1f MB, change %+.1f%%; highest after warm-up %+.1f%%;"
                + " %.0f reads/s, %.1f MB/s; target flat within 5%%: %s",
            warm[0],
            warm[1] / 1e6,
            last[0],
            last[1] / 1e6,
            change,
            growth,
            r.iops(),
            r.bytes() / 1e6 / r.seconds(),
            Math.abs(change) <= 5 && growth <= 5 ? "met" : "missed");
    return new Soak(t, summary);
  }

  private static long rss(long pid, String field) {
    return ProcStatus.bytes(pid, field);
  }

  // ---- helpers ---------------------------------------------------------------------------

  interface Body {
    void run(int index) throws Exception;
  }

  /** Runs {@code body} on {@code threads} threads at once; returns the seconds until all end. */
  static double inThreads(int threads, Body body) throws Exception {
    List<Thread> all = new ArrayList<>();
    Exception[] failure = new Exception[1];
    long start = System.nanoTime();
    for (int i = 0; i < threads; i++) {
      int index = i;
      Thread th =
          new Thread(
              () -> {
                try {
                  body.run(index);
                } catch (Exception e) {
                  synchronized (failure) {
                    failure[0] = e;
                  }
                }
              },
              "bench-reader-" + i);
      th.start();
      all.add(th);
    }
    for (Thread th : all) {
      th.join(TimeUnit.NANOSECONDS.toMillis(PASS_LIMIT_NANOS) + 60_000);
      if (th.isAlive()) {
        throw new IllegalStateException(th.getName() + " did not finish in time");
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    synchronized (failure) {
      if (failure[0] != null) {
        throw failure[0];
      }
    }
    return seconds;
  }

  private static void checkDeadline(long deadline, String what) {
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException(
          what
              + " took longer than "
              + TimeUnit.NANOSECONDS.toMinutes(PASS_LIMIT_NANOS)
              + " minutes");
    }
  }

  private static String verdict(double ratio, double atLeast) {
    return ratio >= atLeast ? "met" : "missed";
  }
}
