package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.conf.ConfigType;
import io.strata.common.conf.FuseKeys;
import io.strata.tests.MultiProcessCluster;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The small-file rows of {@code bench/run fuse}: a dataset of many small files in folders, read
 * whole in shuffled order through the local folder, a fresh bindfs mount and a fresh Strata mount,
 * as a training job's epochs read it:
 *
 * <ul>
 *   <li>(a) a first pass, the page cache dropped and both mounts fresh, listing every folder first
 *       as PyTorch's ImageFolder does;
 *   <li>(a') the same without the listing (a loader that reads its file names from an index);
 *   <li>(b) a later pass on the same mounts once the kernel's attribute and entry caches of both
 *       have expired;
 *   <li>(c) a first pass over files the cluster holds no block of (freed), page cache dropped.
 * </ul>
 *
 * Each Strata pass also reports the master calls it caused per file, from the master's own
 * counters. Targets: (a) at least 0.8x bindfs at 1 and 8 threads, (b) at least 0.5x bindfs at 8
 * threads, (c) at least 0.5x bindfs.
 */
final class FuseSmallFiles {
  private static final long PASS_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(30);

  private final List<String> small;
  private final long size;
  private final int folders;
  private final Path ufs;
  private final MultiProcessCluster cluster;
  private final BenchMount.Launcher launcher;
  private final String strataMount;
  private final List<BenchMount> mounts;
  private BenchMount bindfs;

  /**
   * @param small the files, relative to the under store's root, in the order they are read
   * @param strataMount the name of the kernel-cached Strata mount of the launcher
   */
  FuseSmallFiles(
      List<String> small,
      long size,
      int folders,
      Path ufs,
      MultiProcessCluster cluster,
      BenchMount.Launcher launcher,
      String strataMount,
      BenchMount bindfs,
      List<BenchMount> mounts) {
    this.small = small;
    this.size = size;
    this.folders = folders;
    this.ufs = ufs;
    this.cluster = cluster;
    this.launcher = launcher;
    this.strataMount = strataMount;
    this.bindfs = bindfs;
    this.mounts = mounts;
  }

  /** The bindfs mount now (the rows mount it afresh). */
  BenchMount bindfs() {
    return bindfs;
  }

  /** One pass's rate through each of the three roots, and Strata's master calls per file. */
  private record Pass(double local, double bindfs, double strata, double callsPerFile) {}

  Table run() throws Exception {
    Table t =
        new Table(
            "row",
            "threads",
            "local files/s",
            "bindfs files/s",
            "Strata files/s",
            "Strata/local",
            "Strata/bindfs",
            "Strata master calls/file",
            "target");
    for (int threads : new int[] {1, 8}) {
      Pass listed = freshPass(threads, true);
      row(t, "(a) first pass, listed then read", threads, listed, 0.8);
      Pass later = laterPass(threads);
      row(t, "(b) later pass, kernel caches expired", threads, later, threads == 8 ? 0.5 : 0);
      Pass unlisted = freshPass(threads, false);
      row(t, "(a') first pass, not listed", threads, unlisted, 0);
      Pass cold = neverCachedPass(threads);
      row(t, "(c) first pass, never cached", threads, cold, 0.5);
    }
    return t;
  }

  private static void row(Table t, String name, int threads, Pass p, double target) {
    t.row(
        name,
        threads,
        Table.f1(p.local),
        Table.f1(p.bindfs),
        Table.f1(p.strata),
        Table.f2(p.strata / p.local),
        Table.f2(p.strata / p.bindfs),
        String.format("%.4f", p.callsPerFile),
        target == 0 ? "" : verdict(p.strata / p.bindfs, target) + " (>= " + target + "x bindfs)");
  }

  private static String verdict(double ratio, double atLeast) {
    return ratio >= atLeast ? "met" : "missed";
  }

  /** (a) and (a'): page cache dropped, both mounts mounted afresh. */
  private Pass freshPass(int threads, boolean listFirst) throws Exception {
    LoadBench.dropPageCache();
    double local = read(ufs, threads, listFirst);
    LoadBench.dropPageCache();
    bindfs = bindfs.remountBindfs(mounts);
    double viaBindfs = read(bindfs.point(), threads, listFirst);
    LoadBench.dropPageCache();
    BenchMount strata = launcher.remount(strataMount, mounts);
    double calls = masterPathCalls();
    double viaStrata = read(strata.point(), threads, listFirst);
    return new Pass(local, viaBindfs, viaStrata, (masterPathCalls() - calls) / small.size());
  }

  /** (b): the same mounts again once their kernel caches have expired. */
  private Pass laterPass(int threads) throws Exception {
    Duration wait = kernelCacheTime().plusMillis(500);
    System.err.printf(
        "waiting %d ms for the kernel's attribute and entry caches to expire%n", wait.toMillis());
    Thread.sleep(wait.toMillis());
    double local = read(ufs, threads, false);
    double viaBindfs = read(bindfs.point(), threads, false);
    BenchMount strata = launcher.current(strataMount);
    double calls = masterPathCalls();
    double viaStrata = read(strata.point(), threads, false);
    return new Pass(local, viaBindfs, viaStrata, (masterPathCalls() - calls) / small.size());
  }

  /** (c): every block of the files freed, page cache dropped, fresh mounts, listed then read. */
  private Pass neverCachedPass(int threads) throws Exception {
    try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      fs.free("/small", true);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (cachedBytes(fs) > 0) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "the worker still holds blocks of /small 120 s after" + " they were freed");
        }
        Thread.sleep(200);
      }
    }
    return freshPass(threads, true);
  }

  /** Bytes of the sampled small files that the cluster holds (a file per folder). */
  private long cachedBytes(FileSystem fs) throws Exception {
    long cached = 0;
    for (int i = 0; i < Math.min(folders, small.size()); i++) {
      cached += fs.getStatus("/" + small.get(i)).getCachedBytes();
    }
    return cached;
  }

  /**
   * The longest the Strata mount's kernel caches hold an answer, and at least bindfs's (libfuse's
   * default of 1 s): the settings the Strata mounts get, their defaults otherwise.
   */
  private Duration kernelCacheTime() {
    Map<String, String> settings = launcher.settings();
    Duration longest = Duration.ofSeconds(1);
    for (var key : List.of(FuseKeys.ATTR_TIMEOUT, FuseKeys.ENTRY_TIMEOUT)) {
      Duration d = ConfigType.parseDuration(settings.getOrDefault(key.name(), key.defaultValue()));
      if (d.compareTo(longest) > 0) {
        longest = d;
      }
    }
    return longest;
  }

  /** The master's calls of the methods a mount makes per path, from its metrics. */
  private double masterPathCalls() {
    String scrape = cluster.scrapeMaster();
    double sum = 0;
    for (String line : scrape.split("\n")) {
      if (line.startsWith("strata_master_rpc_latency_seconds_count{")
          && (line.contains("method=\"GetStatus\"")
              || line.contains("method=\"GetFileBlocks\"")
              || line.contains("method=\"ListStatus\""))) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  /**
   * Reads every file whole, the threads taking the next file from one shuffled list; with {@code
   * listFirst}, the threads first list every folder (taken from a queue), timed with the reads.
   * Returns files per second.
   */
  private double read(Path root, int threads, boolean listFirst) throws Exception {
    AtomicInteger nextFolder = new AtomicInteger();
    AtomicInteger next = new AtomicInteger();
    AtomicLong bytes = new AtomicLong();
    AtomicLong listed = new AtomicLong();
    double seconds =
        FuseBench.inThreads(
            threads,
            i -> {
              long deadline = System.nanoTime() + PASS_LIMIT_NANOS;
              if (listFirst) {
                for (int d = nextFolder.getAndIncrement();
                    d < folders;
                    d = nextFolder.getAndIncrement()) {
                  try (DirectoryStream<Path> entries =
                      Files.newDirectoryStream(root.resolve("small/d" + d))) {
                    for (Path ignored : entries) {
                      listed.incrementAndGet();
                    }
                  }
                }
              }
              byte[] buf = new byte[1 << 20];
              for (int f = next.getAndIncrement(); f < small.size(); f = next.getAndIncrement()) {
                try (InputStream in = Files.newInputStream(root.resolve(small.get(f)))) {
                  for (int n = in.read(buf); n > 0; n = in.read(buf)) {
                    bytes.addAndGet(n);
                  }
                }
                if (System.nanoTime() > deadline) {
                  throw new IllegalStateException(
                      "reading small files below "
                          + root
                          + " took longer"
                          + " than "
                          + TimeUnit.NANOSECONDS.toMinutes(PASS_LIMIT_NANOS)
                          + " minutes");
                }
              }
            });
    if (bytes.get() != size * small.size() || (listFirst && listed.get() != small.size())) {
      throw new IllegalStateException(
          "read "
              + bytes.get()
              + " bytes and listed "
              + listed.get()
              + " files below "
              + root
              + ", expected "
              + size * small.size()
              + " bytes and "
              + small.size()
              + " files");
    }
    System.err.printf(
        "small files below %s, %d threads%s: %.2f s%n",
        root, threads, listFirst ? ", listed first" : "", seconds);
    return small.size() / seconds;
  }
}
