package io.strata.shell.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import org.junit.jupiter.api.Test;

class LoadProgressLineTest {
  private static final long MIB = 1 << 20;

  private static LoadJobStatus running(long bytesDone, long elapsedMs) {
    return LoadJobStatus.newBuilder()
        .setJobId(3)
        .setPath("/d")
        .setState(LoadJobState.LOAD_RUNNING)
        .setListingDone(true)
        .setFilesTotal(100)
        .setFilesDone(bytesDone / MIB / 10)
        .setBytesTotal(1000 * MIB)
        .setBytesDone(bytesDone)
        .setElapsedMs(elapsedMs)
        .build();
  }

  @Test
  void lineShowsCountsRatesEtaAndFailures() {
    LoadProgressLine line = new LoadProgressLine();
    LoadJobStatus s = running(250 * MIB, 10_000).toBuilder().setFilesFailed(2).build();
    // One status: no recent rate yet, so the ETA comes from the average (25 MiB/s).
    assertEquals(
        "Loading /d: running, 25/100 files, 250.0MiB/1000.0MiB (25%), 25.0MiB/s,"
            + " ETA 30s, 2 failed",
        line.render(s));
  }

  @Test
  void recentRateCoversTheLastTenSecondsOfTheJobsClock() {
    LoadProgressLine line = new LoadProgressLine();
    // 10 MiB/s for 20 s, then 50 MiB/s.
    line.render(running(0, 0));
    line.render(running(100 * MIB, 10_000));
    line.render(running(200 * MIB, 20_000));
    line.render(running(450 * MIB, 25_000));
    String last = line.render(running(700 * MIB, 30_000));
    assertEquals(50.0 * MIB, line.recentRate().getAsDouble(), 1.0);
    assertEquals(700.0 * MIB / 30, LoadProgressLine.averageRate(running(700 * MIB, 30_000)), 1.0);
    // 300 MiB left at the recent 50 MiB/s.
    assertTrue(last.endsWith("23.3MiB/s (now 50.0MiB/s), ETA 6.0s, 0 failed"), last);
  }

  @Test
  void aStatusOfAnotherJobOrAnEarlierClockStartsTheRatesAfresh() {
    LoadProgressLine line = new LoadProgressLine();
    line.render(running(0, 0));
    line.render(running(100 * MIB, 10_000));
    assertTrue(line.recentRate().isPresent());
    line.render(running(100 * MIB, 10_000).toBuilder().setJobId(4).build());
    assertFalse(line.recentRate().isPresent());
    line.render(running(200 * MIB, 20_000).toBuilder().setJobId(4).build());
    line.render(running(200 * MIB, 5_000).toBuilder().setJobId(4).build());
    assertFalse(line.recentRate().isPresent());
  }

  @Test
  void unknownTotalsAndTimeShowAsSuchAndTheEtaIsUnknown() {
    LoadProgressLine line = new LoadProgressLine();
    LoadJobStatus listing =
        LoadJobStatus.newBuilder()
            .setJobId(1)
            .setPath("/d")
            .setState(LoadJobState.LOAD_RUNNING)
            .setListingDone(false)
            .setFilesTotal(500)
            .setFilesDone(20)
            .setBytesTotal(5 * MIB)
            .setBytesDone(MIB)
            .setElapsedMs(0)
            .setWaitingFor("a live worker")
            .build();
    assertEquals(
        "Loading /d: running, 20/500+ files, 1.0MiB/5.0MiB+, -, ETA ?, 0 failed,"
            + " waiting for a live worker",
        line.render(listing));
    LoadJobStatus stalled = running(0, 5000);
    assertEquals("?", new LoadProgressLine().eta(stalled));
    LoadJobStatus verifying =
        running(1000 * MIB, 5000).toBuilder().setState(LoadJobState.LOAD_VERIFYING).build();
    assertEquals("?", new LoadProgressLine().eta(verifying));
    assertEquals("0.0s", new LoadProgressLine().eta(running(1000 * MIB, 5000)));
  }

  @Test
  void aTreeOfEmptyFilesMeasuresItsEtaInFiles() {
    LoadJobStatus s =
        LoadJobStatus.newBuilder()
            .setJobId(1)
            .setPath("/e")
            .setState(LoadJobState.LOAD_RUNNING)
            .setListingDone(true)
            .setFilesTotal(300)
            .setFilesDone(100)
            .setElapsedMs(20_000)
            .build();
    LoadProgressLine line = new LoadProgressLine();
    assertTrue(
        line.render(s)
            .startsWith("Loading /e: running, 100/300 files, 0B/0B (33%), 0B/s," + " ETA 40s"),
        line.render(s));
  }

  @Test
  void durationsReadAsAPersonWouldSayThem() {
    assertEquals("0.0s", LoadProgressLine.duration(0));
    assertEquals("4.2s", LoadProgressLine.duration(4_240));
    assertEquals("42s", LoadProgressLine.duration(42_900));
    assertEquals("3m07s", LoadProgressLine.duration(187_000));
    assertEquals("2h05m", LoadProgressLine.duration((2 * 3600 + 5 * 60 + 30) * 1000L));
    assertEquals("-", LoadProgressLine.rate(-1));
    assertEquals("1.5KiB/s", LoadProgressLine.rate(1536));
  }
}
