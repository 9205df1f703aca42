package io.strata.master.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.journal.LoadJobEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadJobTest {
  private static final long NOW = 1_000_000;

  private static LoadJob counted(LoadJobOptions options, long files, long bytes) {
    LoadJob job = new LoadJob(7, "/d", options, NOW);
    job.counted(files, bytes);
    job.listingFinished();
    return job;
  }

  private static LoadJob.FileTask file(String path, long length, int blocks) {
    return new LoadJob.FileTask(path, length, blocks, false);
  }

  private static LoadJob.FileTask verifyFile(String path, long length, int blocks) {
    return new LoadJob.FileTask(path, length, blocks, true);
  }

  private static List<String> paths(List<LoadFailure> failures) {
    return failures.stream().map(LoadFailure::getPath).toList();
  }

  @Test
  void resumePointPassesOnlyFilesWhosePredecessorsAllFinished() {
    LoadJob job = counted(LoadJobOptions.getDefaultInstance(), 3, 300);
    assertEquals(LoadJobState.LOAD_RUNNING, job.state());
    LoadJob.FileTask a = file("/d/a", 100, 1);
    LoadJob.FileTask b = file("/d/b", 100, 2);
    LoadJob.FileTask c = file("/d/c", 100, 1);
    job.listed(a);
    job.listed(b);
    job.listed(c);

    // The last file finishes first: users see it, the journal does not.
    job.blockLoaded(c, 100);
    LoadJobStatus live = job.status(NOW).build();
    assertEquals(1, live.getFilesDone());
    assertEquals(100, live.getBytesDone());
    assertEquals(1, live.getBlocksLoaded());
    LoadJobEntry durable = job.journalRecord(NOW).build();
    assertEquals("", durable.getResumeAfter());
    assertEquals(0, durable.getFilesDone());
    assertEquals(0, durable.getBlocksLoaded());
    assertEquals(3, durable.getFilesTotal());
    assertEquals(300, durable.getBytesTotal());
    assertTrue(durable.getListingDone());

    job.blockLoaded(b, 50);
    job.blockLoaded(a, 100);
    durable = job.journalRecord(NOW).build();
    assertEquals("/d/a", durable.getResumeAfter(), "b still has a block out");
    assertEquals(1, durable.getFilesDone());
    assertEquals(100, durable.getBytesDone());
    assertEquals(1, durable.getBlocksLoaded());
    assertEquals(2, job.windowSize(), "b and c wait in the window");

    job.blockLoaded(b, 50);
    durable = job.journalRecord(NOW).build();
    assertEquals("/d/c", durable.getResumeAfter());
    assertEquals(3, durable.getFilesDone());
    assertEquals(300, durable.getBytesDone());
    assertEquals(4, durable.getBlocksLoaded());
    assertEquals(300, durable.getBytesLoaded());
    assertEquals(0, job.windowSize());
    assertEquals(3, job.status(NOW).build().getFilesDone());
  }

  @Test
  void restoredJobCountsTheFilesAfterItsResumePointOnce() {
    LoadJob job = counted(LoadJobOptions.getDefaultInstance(), 3, 30);
    LoadJob.FileTask a = file("/d/a", 10, 1);
    LoadJob.FileTask b = file("/d/b", 10, 1);
    LoadJob.FileTask c = file("/d/c", 10, 1);
    job.listed(a);
    job.listed(b);
    job.listed(c);
    job.blockLoaded(a, 10);
    job.blockPresent(c);
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertEquals(2, job.status(NOW).build().getFilesDone());

    // A new master restores the record and walks again after /d/a: b and c.
    LoadJob restored = new LoadJob(entry, NOW + 5_000);
    assertEquals(7, restored.id);
    assertEquals(LoadJobState.LOAD_RUNNING, restored.state());
    assertEquals("/d/a", restored.resumeAfter());
    LoadJobStatus s = restored.status(NOW + 5_000).build();
    assertEquals(1, s.getFilesDone());
    assertEquals(3, s.getFilesTotal());
    assertEquals(0, s.getBlocksCached(), "c's skipped block was never journaled");
    LoadJob.FileTask b2 = file("/d/b", 10, 1);
    LoadJob.FileTask c2 = file("/d/c", 10, 1);
    restored.listed(b2);
    restored.listed(c2);
    restored.blockLoaded(b2, 10);
    restored.blockPresent(c2);
    s = restored.status(NOW + 5_000).build();
    assertEquals(3, s.getFilesDone());
    assertEquals(30, s.getBytesDone());
    assertEquals(3, s.getFilesTotal(), "the total is not counted again");
    assertEquals(2, s.getBlocksLoaded());
    assertEquals(1, s.getBlocksCached());
    restored.end(NOW + 6_000);
    assertEquals(LoadJobState.LOAD_SUCCEEDED, restored.state());
  }

  @Test
  void restoredListingJobCountsItsTotalsAgain() {
    LoadJob job = new LoadJob(3, "/d", LoadJobOptions.getDefaultInstance(), NOW);
    job.counted(500, 5000);
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertEquals(LoadJobState.LOAD_LISTING, entry.getState());

    LoadJob restored = new LoadJob(entry, NOW);
    assertEquals(LoadJobState.LOAD_LISTING, restored.state());
    assertEquals(0, restored.status(NOW).build().getFilesTotal());
    restored.counted(800, 8000);
    restored.listingFinished();
    LoadJobStatus s = restored.status(NOW).build();
    assertEquals(800, s.getFilesTotal());
    assertEquals(8000, s.getBytesTotal());
    assertTrue(s.getListingDone());
    assertEquals(800, restored.journalRecord(NOW).build().getFilesTotal());
  }

  @Test
  void partialListingGrowsTheTotalsAsFilesAreListed() {
    LoadJob job =
        new LoadJob(1, "/d", LoadJobOptions.newBuilder().setPartialListing(true).build(), NOW);
    assertEquals(LoadJobState.LOAD_RUNNING, job.state(), "no counting pass");
    LoadJob.FileTask a = file("/d/a", 10, 1);
    LoadJob.FileTask b = file("/d/b", 20, 1);
    job.listed(a);
    job.listed(b);
    LoadJobStatus s = job.status(NOW).build();
    assertEquals(2, s.getFilesTotal());
    assertEquals(30, s.getBytesTotal());
    assertFalse(s.getListingDone());

    job.blockLoaded(a, 10);
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertEquals(1, entry.getFilesTotal(), "the journal counts the files it has passed");
    assertFalse(entry.getListingDone());

    // Restored there, the walk lists b again: counted once.
    LoadJob restored = new LoadJob(entry, NOW);
    LoadJob.FileTask b2 = file("/d/b", 20, 1);
    restored.listed(b2);
    restored.blockLoaded(b2, 20);
    restored.walkFinished();
    s = restored.status(NOW).build();
    assertEquals(2, s.getFilesTotal());
    assertEquals(30, s.getBytesTotal());
    assertTrue(s.getListingDone());
    assertEquals(2, s.getFilesDone());
    entry = restored.journalRecord(NOW).build();
    assertEquals(2, entry.getFilesTotal());
    assertTrue(entry.getListingDone());
  }

  @Test
  void verifyPassCountsMissingBlocksAndTakesBackFilesThatFail() {
    LoadJob job = counted(LoadJobOptions.newBuilder().setVerify(true).build(), 3, 300);
    for (String p : List.of("/d/a", "/d/b", "/d/c")) {
      LoadJob.FileTask t = file(p, 100, 2);
      job.listed(t);
      job.blockLoaded(t, 50);
      job.blockPresent(t);
    }
    LoadJobStatus s = job.status(NOW).build();
    assertEquals(3, s.getFilesDone());
    assertEquals(3, s.getBlocksLoaded());
    assertEquals(3, s.getBlocksCached());

    job.startVerify();
    assertEquals(LoadJobState.LOAD_VERIFYING, job.state());
    assertTrue(job.inVerifyPass());
    assertEquals("", job.resumeAfter(), "the verify pass walks from the start");
    // a: every block still cached. b: one block gone, loaded again. c: one gone, fails.
    LoadJob.FileTask a = verifyFile("/d/a", 100, 2);
    LoadJob.FileTask b = verifyFile("/d/b", 100, 2);
    LoadJob.FileTask c = verifyFile("/d/c", 100, 2);
    job.listed(a);
    job.listed(b);
    job.listed(c);
    job.blockPresent(a);
    job.blockPresent(a);
    job.blockPresent(b);
    job.blockMissing(b);
    job.blockLoaded(b, 50);
    job.blockPresent(c);
    job.blockMissing(c);
    job.blockFailed(c, "worker said no");

    s = job.status(NOW).build();
    assertEquals(3, s.getFilesTotal(), "verify tasks do not add to the totals");
    assertEquals(2, s.getVerifyMissingBlocks());
    assertEquals(3, s.getBlocksCached(), "blocks checked by the verify pass are not skips");
    assertEquals(4, s.getBlocksLoaded());
    assertEquals(2, s.getFilesDone(), "c counted as done by the load pass is taken back");
    assertEquals(200, s.getBytesDone());
    assertEquals(1, s.getFilesFailed());
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertTrue(entry.getVerifyPass());
    assertEquals(LoadJobState.LOAD_VERIFYING, entry.getState());
    assertEquals(2, entry.getFilesDone());
    assertEquals(2, entry.getVerifyMissingBlocks());
    assertEquals(List.of("/d/c"), paths(entry.getNewFailuresList()));

    job.end(NOW + 1);
    assertEquals(LoadJobState.LOAD_FAILED, job.state());
  }

  @Test
  void failuresReachTheJournalOnceTheResumePointPassesThem() {
    LoadJob job = counted(LoadJobOptions.getDefaultInstance(), 3, 30);
    LoadJob.FileTask a = file("/d/a", 10, 1);
    LoadJob.FileTask b = file("/d/b", 10, 2);
    LoadJob.FileTask c = file("/d/c", 10, 1);
    job.listed(a);
    job.listed(b);
    job.listed(c);
    job.blockFailed(b, "first reason");
    assertEquals(List.of(), job.recentFailures(10), "b has a block out");
    job.blockFailed(b, "second reason");
    List<LoadFailure> seen = job.recentFailures(10);
    assertEquals(List.of("/d/b"), paths(seen), "shown while still in the window");
    assertEquals("first reason", seen.get(0).getReason());
    assertEquals(0, job.journalRecord(NOW).getNewFailuresCount(), "a is not finished yet");
    assertEquals(1, job.status(NOW).build().getFilesFailed());

    job.blockLoaded(a, 10);
    job.blockFailed(c, "third reason");
    assertEquals(List.of("/d/b", "/d/c"), paths(job.recentFailures(10)));
    assertEquals(List.of("/d/b"), paths(job.recentFailures(1)));
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertEquals(List.of("/d/b", "/d/c"), paths(entry.getNewFailuresList()));
    assertEquals(2, entry.getFilesFailed());
    assertEquals(1, entry.getFilesDone());
    assertEquals(List.of(), job.recentFailures(10), "the metastore has them now");
    assertFalse(job.dirty());
    assertEquals(0, job.journalRecord(NOW).getNewFailuresCount(), "drained once");

    job.end(NOW);
    assertEquals(LoadJobState.LOAD_FAILED, job.state());
    entry = job.journalRecord(NOW).build();
    assertEquals(0, entry.getNewFailuresCount());
    assertEquals(2, entry.getFilesFailed());
  }

  @Test
  void unlistableDirectoryIsAFailureAtItsPlaceInTheWalk() {
    LoadJob job = counted(LoadJobOptions.getDefaultInstance(), 2, 20);
    LoadJob.FileTask a = file("/d/a", 10, 1);
    LoadJob.FileTask c = file("/d/c", 10, 1);
    job.listed(a);
    job.listFailed("/d/b", "cannot list the directory: permission denied");
    job.listed(c);
    assertEquals("", job.journalRecord(NOW).getResumeAfter(), "waits behind a");
    assertEquals(List.of("/d/b"), paths(job.recentFailures(5)));
    job.blockLoaded(c, 10);
    job.blockLoaded(a, 10);
    LoadJobEntry entry = job.journalRecord(NOW).build();
    assertEquals("/d/c", entry.getResumeAfter());
    assertEquals(List.of("/d/b"), paths(entry.getNewFailuresList()));
    assertEquals(1, entry.getFilesFailed());
    assertEquals(2, entry.getFilesDone());
    assertEquals(2, entry.getFilesTotal(), "a directory is not a file to load");
    job.end(NOW);
    assertEquals(LoadJobState.LOAD_FAILED, job.state());
  }

  @Test
  void jobEndsSucceededFailedOrStopped() {
    LoadJob ok = counted(LoadJobOptions.getDefaultInstance(), 1, 0);
    ok.listed(file("/d/empty", 0, 0));
    assertTrue(ok.active());
    ok.end(NOW + 2_000);
    assertFalse(ok.active());
    assertEquals(LoadJobState.LOAD_SUCCEEDED, ok.state());
    LoadJobStatus s = ok.status(NOW + 9_000).build();
    assertEquals(1, s.getFilesDone());
    assertEquals(NOW + 2_000, s.getEndTimeMs());
    assertEquals(2_000, s.getElapsedMs(), "the clock stops at the end");
    assertEquals(LoadJobState.LOAD_SUCCEEDED, ok.journalRecord(NOW).getState());

    // A stop wins over failures; the window it leaves is not counted.
    LoadJob stopped = counted(LoadJobOptions.getDefaultInstance(), 2, 20);
    LoadJob.FileTask bad = file("/d/a", 10, 1);
    stopped.listed(bad);
    stopped.listed(file("/d/b", 10, 1));
    stopped.blockFailed(bad, "no");
    stopped.requestStop();
    assertTrue(stopped.stopRequested());
    stopped.end(NOW);
    assertEquals(LoadJobState.LOAD_STOPPED, stopped.state());
    assertFalse(stopped.active());

    LoadJob broken = new LoadJob(9, "/gone", LoadJobOptions.getDefaultInstance(), NOW);
    broken.endWithError("cannot walk /gone: no such path", NOW);
    assertEquals(LoadJobState.LOAD_FAILED, broken.state());
    LoadJobEntry entry = broken.journalRecord(NOW).build();
    assertEquals(1, entry.getFilesFailed());
    assertEquals(List.of("/gone"), paths(entry.getNewFailuresList()));
    assertTrue(entry.getListingDone());
  }
}
