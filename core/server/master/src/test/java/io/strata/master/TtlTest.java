package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.micrometer.core.instrument.Counter;
import io.strata.common.BlockIds;
import io.strata.common.metrics.MetricNames;
import io.strata.master.journal.HeaderFile;
import io.strata.master.journal.Snapshots;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.BlockReport;
import io.strata.proto.FileInfo;
import io.strata.proto.FinalizeUpgradeRequest;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.TierUsage;
import io.strata.proto.TtlAction;
import io.strata.proto.UpgradeMasterGrpc;
import io.strata.proto.WorkerAddress;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Time to live on a real master: set and cleared by SetAttribute, shown in statuses, acted on by
 * the leader's checker (free or delete), and refused until the cluster's layout has it.
 */
class TtlTest {
  private static final long MB = 1 << 20;
  private static final Map<String, String> FAST_CHECKS =
      Map.of("strata.master.ttl.check.interval", "100ms");

  @TempDir Path home;

  private static FileInfo setTtl(TestMaster m, String path, long ttlMs, TtlAction action) {
    return m.fs
        .setAttribute(
            SetAttributeRequest.newBuilder()
                .setPath(path)
                .setTtlMs(ttlMs)
                .setTtlAction(action)
                .build())
        .getFile();
  }

  /** A time to live that passed long ago: the modification time is moved back a day. */
  private static FileInfo setPassedTtl(TestMaster m, String path, TtlAction action) {
    return m.fs
        .setAttribute(
            SetAttributeRequest.newBuilder()
                .setPath(path)
                .setTtlMs(1000)
                .setTtlAction(action)
                .setModificationTimeMs(System.currentTimeMillis() - Duration.ofDays(1).toMillis())
                .build())
        .getFile();
  }

  private static double actions(TestMaster m, String action) {
    Counter c =
        m.server
            .meterRegistry()
            .find(MetricNames.MASTER_TTL_ACTIONS)
            .tag(MetricNames.TAG_ACTION, action)
            .counter();
    return c == null ? 0 : c.count();
  }

  private static boolean exists(TestMaster m, String path) {
    try {
      m.stat(path);
      return true;
    } catch (io.grpc.StatusRuntimeException e) {
      if (e.getStatus().getCode() != Status.Code.NOT_FOUND) {
        throw e;
      }
      return false;
    }
  }

  /** Registers a worker holding every block of the files; returns its id. */
  private static long workerHolding(TestMaster m, FileInfo... files) {
    RegisterWorkerRequest.Builder r =
        RegisterWorkerRequest.newBuilder()
            .setAddress(
                WorkerAddress.newBuilder()
                    .setHost("127.0.0.1")
                    .setRpcPort(7001)
                    .setDataPort(7002)
                    .setWebPort(7003))
            .addTiers(TierUsage.newBuilder().setAlias("MEM").setCapacityBytes(100 * MB))
            .setRelease("test")
            .setRpcProtocolVersion(1);
    for (FileInfo f : files) {
      for (int i = 0; i < BlockIds.blockCount(f.getLength(), f.getBlockSize()); i++) {
        r.addBlocks(
            BlockReport.newBuilder()
                .setBlockId(BlockIds.blockId(f.getFileId(), i))
                .setLength(Math.min(f.getBlockSize(), f.getLength() - i * f.getBlockSize()))
                .setTier("MEM"));
      }
    }
    return m.blocks.registerWorker(r.build()).getWorkerId();
  }

