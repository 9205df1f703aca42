package io.strata.tests;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.FileSystem;
import io.strata.common.WorkerHashing;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata fs load} against real master and worker processes loading from a local folder:
 * blocks land where the clients' hashing looks for them, {@code --verify} reloads what is missing,
 * failures are reported while the rest loads, and the job survives a worker killed with {@code kill
 * -9} and a master killed and restarted in the middle of it. A worker limited to 256 MiB of direct
 * memory loads a dataset four times that size.
 */
class LoadEndToEndTest {
  static final long BLOCK = 1 << 20;
  static final long MB = 1 << 20;
  @TempDir Path dir;

  static MultiProcessCluster.Builder twoWorkers(Path dir) {
    return MultiProcessCluster.builder(dir)
        .workers(2)
        .property("strata.master.file.block.size", Long.toString(BLOCK))
        .property("strata.master.worker.timeout", "4s")
        .property("strata.worker.tier.mem.capacity", "32MB")
        .property("strata.worker.tier.ssd.capacity", "2GB");
  }

  /** Every block of every file under a path is held by the worker the hashing picks. */
  static void assertCachedWhereHashingSays(FileSystem fs, String root, List<String> files)
      throws Exception {
    List<WorkerInfo> live =
        fs.getWorkers().stream()
            .filter(w -> w.getState() == WorkerState.WORKER_LIVE)
            .collect(Collectors.toList());
    for (String f : files) {
      for (BlockInfo b : fs.getFileBlocks(root + "/" + f).blocks()) {
        long expected =
            WorkerHashing.pick(b.getBlockId(), live, WorkerInfo::getWorkerId).getWorkerId();
        List<Long> holders =
            b.getLocationsList().stream()
                .map(BlockLocation::getWorkerId)
                .collect(Collectors.toList());
        assertTrue(
            holders.contains(expected),
            f
                + " block "
                + b.getBlockId()
                + " is on "
                + holders
                + ", not on the hashed worker "
                + expected);
      }
    }
  }

  static String read(FileSystem fs, String path) throws Exception {
    try (InputStream in = fs.openFile(path)) {
      return TestTree.sha256(in);
    }
  }

  static double workerBlocks(MultiProcessCluster cluster, int worker) {
    return MultiProcessCluster.metric(cluster.scrapeWorker(worker), "strata_worker_tier_blocks");
  }

