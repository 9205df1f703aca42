package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.strata.client.testing.Tmpfs;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.CreateDirectoryRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master whose journal sits on a small real file system (a tmpfs of 8 MiB) that fills: changes
 * are refused with RESOURCE_EXHAUSTED naming the folder and the key, reads go on, and once there is
 * room again changes are taken, with nothing acknowledged lost.
 */
class JournalSpaceTest {
  @TempDir Path home;

  private static void mkdir(TestMaster m, String path) {
    m.fs
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .createDirectory(CreateDirectoryRequest.newBuilder().setPath(path).build());
  }

  @Test
  void aFullJournalDiskRefusesChangesKeepsReadsAndTakesChangesOnceThereIsRoom() throws Exception {
    Files.createDirectories(home.resolve("ufs"));
    Path disk = Files.createDirectories(home.resolve("journal-disk"));
    Tmpfs.mount(disk, "8m");
    try {
      fillAndFree(disk);
    } finally {
      Tmpfs.unmount(disk);
    }
  }

  private void fillAndFree(Path disk) throws Exception {
    try (TestMaster m =
        TestMaster.start(
            home,
            Map.of(
                "strata.master.journal.dir", disk.resolve("journal").toString(),
                "strata.master.journal.segment.size", "512KB",
                "strata.master.journal.reserved.space", "2MB"))) {
      mkdir(m, "/before");
      // Something else takes the disk: less than the reserve is left.
      Path filler = disk.resolve("filler");
      long free = Files.getFileStore(disk).getUsableSpace();
      Files.write(filler, new byte[(int) (free - (1 << 20))]);
      Thread.sleep(1_100);

      StatusRuntimeException refused =
          assertThrows(StatusRuntimeException.class, () -> mkdir(m, "/while-full"));
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, refused.getStatus().getCode());
      String why = refused.getStatus().getDescription();
      assertTrue(why.contains(disk.resolve("journal").toString()), why);
      assertTrue(why.contains("strata.master.journal.reserved.space"), why);
      assertTrue(
          m.server.meterRegistry().get(MetricNames.MASTER_JOURNAL_FREE).gauge().value() < 2 << 20);
      // Reads go on.
      assertTrue(m.stat("/before").getDirectory());

      Files.delete(filler);
      Thread.sleep(1_100);
      mkdir(m, "/after");
      assertTrue(m.stat("/after").getDirectory());
    }
    try (TestMaster again =
        TestMaster.start(
            home,
            Map.of(
                "strata.master.journal.dir",
                disk.resolve("journal").toString(),
                "strata.master.journal.reserved.space",
                "2MB"))) {
      assertTrue(again.stat("/before").getDirectory(), "acknowledged before: kept");
      assertTrue(again.stat("/after").getDirectory(), "acknowledged after: kept");
    }
  }
}
