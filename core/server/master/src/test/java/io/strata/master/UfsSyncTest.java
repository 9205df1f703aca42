package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.common.BlockIds;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.BlockReport;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.WorkerAddress;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Metadata sync: changes made directly in under stores reach the namespace when due. */
class UfsSyncTest {
  private static final long NEVER = -1;
  private static final long ALWAYS = 0;

  @TempDir Path home;

  private Path ufs() {
    return home.resolve("ufs");
  }

  private static void write(Path file, int bytes) throws IOException {
    Files.createDirectories(file.getParent());
    Files.write(file, new byte[bytes]);
  }

  private static void deleteTree(Path p) throws IOException {
    try (Stream<Path> all = Files.walk(p)) {
      for (Path q : all.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    }
  }

  static FileInfo stat(TestMaster m, String path, long syncMs) {
    return m.fs
        .getStatus(GetStatusRequest.newBuilder().setPath(path).setSyncIntervalMs(syncMs).build())
        .getFile();
  }

  static List<FileInfo> list(TestMaster m, String path, long syncMs) {
    List<FileInfo> all = new ArrayList<>();
    m.fs
        .listStatus(ListStatusRequest.newBuilder().setPath(path).setSyncIntervalMs(syncMs).build())
        .forEachRemaining(r -> all.addAll(r.getFilesList()));
    return all;
  }

  static List<String> names(List<FileInfo> files) {
    return files.stream().map(FileInfo::getName).toList();
  }

  static long journalSequence(TestMaster m) {
    return m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getJournalSequence();
  }

  @Test
  void dueListingPicksUpFilesAddedDeletedAndChangedInTheStore() throws Exception {
    write(ufs().resolve("d/a.bin"), 10);
    write(ufs().resolve("d/b.bin"), 20);
    write(ufs().resolve("d/c.bin"), 30);
    try (TestMaster m = TestMaster.start(home)) {
      List<FileInfo> before = m.list("/d");
      assertEquals(List.of("a.bin", "b.bin", "c.bin"), names(before));
      m.fs.createFile(CreateFileRequest.newBuilder().setPath("/d/writing").build());

      write(ufs().resolve("d/new.bin"), 5);
      Files.delete(ufs().resolve("d/b.bin"));
      write(ufs().resolve("d/c.bin"), 31);

      assertEquals(
          List.of("a.bin", "b.bin", "c.bin", "writing"),
          names(list(m, "/d", NEVER)),
          "never: the namespace as loaded");
      List<FileInfo> after = list(m, "/d", ALWAYS);
      assertEquals(
          List.of("a.bin", "c.bin", "new.bin", "writing"),
          names(after),
          "a file being written through Strata is left alone");
      assertEquals(before.get(0).getFileId(), after.get(0).getFileId(), "unchanged keeps its id");
      assertEquals(31, after.get(1).getLength());
      assertNotEquals(
          before.get(2).getFileId(), after.get(1).getFileId(), "a changed file is a new inode");
      assertEquals(5, after.get(2).getLength());
      assertFalse(after.get(3).getComplete());
      assertFails(
          Status.Code.NOT_FOUND, "Path does not exist: /d/b.bin", () -> stat(m, "/d/b.bin", NEVER));
    }
  }

  @Test
  void dueStatusCheckSeesAFileChangedAddedOrDeletedInTheStore() throws Exception {
    write(ufs().resolve("d/f.bin"), 100);
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo first = m.stat("/d/f.bin");
      m.list("/d");
      write(ufs().resolve("d/f.bin"), 150);
      write(ufs().resolve("d/added.bin"), 7);

      assertEquals(100, stat(m, "/d/f.bin", NEVER).getLength());
      assertFails(Status.Code.NOT_FOUND, "/d/added.bin", () -> stat(m, "/d/added.bin", NEVER));
      FileInfo changed = stat(m, "/d/f.bin", ALWAYS);
      assertEquals(150, changed.getLength());
      assertNotEquals(first.getFileId(), changed.getFileId());
      assertEquals(changed, m.stat("/d/f.bin"), "the check is kept in the namespace");
      assertEquals(7, stat(m, "/d/added.bin", ALWAYS).getLength());

      Files.delete(ufs().resolve("d/f.bin"));
      assertEquals(changed.getFileId(), m.stat("/d/f.bin").getFileId(), "default is never");
      assertFails(
          Status.Code.NOT_FOUND,
          "Path does not exist: /d/f.bin",
          () -> stat(m, "/d/f.bin", ALWAYS));
      assertFails(
          Status.Code.NOT_FOUND, "Path does not exist: /d/f.bin", () -> stat(m, "/d/f.bin", NEVER));
      assertEquals(List.of("added.bin"), m.names("/d"));
    }
  }

