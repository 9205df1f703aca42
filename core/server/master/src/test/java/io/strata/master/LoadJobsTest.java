package io.strata.master;

import static io.strata.master.LoadMasterCalls.POLL;
import static io.strata.master.LoadMasterCalls.WAIT;
import static io.strata.master.LoadMasterCalls.awaitEnd;
import static io.strata.master.LoadMasterCalls.load;
import static io.strata.master.LoadMasterCalls.status;
import static io.strata.master.LoadMasterCalls.submit;
import static io.strata.master.TestMaster.assertFails;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.common.BlockIds;
import io.strata.common.WorkerHashing;
import io.strata.proto.BlockInfo;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.FreeRequest;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetWorkersRequest;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.MountRequest;
import io.strata.proto.StopLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import io.strata.proto.WorkerInfo;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Load jobs end to end inside one JVM: a real master, and workers that are real gRPC servers
 * answering {@code LoadBlocks} by script ({@link ScriptedWorker}).
 */
class LoadJobsTest {
  private static final long MB = 1 << 20;

  @TempDir Path home;
  @TempDir Path store;

  private static Map<String, String> settings(String... pairs) {
    Map<String, String> c = new HashMap<>();
    c.put("strata.master.file.block.size", "1MB");
    // The fake workers send no heartbeats: keep them live for the whole test.
    c.put("strata.master.worker.timeout", "10min");
    for (int i = 0; i < pairs.length; i += 2) {
      c.put(pairs[i], pairs[i + 1]);
    }
    return c;
  }

  /** Every block of the files with its length, in walk order. */
  private static Map<Long, Long> blocksOf(List<FileInfo> files) {
    Map<Long, Long> blocks = new LinkedHashMap<>();
    for (FileInfo f : files) {
      int count = f.getLength() == 0 ? 0 : BlockIds.blockCount(f.getLength(), f.getBlockSize());
      for (int i = 0; i < count; i++) {
        blocks.put(
            BlockIds.blockId(f.getFileId(), i),
            Math.min(f.getBlockSize(), f.getLength() - i * f.getBlockSize()));
      }
    }
    return blocks;
  }

  private static long bytesOf(List<FileInfo> files) {
    return files.stream().mapToLong(FileInfo::getLength).sum();
  }

  /** Files named {@code f00}, {@code f01}... under a directory, so walk order is name order. */
  private static List<FileInfo> flatFiles(TestMaster m, String dir, long... lengths)
      throws Exception {
    List<FileInfo> files = new ArrayList<>();
    for (int i = 0; i < lengths.length; i++) {
      files.add(m.file(String.format("%s/f%02d", dir, i), lengths[i]));
    }
    return files;
  }

  /** Fifty files over nested directories: empty ones, small ones, and multi-block ones. */
  private static List<FileInfo> mixedTree(TestMaster m) throws Exception {
    List<FileInfo> files = new ArrayList<>();
    String[] dirs = {"/data", "/data/a", "/data/b/c", "/data/b/d/e"};
    for (int i = 0; i < 50; i++) {
      long length =
          switch (i % 10) {
            case 0 -> 0;
            case 5 -> 2 * MB + MB / 2;
            case 7 -> MB;
            default -> 1000 + 37L * i;
          };
      files.add(m.file(dirs[i % dirs.length] + "/file-" + i, length));
    }
    return files;
  }

  private static Set<Long> holders(BlockInfo b) {
    return b.getLocationsList().stream()
        .map(BlockLocation::getWorkerId)
        .collect(Collectors.toSet());
  }