  @Test
  void loadCachesEveryBlockWhereHashingSaysAndVerifyReloadsWhatWasFreed() throws Exception {
    try (MultiProcessCluster cluster = twoWorkers(dir).start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      TestTree tree =
          TestTree.generate(cluster.underStoreRoot().resolve("data"), 300, BLOCK, 3, 41);
      MultiProcessCluster.ShellResult r = cluster.shell("fs", "load", "/data");
      assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
      LoadJobStatus s = fs.loadStatus("/data", 10);
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState());
      assertEquals(tree.files().size(), s.getFilesDone());
      assertEquals(tree.files().size(), s.getFilesTotal());
      assertEquals(0, s.getFilesFailed());
      long bytes = tree.files().values().stream().mapToLong(TestTree.FileFacts::length).sum();
      assertEquals(bytes, s.getBytesDone());
      assertEquals(bytes, s.getBytesLoaded());
      List<String> files = new ArrayList<>(tree.files().keySet());
      assertCachedWhereHashingSays(fs, "/data", files);
      assertTrue(
          workerBlocks(cluster, 0) > 0 && workerBlocks(cluster, 1) > 0, "both workers hold blocks");

      // Reads are now served from the cache: nothing more comes from the under store.
      double ufsBefore =
          MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_bytes_total")
              + MultiProcessCluster.metric(
                  cluster.scrapeWorker(1), "strata_worker_read_ufs_bytes_total");
      String largest = tree.largestFile();
      assertEquals(tree.files().get(largest).sha256(), read(fs, "/data/" + largest));
      for (int i = 0; i < files.size(); i += 15) {
        assertEquals(tree.files().get(files.get(i)).sha256(), read(fs, "/data/" + files.get(i)));
      }
      double ufsAfter =
          MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_bytes_total")
              + MultiProcessCluster.metric(
                  cluster.scrapeWorker(1), "strata_worker_read_ufs_bytes_total");
      assertEquals(ufsBefore, ufsAfter, "reads after the load went to the under store");

      // Free the largest file; once the workers dropped its blocks, --verify loads exactly them.
      int freedBlocks = fs.getFileBlocks("/data/" + largest).blocks().size();
      double held = workerBlocks(cluster, 0) + workerBlocks(cluster, 1);
      fs.free("/data/" + largest, false);
      MultiProcessCluster.waitFor(
          "workers dropping the freed blocks",
          Duration.ofSeconds(30),
          () -> workerBlocks(cluster, 0) + workerBlocks(cluster, 1) == held - freedBlocks,
          null);
      r = cluster.shell("fs", "load", "--verify", "/data");
      assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
      s = fs.loadStatus("/data", 10);
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState());
      assertEquals(freedBlocks, s.getBlocksLoaded());
      assertEquals(tree.files().size(), s.getFilesDone());
      assertCachedWhereHashingSays(fs, "/data", List.of(largest));
    }
  }

  @Test
  void aFileThatVanishesFromTheUnderStoreIsReportedAndTheRestLoads() throws Exception {
    try (MultiProcessCluster cluster = twoWorkers(dir).start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      TestTree tree = TestTree.generate(cluster.underStoreRoot().resolve("data"), 80, BLOCK, 2, 43);
      // The namespace knows every file; then one disappears from the store behind its back.
      assertEquals(0, cluster.shell("fs", "load", "--metadata-only", "/data").exitCode());
      List<String> files = new ArrayList<>(tree.files().keySet());
      String gone =
          files.stream().filter(f -> tree.files().get(f).length() > 0).findFirst().orElseThrow();
      Files.delete(cluster.underStoreRoot().resolve("data").resolve(gone));

      MultiProcessCluster.ShellResult r = cluster.shell("fs", "load", "/data");
      assertNotEquals(0, r.exitCode(), "a failed file must fail the command");
      assertTrue((r.stdout() + r.stderr()).contains("/data/" + gone), r.stdout() + r.stderr());
      LoadJobStatus s = fs.loadStatus("/data", 10);
      assertEquals(LoadJobState.LOAD_FAILED, s.getState());
      assertEquals(1, s.getFilesFailed());
      assertEquals(files.size() - 1, s.getFilesDone());
      LoadFailure failure = s.getFailures(0);
      assertEquals("/data/" + gone, failure.getPath());
      assertTrue(failure.getReason().contains("does not exist"), failure.getReason());
      files.remove(gone);
      assertCachedWhereHashingSays(fs, "/data", files);
    }
  }

  @Test
  void aWorkerKilledDuringALoadLeavesEveryFileCachedOnTheSurvivor() throws Exception {
    try (MultiProcessCluster cluster = twoWorkers(dir).start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      TestTree tree =
          TestTree.generate(cluster.underStoreRoot().resolve("data"), 120, BLOCK, 6, 47);
      // A bandwidth cap keeps the job running long enough to kill a worker in its middle.
      MultiProcessCluster.ShellResult r =
          cluster.shell("fs", "load", "--detach", "--verify", "--bandwidth", "4MB", "/data");
      assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
      MultiProcessCluster.waitFor(
          "a third of the files loaded",
          Duration.ofSeconds(60),
          () -> {
            try {
              LoadJobStatus s = fs.loadStatus("/data", 0);
              return s.getFilesDone() >= tree.files().size() / 3;
            } catch (Exception e) {
              return false;
            }
          },
          null);
      assertEquals(
          LoadJobState.LOAD_RUNNING,
          fs.loadStatus("/data", 0).getState(),
          "the job must still be loading when the worker dies");
      cluster.killWorker(1);
      LoadJobStatus s = loadEnded(fs, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(tree.files().size(), s.getFilesDone());
      cluster.waitForLiveWorkers(1, Duration.ofSeconds(30));
      List<String> files = new ArrayList<>(tree.files().keySet());
      assertCachedWhereHashingSays(fs, "/data", files);
      for (String f : files) {
        for (BlockInfo b : fs.getFileBlocks("/data/" + f).blocks()) {
          assertFalse(b.getLocationsList().isEmpty(), f + " block " + b.getBlockId());
        }
      }
      String largest = tree.largestFile();
      assertEquals(tree.files().get(largest).sha256(), read(fs, "/data/" + largest));
    }
  }

  @Test
  void aMasterKilledDuringALoadResumesTheJobAfterItsRestart() throws Exception {
    // A resume delay well above the time both workers need to register again, even on a
    // loaded machine, so that resumed blocks go where the hashing of two live workers says.
    try (MultiProcessCluster cluster =
            twoWorkers(dir)
                .property("strata.master.load.journal.interval", "200ms")
                .property("strata.master.load.resume.delay", "20s")
                .start();
        FileSystem fs =
            FileSystem.connect(
                cluster.clientConfig(Map.of("strata.client.master.retry.max.duration", "60s")))) {
      TestTree tree =
          TestTree.generate(cluster.underStoreRoot().resolve("data"), 200, BLOCK, 4, 53);
      MultiProcessCluster.ShellResult r =
          cluster.shell("fs", "load", "--detach", "--bandwidth", "3MB", "/data");
      assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
      long jobId = fs.loadStatus("/data", 0).getJobId();
      MultiProcessCluster.waitFor(
          "some files loaded",
          Duration.ofSeconds(60),
          () -> {
            try {
              return fs.loadStatus("/data", 0).getFilesDone() >= tree.files().size() / 4;
            } catch (Exception e) {
              return false;
            }
          },
          null);
      assertEquals(
          LoadJobState.LOAD_RUNNING,
          fs.loadStatus("/data", 0).getState(),
          "the job must still be loading when the master dies");
      cluster.killMaster();
      cluster.startMaster();
      cluster.waitForLiveWorkers(2, Duration.ofSeconds(60));
      LoadJobStatus s = loadEnded(fs, "/data");
      assertEquals(jobId, s.getJobId(), "the restarted master resumed the same job");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(tree.files().size(), s.getFilesDone(), "every file counted once");
      assertEquals(tree.files().size(), s.getFilesTotal());
      assertCachedWhereHashingSays(fs, "/data", new ArrayList<>(tree.files().keySet()));
      assertTrue(
          Files.readString(cluster.logsDir().resolve("master.log"))
              .contains("Resuming load job " + jobId),
          "the master log says it resumed the job");
    }
  }

  @Test
  void aWorkerWithLittleDirectMemoryLoadsADatasetManyTimesLarger() throws Exception {
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(dir)
                .workers(1)
                .property("strata.master.file.block.size", Long.toString(64 * MB))
                .property("strata.worker.tier.mem.capacity", "32MB")
                .property("strata.worker.tier.ssd.capacity", "2GB")
                .workerJvmOption("-XX:MaxDirectMemorySize=256m")
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      Path data = Files.createDirectories(cluster.underStoreRoot().resolve("big"));
      List<TestTree.FileFacts> facts = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        facts.add(TestTree.writeRandom(data.resolve("part-" + i), 256 * MB + 4097L * i, i));
      }
      MultiProcessCluster.ShellResult r = cluster.shell("fs", "load", "/big");
      assertEquals(0, r.exitCode(), r.stdout() + r.stderr());
      LoadJobStatus s = fs.loadStatus("/big", 10);
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState());
      assertTrue(s.getBytesLoaded() >= 4 * 256 * MB);
      String log =
          Files.readString(cluster.logsDir().resolve("worker0.log"))
              + Files.readString(cluster.logsDir().resolve("worker0.out"));
      assertFalse(log.contains("OutOfMemoryError"), "the worker ran out of memory");
      String scrape = cluster.scrapeWorker(0);
      double peak =
          MultiProcessCluster.metric(scrape, "strata_worker_buffer_pool_in_use_peak_bytes");
      // Sixteen load threads of 4 MiB each, by default.
      assertTrue(peak > 0 && peak <= 16 * 4 * MB, "pool peak " + peak);
      assertEquals(facts.get(3).sha256(), read(fs, "/big/part-3"));
    }
  }

  /** Waits (2 min at most) for the load job of {@code path} to end, and returns how it ended. */
  private static LoadJobStatus loadEnded(FileSystem fs, String path) {
    return await("the load of " + path + " to end")
        .atMost(Duration.ofSeconds(120))
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> fs.loadStatus(path, 100),
            j ->
                j.getState() != LoadJobState.LOAD_LISTING
                    && j.getState() != LoadJobState.LOAD_RUNNING
                    && j.getState() != LoadJobState.LOAD_VERIFYING);
  }
}