  @Test
  void mountIntervalAppliesUnlessTheCallGivesItsOwn() throws Exception {
    Path always = home.resolve("always");
    Path hourly = home.resolve("hourly");
    Path quick = home.resolve("quick");
    for (Path p : List.of(always, hourly, quick)) {
      write(p.resolve("f"), 1);
    }
    try (TestMaster m = TestMaster.start(home)) {
      mount(m, "/always", always, "always");
      mount(m, "/hourly", hourly, "1h");
      mount(m, "/quick", quick, "100ms");
      for (String dir : List.of("/always", "/hourly", "/quick")) {
        assertEquals(List.of("f"), m.names(dir));
      }
      for (Path p : List.of(always, hourly, quick)) {
        write(p.resolve("f"), 2);
        write(p.resolve("g"), 3);
      }

      assertEquals(2, m.stat("/always/f").getLength());
      assertEquals(List.of("f", "g"), m.names("/always"));
      write(always.resolve("f"), 4);
      assertEquals(2, stat(m, "/always/f", NEVER).getLength(), "the call's never wins");

      assertEquals(1, m.stat("/hourly/f").getLength(), "checked less than an hour ago");
      assertEquals(List.of("f"), m.names("/hourly"));
      assertEquals(2, stat(m, "/hourly/f", ALWAYS).getLength(), "the call's always wins");
      assertEquals(List.of("f", "g"), names(list(m, "/hourly", ALWAYS)));

      // A short interval: the change shows once it has passed (bounded wait, no timing asserted).
      await("the change to /quick/f to show")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> m.stat("/quick/f").getLength() == 2);
      assertEquals(2, m.stat("/quick/f").getLength());
      assertEquals(List.of("f", "g"), m.names("/quick"));
    }
  }

  private static void mount(TestMaster m, String path, Path dir, String interval) {
    m.fs.mount(
        MountRequest.newBuilder()
            .setPath(path)
            .setUfsUri("file://" + dir)
            .putOptions("sync.interval", interval)
            .build());
  }

  @Test
  void configuredIntervalIsTheDefaultAndABadOneFailsStartUp() throws Exception {
    write(ufs().resolve("f"), 1);
    try (TestMaster m =
        TestMaster.start(home, Map.of("strata.master.ufs.sync.interval", "always"))) {
      assertEquals(1, m.stat("/f").getLength());
      write(ufs().resolve("f"), 2);
      write(ufs().resolve("g"), 2);
      assertEquals(2, m.stat("/f").getLength());
      assertEquals(List.of("f", "g"), m.names("/"));
    }
    StrataConfig bad =
        StrataConfig.load(
            TestMaster.config(home, Map.of("strata.master.ufs.sync.interval", "soon")));
    ConfigException e = assertThrows(ConfigException.class, () -> new MasterServer(bad));
    assertTrue(
        e.getMessage().contains("strata.master.ufs.sync.interval")
            && e.getMessage().contains("'soon' is not a sync interval"),
        e.getMessage());
  }

  @Test
  void changedFileGetsANewIdAndItsOldBlocksLeaveTheWorkersHoldingThem() throws Exception {
    write(ufs().resolve("data.bin"), 4096);
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo old = m.stat("/data.bin");
      long oldBlock = BlockIds.blockId(old.getFileId(), 0);
      long worker =
          m.blocks
              .registerWorker(
                  RegisterWorkerRequest.newBuilder()
                      .setAddress(
                          WorkerAddress.newBuilder()
                              .setHost("127.0.0.1")
                              .setRpcPort(7002)
                              .setDataPort(7001))
                      .addBlocks(
                          BlockReport.newBuilder()
                              .setBlockId(oldBlock)
                              .setLength(4096)
                              .setTier("MEM"))
                      .build())
              .getWorkerId();
      assertEquals(4096, m.stat("/data.bin").getCachedBytes());

      write(ufs().resolve("data.bin"), 5000);
      FileInfo now = stat(m, "/data.bin", ALWAYS);
      assertNotEquals(old.getFileId(), now.getFileId());
      assertEquals(0, now.getCachedBytes());
      assertEquals(
          List.of(oldBlock),
          m.blocks
              .heartbeat(HeartbeatRequest.newBuilder().setWorkerId(worker).build())
              .getRemoveBlockIdsList());
    }
  }

  @Test
  void syncThatFindsNothingChangedWritesNoJournalEntries() throws Exception {
    for (int i = 0; i < 50; i++) {
      write(ufs().resolve("same/f" + i), i);
    }
    try (TestMaster m = TestMaster.start(home)) {
      assertEquals(50, list(m, "/same", ALWAYS).size());
      long sequence = journalSequence(m);
      for (int round = 0; round < 3; round++) {
        assertEquals(50, list(m, "/same", ALWAYS).size());
        for (int i = 0; i < 50; i++) {
          assertEquals(i, stat(m, "/same/f" + i, ALWAYS).getLength());
        }
        assertTrue(stat(m, "/same", ALWAYS).getDirectory());
      }
      assertEquals(sequence, journalSequence(m));
    }
  }

  @Test
  void directoryReplacedByAFileAndBackIsReplacedInTheNamespace() throws Exception {
    write(ufs().resolve("x/inner.bin"), 3);
    write(ufs().resolve("y"), 4);
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo dir = m.stat("/x");
      assertEquals(List.of("inner.bin"), m.names("/x"));
      assertEquals(List.of("x", "y"), m.names("/"));

      deleteTree(ufs().resolve("x"));
      write(ufs().resolve("x"), 9);
      Files.delete(ufs().resolve("y"));
      write(ufs().resolve("y/sub/z.bin"), 1);

      List<FileInfo> top = list(m, "/", ALWAYS);
      assertEquals(List.of("x", "y"), names(top));
      assertFalse(top.get(0).getDirectory());
      assertEquals(9, top.get(0).getLength());
      assertNotEquals(dir.getFileId(), top.get(0).getFileId());
      assertTrue(top.get(1).getDirectory());
      assertFails(
          Status.Code.NOT_FOUND, "Path does not exist: /x/inner.bin", () -> m.stat("/x/inner.bin"));
      assertEquals(1, m.stat("/y/sub/z.bin").getLength());

      // One path at a time, through a status check.
      Files.delete(ufs().resolve("x"));
      write(ufs().resolve("x/back.bin"), 2);
      assertTrue(stat(m, "/x", ALWAYS).getDirectory());
      assertEquals(List.of("back.bin"), m.names("/x"));
    }
  }

  @Test
  void restartKeepsTheSyncedNamespace() throws Exception {
    write(ufs().resolve("r/keep"), 1);
    write(ufs().resolve("r/change"), 2);
    write(ufs().resolve("r/drop"), 3);
    List<FileInfo> synced;
    try (TestMaster m = TestMaster.start(home)) {
      m.list("/r");
      write(ufs().resolve("r/change"), 22);
      Files.delete(ufs().resolve("r/drop"));
      write(ufs().resolve("r/add"), 4);
      synced = list(m, "/r", ALWAYS);
      assertEquals(List.of("add", "change", "keep"), names(synced));
      m.crash();
    }
    try (TestMaster replayed = TestMaster.start(home)) {
      assertEquals(synced, replayed.list("/r"), "replayed from the journal");
    }
    try (TestMaster checkpointed = TestMaster.start(home)) {
      assertEquals(synced, checkpointed.list("/r"), "restored from a checkpoint");
    }
  }
}