  private static List<BlockInfo> fileBlocks(TestMaster m, String path) {
    return m.fs
        .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath(path).build())
        .getBlocksList();
  }

  private static Map<Long, Integer> sum(ScriptedWorker... workers) {
    Map<Long, Integer> all = new HashMap<>();
    for (ScriptedWorker w : workers) {
      w.requestsByBlock().forEach((id, n) -> all.merge(id, n, Integer::sum));
    }
    return all;
  }

  @Test
  void aCallCancelledOnTheWaySendsItsBlocksToTheSameWorkerAgain() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker a = new ScriptedWorker();
        ScriptedWorker b = new ScriptedWorker()) {
      List<FileInfo> files = mixedTree(m);
      Map<Long, Long> blocks = blocksOf(files);
      long idA = a.register(m);
      long idB = b.register(m);
      List<WorkerInfo> live =
          m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkersList();
      a.cancelCalls(1);

      submit(m, "/data");
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(blocks.size(), s.getBlocksLoaded());
      // Every block still went to the worker hashing picks, and only there.
      assertEquals(blocks.keySet(), sum(a, b).keySet());
      for (ScriptedWorker w : List.of(a, b)) {
        long workerId = w == a ? idA : idB;
        for (LoadBlockTask t : w.received()) {
          assertEquals(
              WorkerHashing.pick(t.getBlockId(), live, WorkerInfo::getWorkerId).getWorkerId(),
              workerId,
              "worker of block " + t.getBlockId());
        }
      }
      // The cancelled call's blocks were sent to a again: twice each, the others once.
      long twice = a.requestsByBlock().values().stream().filter(n -> n == 2).count();
      assertTrue(twice > 0, "no block of a was sent twice: " + a.requestsByBlock());
      assertTrue(a.requestsByBlock().values().stream().allMatch(n -> n <= 2));
      assertTrue(b.requestsByBlock().values().stream().allMatch(n -> n == 1));
    }
  }

  @Test
  void everyBlockGoesOnceToTheWorkerHashingPicks() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker a = new ScriptedWorker();
        ScriptedWorker b = new ScriptedWorker()) {
      List<FileInfo> files = mixedTree(m);
      Map<Long, Long> blocks = blocksOf(files);
      long idA = a.register(m);
      long idB = b.register(m);
      List<WorkerInfo> live =
          m.fs.getWorkers(GetWorkersRequest.getDefaultInstance()).getWorkersList();
      assertEquals(2, live.size());

      SubmitLoadResponse submitted = submit(m, "/data");
      assertFalse(submitted.getAlreadyRunning());
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(submitted.getJob().getJobId(), s.getJobId());
      assertEquals(50, s.getFilesTotal());
      assertEquals(bytesOf(files), s.getBytesTotal());
      assertTrue(s.getListingDone());
      assertEquals(50, s.getFilesDone());
      assertEquals(bytesOf(files), s.getBytesDone());
      assertEquals(0, s.getFilesFailed());
      assertEquals(blocks.size(), s.getBlocksLoaded());
      assertEquals(bytesOf(files), s.getBytesLoaded());
      assertEquals(0, s.getBlocksCached());

      // Each block was sent once, to its home worker, with the right range of the right file.
      Map<Long, Integer> requests = sum(a, b);
      assertEquals(blocks.keySet(), requests.keySet());
      requests.forEach((id, n) -> assertEquals(1, n, "requests of block " + id));
      Map<Long, FileInfo> byId = new HashMap<>();
      files.forEach(f -> byId.put(f.getFileId(), f));
      for (ScriptedWorker w : List.of(a, b)) {
        long workerId = w == a ? idA : idB;
        for (LoadBlockTask t : w.received()) {
          WorkerInfo home = WorkerHashing.pick(t.getBlockId(), live, WorkerInfo::getWorkerId);
          assertEquals(home.getWorkerId(), workerId, "worker of block " + t.getBlockId());
          FileInfo f = byId.get(BlockIds.fileId(t.getBlockId()));
          assertEquals(f.getUfsPath(), t.getUfsPath());
          assertEquals(f.getMountId(), t.getMountId());
          assertEquals(BlockIds.index(t.getBlockId()) * MB, t.getBlockStart());
          assertEquals(blocks.get(t.getBlockId()), t.getBlockLength());
        }
      }
      assertTrue(a.receivedCount() > 0 && b.receivedCount() > 0, "both workers got blocks");

      // The master now knows each block at its home worker.
      for (FileInfo f : files) {
        for (BlockInfo block : fileBlocks(m, f.getPath())) {
          WorkerInfo home = WorkerHashing.pick(block.getBlockId(), live, WorkerInfo::getWorkerId);
          assertEquals(Set.of(home.getWorkerId()), holders(block), f.getPath());
          assertEquals("MEM", block.getLocations(0).getTier());
        }
        assertEquals(f.getLength(), m.stat(f.getPath()).getCachedBytes(), f.getPath());
      }

      // A second job finds everything cached and sends nothing.
      SubmitLoadResponse again = submit(m, "/data");
      assertFalse(again.getAlreadyRunning());
      assertNotEquals(submitted.getJob().getJobId(), again.getJob().getJobId());
      s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(50, s.getFilesDone());
      assertEquals(blocks.size(), s.getBlocksCached());
      assertEquals(0, s.getBlocksLoaded());
      assertEquals(blocks.size(), a.receivedCount() + b.receivedCount());
    }
  }

  @Test
  void secondSubmitReportsTheRunningJobAndStopEndsIt() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker w = new ScriptedWorker()) {
      flatFiles(m, "/data", 10, 20, 30, 40, 50, 60);
      w.register(m);
      w.holdAfter(0);
      long jobId = submit(m, "/data").getJob().getJobId();
      await("the first block to reach the worker")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> w.receivedCount() > 0);

      SubmitLoadResponse second = submit(m, "/data/");
      assertTrue(second.getAlreadyRunning());
      assertEquals(jobId, second.getJob().getJobId());
      assertEquals(LoadJobState.LOAD_RUNNING, second.getJob().getState());

      load(m).stopLoad(StopLoadRequest.newBuilder().setPath("/data").build());
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_STOPPED, s.getState());
      assertEquals(jobId, s.getJobId());
      assertTrue(s.getEndTimeMs() > 0);
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "already ended",
          () -> load(m).stopLoad(StopLoadRequest.newBuilder().setPath("/data").build()));
      assertFails(
          Status.Code.NOT_FOUND, "No load job of /elsewhere", () -> status(m, "/elsewhere", 0));

      // The path is free again: a new job replaces the stopped one and finishes.
      w.release();
      SubmitLoadResponse third = submit(m, "/data");
      assertFalse(third.getAlreadyRunning());
      assertNotEquals(jobId, third.getJob().getJobId());
      s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(third.getJob().getJobId(), s.getJobId());
      assertEquals(6, s.getFilesDone());
    }
  }

  @Test
  void unloadableFilesAreReportedWithReasonsAndTheRestLoad() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings("strata.master.load.retries", "2"))) {
      List<FileInfo> files =
          flatFiles(
              m, "/data", 2 * MB, 100, 2 * MB, 100, 100, 100, 100, 100, MB + 1, 100, 100, 100);
      String vanished = files.get(0).getUfsPath();
      String broken = files.get(1).getUfsPath();
      String flaky = files.get(2).getUfsPath();
      String busy = files.get(3).getUfsPath();
      ScriptedWorker.Script script =
          (task, attempt) -> {
            if (task.getUfsPath().equals(vanished)) {
              return LoadBlockOutcome.LOAD_BLOCK_NOT_FOUND;
            } else if (task.getUfsPath().equals(broken)) {
              return LoadBlockOutcome.LOAD_BLOCK_FAILED;
            } else if (task.getUfsPath().equals(flaky) && attempt == 1) {
              return LoadBlockOutcome.LOAD_BLOCK_FAILED;
            } else if (task.getUfsPath().equals(busy) && attempt == 1) {
              return LoadBlockOutcome.LOAD_BLOCK_BUSY;
            }
            return LoadBlockOutcome.LOAD_BLOCK_LOADED;
          };
      try (ScriptedWorker w = new ScriptedWorker(script)) {
        w.register(m);
        submit(m, "/data");
        LoadJobStatus s = awaitEnd(m, "/data");
        assertEquals(LoadJobState.LOAD_FAILED, s.getState(), s.toString());
        assertEquals(12, s.getFilesTotal());
        assertEquals(2, s.getFilesFailed());
        assertEquals(10, s.getFilesDone());
        assertEquals(bytesOf(files) - 2 * MB - 100, s.getBytesDone());

        Map<String, String> reasons = new HashMap<>();
        for (LoadFailure f : status(m, "/data", 10).getFailuresList()) {
          reasons.put(f.getPath(), f.getReason());
        }
        assertEquals(Set.of(files.get(0).getPath(), files.get(1).getPath()), reasons.keySet());
        assertTrue(
            reasons.get(files.get(0).getPath()).contains("does not exist"), reasons.toString());
        assertTrue(
            reasons.get(files.get(1).getPath()).contains("failed 3 times"), reasons.toString());
        assertEquals(1, status(m, "/data", 1).getFailuresCount());

        Map<Long, Integer> requests = w.requestsByBlock();
        long brokenBlock = BlockIds.blockId(files.get(1).getFileId(), 0);
        assertEquals(3, requests.get(brokenBlock), "tried once and retried twice");
        for (int i = 0; i < 2; i++) {
          assertEquals(
              1,
              requests.get(BlockIds.blockId(files.get(0).getFileId(), i)),
              "a missing file is not retried");
          assertEquals(
              2,
              requests.get(BlockIds.blockId(files.get(2).getFileId(), i)),
              "failed once, then loaded");
        }
        assertEquals(
            2,
            requests.get(BlockIds.blockId(files.get(3).getFileId(), 0)),
            "sent again after the busy answer");
        for (FileInfo f : files.subList(2, files.size())) {
          assertEquals(f.getLength(), m.stat(f.getPath()).getCachedBytes(), f.getPath());
        }

        // The ended job and its failures are journaled: a restarted master still reports them.
        try (TestMaster restarted = m.restartAfterClose()) {
          LoadJobStatus after = status(restarted, "/data", 10);
          assertEquals(LoadJobState.LOAD_FAILED, after.getState());
          assertEquals(s.getJobId(), after.getJobId());
          assertEquals(10, after.getFilesDone());
          assertEquals(2, after.getFilesFailed());
          assertEquals(
              reasons.keySet(),
              after.getFailuresList().stream()
                  .map(LoadFailure::getPath)
                  .collect(Collectors.toSet()));
        }
      }
    }
  }

  @Test
  void jobWithoutWorkersWaitsAndSaysSo() throws Exception {
    try (TestMaster m =
            TestMaster.start(home, settings("strata.master.load.journal.interval", "50ms"));
        ScriptedWorker w = new ScriptedWorker()) {
      flatFiles(m, "/data", 100, 200, 300);
      submit(m, "/data");
      await("the job to say it waits for a worker")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> status(m, "/data", 0).getWaitingFor().equals("a live worker"));
      assertEquals(LoadJobState.LOAD_RUNNING, status(m, "/data", 0).getState());
      w.register(m);
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(3, s.getFilesDone());
      assertEquals("", s.getWaitingFor());
    }
  }

  @Test
  void partialListingLoadsBeforeTheTreeIsListed() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings("strata.master.load.window.files", "4"));
        ScriptedWorker w = new ScriptedWorker()) {
      long[] lengths = new long[20];
      Arrays.fill(lengths, 500);
      List<FileInfo> files = flatFiles(m, "/data", lengths);
      w.register(m);
      w.holdAfter(0);
      submit(m, "/data", LoadJobOptions.newBuilder().setPartialListing(true).build());
      await("the first block to reach the worker")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> w.receivedCount() > 0);
      LoadJobStatus held = status(m, "/data", 0);
      assertEquals(LoadJobState.LOAD_RUNNING, held.getState());
      assertFalse(held.getListingDone());
      assertTrue(
          held.getFilesTotal() >= 1 && held.getFilesTotal() <= 4,
          "the walk waits for the window: " + held);

      // Stopped half-way, the job does not claim to have listed the whole tree.
      load(m).stopLoad(StopLoadRequest.newBuilder().setPath("/data").build());
      LoadJobStatus stopped = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_STOPPED, stopped.getState());
      assertFalse(stopped.getListingDone(), stopped.toString());
      assertTrue(stopped.getFilesTotal() <= 4, stopped.toString());

      w.release();
      submit(m, "/data", LoadJobOptions.newBuilder().setPartialListing(true).build());
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertTrue(s.getListingDone());
      assertEquals(files.size(), s.getFilesTotal());
      assertEquals(bytesOf(files), s.getBytesTotal());
      assertEquals(files.size(), s.getFilesDone());
    }
  }

  @Test
  void countingFirstKnowsTheTotalsBeforeTheFirstBlockLoads() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings("strata.master.load.window.files", "4"));
        ScriptedWorker w = new ScriptedWorker()) {
      long[] lengths = new long[20];
      Arrays.fill(lengths, 500);
      lengths[7] = 3 * MB;
      List<FileInfo> files = flatFiles(m, "/data", lengths);
      w.register(m);
      w.holdAfter(0);
      submit(m, "/data");
      await("the first block to reach the worker")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> w.receivedCount() > 0);
      LoadJobStatus held = status(m, "/data", 0);
      assertEquals(LoadJobState.LOAD_RUNNING, held.getState());
      assertTrue(held.getListingDone());
      assertEquals(files.size(), held.getFilesTotal());
      assertEquals(bytesOf(files), held.getBytesTotal());
      assertEquals(0, held.getFilesDone());
      w.release();

      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(files.size(), s.getFilesTotal());
      assertEquals(files.size(), s.getFilesDone());
    }
  }

  @Test
  void blocksOfAKilledWorkerAreLoadedOnTheSurvivor() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker a = new ScriptedWorker();
        ScriptedWorker b = new ScriptedWorker()) {
      List<FileInfo> files = mixedTree(m);
      Map<Long, Long> blocks = blocksOf(files);
      a.register(m);
      long idB = b.register(m);
      a.holdAfter(0);
      submit(m, "/data");
      await("a block to reach worker A")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> a.receivedCount() > 0);
      a.kill();

      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(files.size(), s.getFilesDone());
      assertEquals(blocks.size(), s.getBlocksLoaded());
      assertTrue(
          b.requestsByBlock().keySet().containsAll(blocks.keySet()), "B was sent every block");
      for (FileInfo f : files) {
        for (BlockInfo block : fileBlocks(m, f.getPath())) {
          assertEquals(Set.of(idB), holders(block), f.getPath());
        }
      }
    }
  }

  @Test
  void jobResumesWhereItStoodAfterAMasterRestart() throws Exception {
    Map<String, String> settings =
        settings(
            "strata.master.load.window.files",
            "5",
            "strata.master.load.journal.interval",
            "50ms",
            "strata.master.load.worker.inflight.blocks",
            "4",
            "strata.master.load.batch.size",
            "2");
    TestMaster m = TestMaster.start(home, settings);
    try (ScriptedWorker w = new ScriptedWorker()) {
      long[] lengths = new long[30];
      for (int i = 0; i < lengths.length; i++) {
        lengths[i] = i % 6 == 3 ? 2 * MB : 300 + i;
      }
      List<FileInfo> files = flatFiles(m, "/data", lengths);
      Map<Long, Long> blocks = blocksOf(files);
      w.register(m);
      w.holdAfter(12);
      long jobId = submit(m, "/data").getJob().getJobId();
      TestMaster first = m;
      await("the worker to hold answers")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> w.receivedCount() > 12);
      await("eight files to finish")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> status(first, "/data", 0).getFilesDone() >= 8);

      m.crash();
      m = m.restart();
      LoadJobStatus resumed = status(m, "/data", 0);
      assertEquals(jobId, resumed.getJobId());
      assertTrue(resumed.getFilesDone() >= 3, "durable progress survives: " + resumed);
      w.register(m);
      w.release();

      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(jobId, s.getJobId());
      assertEquals(files.size(), s.getFilesTotal());
      assertEquals(files.size(), s.getFilesDone(), "every file counted once");
      assertEquals(bytesOf(files), s.getBytesDone());
      assertEquals(0, s.getFilesFailed());
      Map<Long, Integer> requests = w.requestsByBlock();
      assertEquals(blocks.keySet(), requests.keySet(), "every block was loaded");
      assertEquals(
          1,
          requests.get(BlockIds.blockId(files.get(0).getFileId(), 0)),
          "the first file, behind the resume point, was not sent again");
      for (FileInfo f : files) {
        assertEquals(f.getLength(), m.stat(f.getPath()).getCachedBytes(), f.getPath());
      }
    } finally {
      m.close();
    }
  }

  @Test
  void verifyReloadsExactlyWhatIsMissing() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker a = new ScriptedWorker();
        ScriptedWorker b = new ScriptedWorker()) {
      long[] lengths = {3 * MB, 100, 2 * MB, 0, 200, MB, 300, 400, 500, 600, 700, 2 * MB};
      List<FileInfo> files = flatFiles(m, "/data", lengths);
      Map<Long, Long> blocks = blocksOf(files);
      a.register(m);
      b.register(m);
      submit(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, awaitEnd(m, "/data").getState());

      // One file freed: a verifying job sends its blocks and nothing else.
      FileInfo freed = files.get(2);
      Set<Long> freedBlocks = blocksOf(List.of(freed)).keySet();
      m.fs.free(FreeRequest.newBuilder().setPath(freed.getPath()).build());
      assertEquals(0, m.stat(freed.getPath()).getCachedBytes());
      Map<Long, Integer> before = sum(a, b);
      submit(m, "/data", LoadJobOptions.newBuilder().setVerify(true).build());
      LoadJobStatus s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(Set.copyOf(freedBlocks), sentSince(before, sum(a, b)));
      assertEquals(freedBlocks.size(), s.getBlocksLoaded());
      assertEquals(blocks.size() - freedBlocks.size(), s.getBlocksCached());
      assertEquals(0, s.getVerifyMissingBlocks(), "the load pass already loaded them");
      assertEquals(files.size(), s.getFilesDone());
      assertEquals(freed.getLength(), m.stat(freed.getPath()).getCachedBytes());

      // Blocks lost after the load pass checked them are found by the verify pass.
      FileInfo last = files.get(files.size() - 1);
      FileInfo first = files.get(0);
      m.fs.free(FreeRequest.newBuilder().setPath(last.getPath()).build());
      before = sum(a, b);
      int sentBefore = a.receivedCount() + b.receivedCount();
      a.holdAfter(a.receivedCount());
      b.holdAfter(b.receivedCount());
      submit(m, "/data", LoadJobOptions.newBuilder().setVerify(true).build());
      await("the last file's blocks to be sent")
          .atMost(WAIT)
          .pollInterval(POLL)
          .until(() -> a.receivedCount() + b.receivedCount() > sentBefore);
      m.fs.free(FreeRequest.newBuilder().setPath(first.getPath()).build());
      a.release();
      b.release();
      s = awaitEnd(m, "/data");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      Set<Long> firstBlocks = blocksOf(List.of(first)).keySet();
      Set<Long> lastBlocks = blocksOf(List.of(last)).keySet();
      assertEquals(firstBlocks.size(), s.getVerifyMissingBlocks());
      Set<Long> expected = new HashSet<>(firstBlocks);
      expected.addAll(lastBlocks);
      assertEquals(expected, sentSince(before, sum(a, b)));
      assertEquals(firstBlocks.size() + lastBlocks.size(), s.getBlocksLoaded());
      assertEquals(files.size(), s.getFilesDone());
      assertEquals(first.getLength(), m.stat(first.getPath()).getCachedBytes());
      assertEquals(last.getLength(), m.stat(last.getPath()).getCachedBytes());
    }
  }

  /** Blocks sent between two snapshots of request counts; each at most once. */
  private static Set<Long> sentSince(Map<Long, Integer> before, Map<Long, Integer> after) {
    Set<Long> sent = new HashSet<>();
    after.forEach(
        (id, n) -> {
          int delta = n - before.getOrDefault(id, 0);
          assertTrue(delta <= 1, "block " + id + " sent " + delta + " times");
          if (delta == 1) {
            sent.add(id);
          }
        });
    return sent;
  }

  @Test
  void submitRejectsBadArgumentsAndLoadsASingleFile() throws Exception {
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker w = new ScriptedWorker()) {
      FileInfo f = m.file("/data/one", 2 * MB + 5);
      m.file("/data/other", 10);
      w.register(m);
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "must not be negative",
          () ->
              submit(m, "/data", LoadJobOptions.newBuilder().setBandwidthBytesPerSec(-1).build()));
      assertFails(Status.Code.NOT_FOUND, "/nowhere", () -> submit(m, "/nowhere"));
      assertFails(Status.Code.NOT_FOUND, "No load job of /data", () -> status(m, "/data", 0));

      submit(m, "/data/one", LoadJobOptions.newBuilder().setBandwidthBytesPerSec(1L << 30).build());
      LoadJobStatus s = awaitEnd(m, "/data/one");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(1, s.getFilesTotal());
      assertEquals(1, s.getFilesDone());
      assertEquals(3, s.getBlocksLoaded());
      assertEquals(blocksOf(List.of(f)).keySet(), w.requestsByBlock().keySet());
    }
  }

  @Test
  void unlistableDirectoryIsOneFailureAndTheRestLoad() throws Exception {
    Files.createDirectories(store.resolve("a"));
    Files.createDirectories(store.resolve(CountingUnderFileSystem.UNLISTABLE));
    Files.createDirectories(store.resolve("z"));
    Files.write(store.resolve("a/one"), new byte[100]);
    Files.write(store.resolve(CountingUnderFileSystem.UNLISTABLE + "/hidden"), new byte[100]);
    Files.write(store.resolve("z/two"), new byte[(int) (2 * MB)]);
    try (TestMaster m = TestMaster.start(home, settings());
        ScriptedWorker w = new ScriptedWorker()) {
      m.fs.mount(
          MountRequest.newBuilder().setPath("/mnt").setUfsUri("counting://" + store).build());
      w.register(m);
      submit(m, "/mnt", LoadJobOptions.newBuilder().setVerify(true).build());
      LoadJobStatus s = awaitEnd(m, "/mnt");
      assertEquals(LoadJobState.LOAD_FAILED, s.getState(), s.toString());
      assertEquals(2, s.getFilesTotal());
      assertEquals(2, s.getFilesDone());
      assertEquals(1, s.getFilesFailed(), "the directory fails once, not once per pass: " + s);
      assertEquals(3, s.getBlocksLoaded());
      List<LoadFailure> failures = status(m, "/mnt", 10).getFailuresList();
      assertEquals(1, failures.size(), failures.toString());
      assertEquals("/mnt/" + CountingUnderFileSystem.UNLISTABLE, failures.get(0).getPath());
      assertTrue(failures.get(0).getReason().contains("refuses to list"), failures.toString());
    } finally {
      CountingUnderFileSystem.reset();
    }
  }

  @Test
  void jobStoppedMidListingByAMasterRestartResumes() throws Exception {
    for (int i = 0; i < 6; i++) {
      Files.write(store.resolve("f" + i), new byte[10 + i]);
    }
    CountDownLatch listing = new CountDownLatch(1);
    TestMaster m = TestMaster.start(home, settings());
    try (ScriptedWorker w = new ScriptedWorker()) {
      m.fs.mount(
          MountRequest.newBuilder().setPath("/mnt").setUfsUri("counting://" + store).build());
      w.register(m);
      // The store's listing hangs until the master stops the job's thread; like many store
      // clients it then fails with an I/O error rather than keeping the interrupt.
      CountingUnderFileSystem.afterListing =
          () -> {
            listing.countDown();
            try {
              // The hang itself, as a store would hang, not a wait: the interrupt ends it.
              Thread.sleep(TimeUnit.SECONDS.toMillis(LoadMasterCalls.WAIT_SECONDS));
            } catch (InterruptedException e) {
              throw new UncheckedIOException(new InterruptedIOException("listing interrupted"));
            }
          };
      long jobId = submit(m, "/mnt").getJob().getJobId();
      assertTrue(
          listing.await(LoadMasterCalls.WAIT_SECONDS, TimeUnit.SECONDS), "the job lists the store");
      m.crash();
      m = m.restart();
      w.register(m);

      LoadJobStatus s = awaitEnd(m, "/mnt");
      assertEquals(LoadJobState.LOAD_SUCCEEDED, s.getState(), s.toString());
      assertEquals(jobId, s.getJobId());
      assertEquals(6, s.getFilesDone());
    } finally {
      CountingUnderFileSystem.reset();
      m.close();
    }
  }
}