  @Test
  void setAndUnsetShowInStatusAndSurviveARestart() throws Exception {
    FileInfo set;
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/d/f", 10);
      set = setTtl(m, "/d/f", 3_600_000, TtlAction.TTL_ACTION_DELETE);
      assertEquals(3_600_000, set.getTtlMs());
      assertEquals(TtlAction.TTL_ACTION_DELETE, set.getTtlAction());
      assertEquals(60_000, setTtl(m, "/d", 60_000, TtlAction.TTL_ACTION_FREE).getTtlMs());
    }
    try (TestMaster m = TestMaster.start(home)) {
      assertEquals(set, m.stat("/d/f"));
      assertEquals(60_000, m.list("/").get(0).getTtlMs());

      FileInfo unset = setTtl(m, "/d/f", 0, TtlAction.TTL_ACTION_FREE);
      assertEquals(
          set.toBuilder().clearTtlMs().clearTtlAction().build(),
          unset,
          "only the time to live changed");
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Negative time to live -5 ms for /d/f",
          () -> setTtl(m, "/d/f", -5, TtlAction.TTL_ACTION_FREE));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Unknown time-to-live action for /d/f",
          () ->
              m.fs.setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/d/f")
                      .setTtlMs(5)
                      .setTtlActionValue(9)
                      .build()));
    }
  }

  @Test
  void passedFreeTtlDropsCachedBlocksOnceAndKeepsTheFile() throws Exception {
    try (TestMaster m = TestMaster.start(home, FAST_CHECKS)) {
      FileInfo f = m.file("/data/f", 3 * MB - 10);
      FileInfo young = m.file("/data/young", MB);
      long worker = workerHolding(m, f, young);
      assertEquals(f.getLength(), m.stat("/data/f").getCachedBytes());

      setTtl(m, "/data/young", 3_600_000, TtlAction.TTL_ACTION_FREE);
      setPassedTtl(m, "/data/f", TtlAction.TTL_ACTION_FREE);
      await("/data/f is freed")
          .atMost(Duration.ofSeconds(30))
          .until(() -> m.stat("/data/f").getTtlMs() == 0);

      FileInfo freed = m.stat("/data/f");
      assertEquals(0, freed.getCachedBytes());
      assertEquals(f.getLength(), freed.getLength());
      assertTrue(Files.exists(m.ufs.resolve("data/f")), "a free leaves the store alone");
      Set<Long> removals =
          new HashSet<>(
              m.blocks
                  .heartbeat(HeartbeatRequest.newBuilder().setWorkerId(worker).build())
                  .getRemoveBlockIdsList());
      Set<Long> blocksOfF = new HashSet<>();
      for (int i = 0; i < f.getBlockCount(); i++) {
        blocksOfF.add(BlockIds.blockId(f.getFileId(), i));
      }
      assertEquals(blocksOfF, removals);
      assertEquals(1, actions(m, "free"));

      // Later rounds leave both alone: the freed file has no time to live any more, the
      // young one's has not passed.
      long later = m.server.ttlChecker().roundsDone() + 2;
      await("two more rounds of the checker")
          .atMost(Duration.ofSeconds(30))
          .until(() -> m.server.ttlChecker().roundsDone() >= later);
      assertEquals(1, actions(m, "free"));
      FileInfo kept = m.stat("/data/young");
      assertEquals(MB, kept.getCachedBytes());
      assertEquals(3_600_000, kept.getTtlMs());
    }
  }

  @Test
  void passedDeleteTtlDeletesFilesAndTreesFromTheStore() throws Exception {
    try (TestMaster m = TestMaster.start(home, FAST_CHECKS)) {
      m.file("/tree/a/1.bin", 5);
      m.file("/tree/a/b/2.bin", 5);
      m.file("/tree/3.bin", 5);
      m.file("/one.bin", 5);
      m.file("/stays.bin", 5);
      // A time to live inside the tree too: it goes with the tree.
      setTtl(m, "/tree/a/1.bin", 3_600_000, TtlAction.TTL_ACTION_DELETE);
      setPassedTtl(m, "/tree", TtlAction.TTL_ACTION_DELETE);
      setPassedTtl(m, "/one.bin", TtlAction.TTL_ACTION_DELETE);
      long staysId = setTtl(m, "/stays.bin", 3_600_000, TtlAction.TTL_ACTION_DELETE).getFileId();

      await("/tree and /one.bin are deleted")
          .atMost(Duration.ofSeconds(30))
          .until(() -> !exists(m, "/tree") && !exists(m, "/one.bin"));
      assertFalse(Files.exists(m.ufs.resolve("tree")), "deleted in the store, subtree and all");
      assertFalse(Files.exists(m.ufs.resolve("one.bin")));
      assertTrue(Files.exists(m.ufs.resolve("stays.bin")));
      assertTrue(exists(m, "/stays.bin"));
      await("both deletions are counted")
          .atMost(Duration.ofSeconds(30))
          .until(() -> actions(m, "delete") == 2);
      assertEquals(0, actions(m, "free"));
      InodeStore store = m.server.journal().store();
      assertEquals(
          List.of(staysId),
          store.expiredBy(Long.MAX_VALUE, null, 10).stream().map(e -> e.inodeId()).toList(),
          "the index holds only what still has a time to live");
    }
  }

  @Test
  void ttlsThatCannotBeActedOnAreRefusedWhenSet() throws Exception {
    Path readOnly = home.resolve("readonly-store");
    Files.createDirectories(readOnly);
    Files.write(readOnly.resolve("x.bin"), new byte[3]);
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/mnt");
      m.fs.mount(
          MountRequest.newBuilder()
              .setPath("/mnt/ro")
              .setUfsUri("file://" + readOnly)
              .setReadOnly(true)
              .build());
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "it is a mount point",
          () -> setTtl(m, "/mnt/ro", 1000, TtlAction.TTL_ACTION_DELETE));
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "it is a mount point",
          () -> setTtl(m, "/", 1000, TtlAction.TTL_ACTION_DELETE));
      assertFails(
          Status.Code.PERMISSION_DENIED,
          "is read-only",
          () -> setTtl(m, "/mnt/ro/x.bin", 1000, TtlAction.TTL_ACTION_DELETE));
      // Freeing cached blocks never writes the store: a read-only mount takes it.
      assertEquals(1000, setTtl(m, "/mnt/ro/x.bin", 1000, TtlAction.TTL_ACTION_FREE).getTtlMs());
      assertEquals(1000, setTtl(m, "/mnt/ro", 1000, TtlAction.TTL_ACTION_FREE).getTtlMs());
      assertFails(
          Status.Code.PERMISSION_DENIED,
          "is read-only",
          () ->
              m.fs.setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/mnt/ro/x.bin")
                      .setTtlMs(1000)
                      .setMode(0600)
                      .build()));
    }
  }

  /**
   * A cluster upgraded from 0.1.0 stays at layout 1 until finalized: restored from a backup such a
   * cluster wrote (a root inode and no layout record), the master refuses a time to live and says
   * what to do, takes other attributes, and takes a time to live once finalized.
   */
  @Test
  void layoutOneRefusesTtlUntilFinalized() throws Exception {
    Path backup = home.resolve("backup-0.1.0");
    try (InodeStore old =
        InodeStore.open(
            home.resolve("old-metastore"),
            100,
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry())) {
      old.apply(
          JournalEntry.newBuilder()
              .setSequence(1)
              .setInode(
                  InodeEntry.newBuilder()
                      .setId(InodeStore.ROOT_ID)
                      .setDirectory(true)
                      .setMode(0755)
                      .setModificationTimeMs(System.currentTimeMillis()))
              .build());
      assertEquals(1, old.layoutVersion());
      Snapshots.write(old, backup, HeaderFile.BACKUP_KIND, 1, 1);
    }
    Path cluster = home.resolve("cluster");
    Files.createDirectories(cluster.resolve("ufs"));
    try (TestMaster m =
        TestMaster.start(cluster, Map.of("strata.master.restore.backup", backup.toString()))) {
      assertEquals(
          1, m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getLayoutVersion());
      m.file("/f", 10);
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "`strata fsadmin upgrade finalize`",
          () -> setTtl(m, "/f", 1000, TtlAction.TTL_ACTION_FREE));
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "needs layout 2",
          () -> setTtl(m, "/f", 0, TtlAction.TTL_ACTION_FREE));
      assertEquals(0, m.stat("/f").getTtlMs());
      assertEquals(
          0600,
          m.fs
              .setAttribute(SetAttributeRequest.newBuilder().setPath("/f").setMode(0600).build())
              .getFile()
              .getMode(),
          "other attributes are taken");

      UpgradeMasterGrpc.newBlockingStub(m.channel)
          .finalizeUpgrade(FinalizeUpgradeRequest.getDefaultInstance());
      assertEquals(1000, setTtl(m, "/f", 1000, TtlAction.TTL_ACTION_FREE).getTtlMs());
    }
  }
}
