package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.StatusRuntimeException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.RenewLeasesRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writers' leases on the incomplete files they create: a file whose lease lapses is removed, one
 * whose writer renews is kept and completes, one created without a lease (clients of earlier
 * releases) is never removed, and a restarted leader finds the leased files in its journal.
 */
class WriterLeasesTest {
  private static final Map<String, String> LEASE_2S = Map.of("strata.master.lease.timeout", "2s");

  @TempDir Path home;

  private static FileInfo create(TestMaster m, String path, boolean lease) {
    return m.fs
        .createFile(CreateFileRequest.newBuilder().setPath(path).setLease(lease).build())
        .getFile();
  }

  private static boolean exists(TestMaster m, String path) {
    try {
      m.stat(path);
      return true;
    } catch (StatusRuntimeException e) {
      return false;
    }
  }

  private static double recovered(TestMaster m) {
    return m.server.meterRegistry().get(MetricNames.MASTER_LEASES_RECOVERED).counter().count();
  }

  @Test
  void aLapsedLeaseRemovesTheFileAndARenewedOneKeepsItUntilItCompletes() throws Exception {
    Files.createDirectories(home.resolve("ufs"));
    try (TestMaster m = TestMaster.start(home, LEASE_2S)) {
      FileInfo abandoned = create(m, "/abandoned", true);
      FileInfo written = create(m, "/written", true);
      create(m, "/old-client", false);
      assertTrue(m.stat("/abandoned").getPath().equals("/abandoned"));

      long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (System.nanoTime() < until) {
        List<Long> lapsed =
            m.fs
                .renewLeases(
                    RenewLeasesRequest.newBuilder().addFileIds(written.getFileId()).build())
                .getLapsedFileIdsList();
        assertEquals(List.of(), lapsed, "a renewed lease holds");
        Thread.sleep(300);
      }
      assertFalse(exists(m, "/abandoned"), "no renewal for longer than the timeout: removed");
      assertEquals(1.0, recovered(m));
      assertTrue(exists(m, "/written"));
      assertTrue(exists(m, "/old-client"), "a file created without a lease is never removed");
      assertEquals(
          List.of(abandoned.getFileId()),
          m.fs
              .renewLeases(
                  RenewLeasesRequest.newBuilder().addFileIds(abandoned.getFileId()).build())
              .getLapsedFileIdsList(),
          "the writer of a removed file learns its lease lapsed");

      FileInfo done =
          m.fs
              .completeFile(
                  CompleteFileRequest.newBuilder()
                      .setPath("/written")
                      .setFileId(written.getFileId())
                      .setLength(0)
                      .build())
              .getFile();
      assertTrue(done.getComplete());
      Thread.sleep(3_000);
      assertTrue(exists(m, "/written"), "a complete file holds no lease and stays");
    }
  }

  @Test
  void aRestartedLeaderFindsLeasedFilesInItsJournalAndGivesThemTheWholeTimeout() throws Exception {
    Files.createDirectories(home.resolve("ufs"));
    TestMaster m = TestMaster.start(home, LEASE_2S);
    create(m, "/left", true);
    m.crash();
    try (TestMaster again = m.restart()) {
      await("the restarted leader to remove the file whose lease lapsed")
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> !exists(again, "/left"));
      assertEquals(1.0, recovered(again));
    }
  }
}
