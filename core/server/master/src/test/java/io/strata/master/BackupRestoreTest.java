package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Context;
import io.strata.master.journal.HeaderFile;
import io.strata.proto.BackupRequest;
import io.strata.proto.BackupResponse;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.NamespaceChange;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup taken while 8 writers create directories holds the namespace at exactly one journal
 * sequence: restored into a fresh group, the namespace is every change up to that sequence (as the
 * master's change stream numbered them) and none after.
 */
class BackupRestoreTest {
  private static final int WRITERS = 8;
  private static final int PER_WRITER = 60;
  @TempDir Path home;
  @TempDir Path restored;

  @Test
  void aBackupTakenUnderWritesRestoresToExactlyItsSequence() throws Exception {
    Map<String, Long> created = new ConcurrentHashMap<>();
    AtomicLong lastSeen = new AtomicLong();
    BackupResponse backup;
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/w");
      // Every change with its sequence, from the master's change stream.
      Context.CancellableContext watch = Context.current().withCancellation();
      Thread watcher =
          new Thread(
              () ->
                  watch.run(
                      () -> {
                        try {
                          Iterator<WatchChangesResponse> it =
                              io.strata.proto.FileSystemMasterGrpc.newBlockingStub(m.channel)
                                  .watchChanges(
                                      WatchChangesRequest.newBuilder()
                                          .setAfterSequence(m.server.journal().lastSequence())
                                          .build());
                          while (it.hasNext()) {
                            WatchChangesResponse r = it.next();
                            for (NamespaceChange c : r.getChangesList()) {
                              if (c.getPath().startsWith("/w/")) {
                                created.put(c.getPath(), c.getSequence());
                              }
                            }
                            lastSeen.set(Math.max(lastSeen.get(), r.getSequence()));
                          }
                        } catch (RuntimeException e) {
                          // cancelled at the end of the test
                        }
                      }),
              "watcher");
      watcher.setDaemon(true);
      watcher.start();

      AtomicInteger acknowledged = new AtomicInteger();
      ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < WRITERS; w++) {
        int writer = w;
        done.add(
            writers.submit(
                () -> {
                  for (int i = 0; i < PER_WRITER; i++) {
                    m.fs
                        .withDeadlineAfter(30, TimeUnit.SECONDS)
                        .createDirectory(
                            CreateDirectoryRequest.newBuilder()
                                .setPath("/w/t" + writer + "-" + i)
                                .build());
                    acknowledged.incrementAndGet();
                  }
                  return null;
                }));
      }
      await("the writers to make progress")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(5))
          .until(() -> acknowledged.get() >= WRITERS * PER_WRITER / 3);
      backup =
          JournalMasterGrpc.newBlockingStub(m.channel)
              .backup(
                  BackupRequest.newBuilder().setDir(home.resolve("backups").toString()).build());
      for (Future<?> f : done) {
        f.get(120, TimeUnit.SECONDS);
      }
      writers.shutdown();
      long end = m.server.journal().lastSequence();
      await("the change stream to reach sequence " + end)
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(10))
          .untilAsserted(
              () ->
                  assertTrue(
                      lastSeen.get() >= end,
                      "change stream stopped at " + lastSeen.get() + " of " + end));
      watch.cancel(null);
      assertEquals(WRITERS * PER_WRITER, created.size());
    }
    assertTrue(backup.getSequence() > 0 && backup.getIndex() > 0, backup.toString());
    Path folder = Path.of(backup.getPath());
    assertTrue(Files.isRegularFile(folder.resolve("HEADER")));
    assertEquals("backup", HeaderFile.read(folder.resolve("HEADER")).getKind());
    Set<String> expected = new TreeSet<>();
    created.forEach(
        (path, sequence) -> {
          if (sequence <= backup.getSequence()) {
            expected.add(path);
          }
        });
    assertTrue(
        !expected.isEmpty() && expected.size() < created.size(),
        "the backup fell amid the writes: " + expected.size() + " of " + created.size());

    // A fresh group from the backup, over the same under store.
    try (TestMaster fresh =
        TestMaster.start(
            restored,
            Map.of(
                "strata.master.root.ufs",
                "file://" + home.resolve("ufs"),
                "strata.master.restore.backup",
                folder.toString()))) {
      GetMasterInfoResponse info =
          fresh.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
      assertEquals(backup.getSequence(), info.getJournalSequence());
      assertEquals(backup.getInodeCount(), info.getInodeCount());
      Set<String> listed = new TreeSet<>();
      fresh
          .fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/w").setSyncIntervalMs(-1).build())
          .forEachRemaining(
              page -> {
                for (FileInfo f : page.getFilesList()) {
                  listed.add(f.getPath());
                }
              });
      assertEquals(expected, listed);
      // The restored group takes writes after the backup's sequence.
      fresh.mkdirs("/after/restore");
      assertTrue(
          fresh.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getJournalSequence()
              > backup.getSequence());
    }
  }
}
