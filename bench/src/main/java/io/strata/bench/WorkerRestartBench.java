package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.BlockIds;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Times a worker restart over many cached blocks: fills a worker's SSD tier with block files, kills
 * the worker with kill -9, leaves half-written files in its tmp folder, starts it again and
 * measures the time until it serves its metrics endpoint and until its block count is back.
 * Baseline in the same run: listing and stat-ing the same block folder from Java. Usage: {@code
 * bench/run worker-restart [--blocks 100000]}.
 */
final class WorkerRestartBench {
  private WorkerRestartBench() {}

  static void run(Map<String, String> opts) throws Exception {
    int blocks = Integer.parseInt(opts.getOrDefault("blocks", "100000"));
    Path base =
        Files.createTempDirectory(
            Path.of(opts.getOrDefault("dir", "/tmp")), "strata-bench-restart");
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(base)
            .workers(1)
            .property("strata.master.file.block.size", "4KB")
            .workerProperty(0, "strata.worker.tier.mem.capacity", "0")
            .start()) {
      // One under-store file of `blocks` 4 KiB blocks, so every block file the worker finds
      // belongs to a real file and the master keeps it.
      TestTree.writeRandom(cluster.underStoreRoot().resolve("many-blocks.bin"), 4096L * blocks, 1);
      long fileId;
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        fileId = fs.getStatus("/many-blocks.bin").getFileId();
      }
      cluster.killWorker(0);
      Path blockDir = base.resolve("worker0/ssd/blocks");
      Path tmpDir = base.resolve("worker0/ssd/tmp");
      Files.createDirectories(blockDir);
      Files.createDirectories(tmpDir);
      byte[] content = new byte[4096];
      long t0 = System.nanoTime();
      for (int i = 0; i < blocks; i++) {
        Files.write(blockDir.resolve(Long.toString(BlockIds.blockId(fileId, i))), content);
      }
      for (int i = 0; i < 10; i++) {
        Files.write(tmpDir.resolve("half-written-" + i), content);
      }
      System.err.printf("wrote %d block files in %.1fs%n", blocks, (System.nanoTime() - t0) / 1e9);

      long listStart = System.nanoTime();
      long total = 0;
      try (var stream = Files.newDirectoryStream(blockDir)) {
        for (Path p : stream) {
          total += Files.size(p);
        }
      }
      double listSec = (System.nanoTime() - listStart) / 1e9;

      long start = System.nanoTime();
      cluster.startWorker(0);
      double upSec = (System.nanoTime() - start) / 1e9;
      MultiProcessCluster.waitFor(
          "block count back",
          java.time.Duration.ofMinutes(5),
          () ->
              MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_tier_blocks")
                  >= blocks,
          null);
      double countedSec = (System.nanoTime() - start) / 1e9;
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        MultiProcessCluster.waitFor(
            "master sees every block",
            java.time.Duration.ofMinutes(5),
            () -> {
              try {
                return fs.getStatus("/many-blocks.bin").getCachedBytes() == 4096L * blocks;
              } catch (Exception e) {
                return false;
              }
            },
            null);
      }
      double registeredSec = (System.nanoTime() - start) / 1e9;
      long leftInTmp;
      try (var s = Files.list(tmpDir)) {
        leftInTmp = s.count();
      }
      Table t = new Table("measure", "seconds");
      t.row(
          "baseline: list + stat " + blocks + " block files (" + total / 4096 + " seen)",
          Table.f2(listSec));
      t.row("worker restart to serving /health (JVM start included)", Table.f2(upSec));
      t.row("worker restart to all " + blocks + " blocks listed", Table.f2(countedSec));
      t.row("worker restart to the master locating every block", Table.f2(registeredSec));
      System.out.printf("Worker restart benchmark: %d cached blocks%n", blocks);
      System.out.print(t.render());
      System.out.printf(
          "half-written files left in tmp after restart: %d (expected 0)%n", leftInTmp);
    } finally {
      ReadBench.deleteTree(base);
    }
  }
}
