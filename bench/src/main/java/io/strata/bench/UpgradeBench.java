package io.strata.bench;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.Release;
import io.strata.tests.TestTree;
import io.strata.tests.upgrade.ReaderLoop;
import io.strata.tests.upgrade.RollingUpgrade;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads through a full rolling upgrade: a cluster of three masters and two workers of the previous
 * release (tests/compat/PREVIOUS_RELEASE) is upgraded to this build by the runbook's commands
 * (docs/rolling-upgrade.md) while reader threads read cached and uncached files through the client.
 * Prints reads per second and the worst read latency before, during each step and after (the phase
 * before is the baseline), and how long each step took; then restarts the upgraded workers once
 * more, which drain as this release's workers do. Targets: no failed read; the worst latency during
 * the upgrade under 5 s. Usage: {@code bench/run upgrade [--readers 4] [--files 24]
 * [--steady-seconds 20]}.
 */
final class UpgradeBench {
  private static final long BLOCK = 1 << 20;

  private UpgradeBench() {}

  static void run(Map<String, String> opts) throws Exception {
    int readerCount = Integer.parseInt(opts.getOrDefault("readers", "4"));
    int fileCount = Integer.parseInt(opts.getOrDefault("files", "24"));
    int steady = Integer.parseInt(opts.getOrDefault("steady-seconds", "20"));
    Release previous = Release.previous();
    Release current = Release.current();
    Path base =
        Files.createTempDirectory(
            Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-upgrade");
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(base)
                .masters(3)
                .workers(2)
                .release(previous)
                .property("strata.master.file.block.size", Long.toString(BLOCK))
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig());
        RollingUpgrade upgrade = new RollingUpgrade(cluster)) {
      List<ReaderLoop.Expected> files = new ArrayList<>();
      for (int i = 0; i < fileCount; i++) {
        String dir = i % 2 == 0 ? "cached" : "cold";
        String path = "/data/" + dir + "/part-" + i + ".bin";
        Path file = cluster.underStoreRoot().resolve(path.substring(1));
        Files.createDirectories(file.getParent());
        TestTree.writeRandom(file, BLOCK + 4096L * i + 7, i);
        files.add(ReaderLoop.Expected.of(path, Files.readAllBytes(file)));
      }
      upgrade.strata("fs", "load", "/data/cached");
      ReaderLoop readers = new ReaderLoop(files);
      for (int r = 0; r < readerCount; r++) {
        readers.reader(
            "client-" + r,
            path -> {
              try (FileInStream in = fs.openFile(path)) {
                return in.readAllBytes();
              }
            });
      }
      readers.start("before", Duration.ofMinutes(30));
      Thread.sleep(steady * 1000L);
      readers.phase("prepare");
      upgrade.prepare();
      readers.phase("masters");
      upgrade.upgradeMasters(current);
      readers.phase("workers");
      upgrade.upgradeWorkers(current, 2);
      readers.phase("finalize");
      upgrade.finalizeUpgrade();
      // Workers of this release drain when stopped: restart each once more to see it.
      readers.phase("workers drain");
      upgrade.upgradeWorkers(current, 2);
      readers.phase("after");
      Thread.sleep(steady * 1000L);
      readers.stop();

      ReaderLoop.PhaseStats before = readers.phases().get("before");
      Table t =
          new Table("phase", "seconds", "reads", "reads/s", "vs before", "worst ms", "failed");
      double worstDuring = 0;
      for (Map.Entry<String, ReaderLoop.PhaseStats> e : readers.phases().entrySet()) {
        ReaderLoop.PhaseStats s = e.getValue();
        t.row(
            e.getKey(),
            Table.f1(s.seconds()),
            s.reads(),
            Table.f1(s.readsPerSecond()),
            Table.f2(s.readsPerSecond() / before.readsPerSecond()),
            Table.f1(s.worstLatencyMs()),
            s.failures());
        if (!e.getKey().equals("before") && !e.getKey().equals("after")) {
          worstDuring = Math.max(worstDuring, s.worstLatencyMs());
        }
      }
      Table steps = new Table("step", "seconds");
      upgrade.stepSeconds().forEach((step, sec) -> steps.row(step, Table.f1(sec)));
      System.out.println(
          "Rolling upgrade "
              + previous.release()
              + " -> "
              + current.release()
              + ": 3 masters, 2 workers, "
              + readerCount
              + " readers over "
              + fileCount
              + " files of"
              + " ~1 MiB (half loaded, half cold), block "
              + (BLOCK >> 20)
              + " MiB");
      System.out.print(t.render());
      System.out.println();
      System.out.print(steps.render());
      long failed = readers.totalFailures();
      System.out.printf(
          "%nfailed reads: %d (target 0: %s); worst latency during the upgrade: "
              + "%.0f ms (target < 5000: %s)%n",
          failed,
          failed == 0 ? "met" : "MISSED",
          worstDuring,
          worstDuring < 5000 ? "met" : "MISSED");
      readers.failures().forEach(f -> System.out.println("  " + f));
    } finally {
      ReadBench.deleteTree(base);
    }
  }
}
