package io.strata.master.journal;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.Version;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal when a master cannot do its part: an entry it cannot apply, and a leader whose start
 * fails. Real Raft servers on loopback; only the applier and the leader's work are the test's.
 */
class JournalFaultsTest {
  @TempDir Path home;

  private Map<String, String> conf(int i, List<Integer> journalPorts) {
    Map<String, String> c = new HashMap<>();
    c.put("strata.home", home.toString());
    c.put("strata.master.hostname", "127.0.0.1");
    c.put("strata.master.journal.dir", home.resolve("m" + i + "/journal").toString());
    c.put("strata.master.metastore.dir", home.resolve("m" + i + "/metastore").toString());
    if (journalPorts.size() == 1) {
      c.put("strata.master.rpc.port", "0");
      c.put("strata.master.journal.port", Integer.toString(journalPorts.get(0)));
    } else {
      List<String> rpc = new ArrayList<>();
      List<String> journal = new ArrayList<>();
      for (int j = 0; j < journalPorts.size(); j++) {
        // The rpc ports are never bound here: only the journal serves.
        rpc.add("127.0.0.1:" + (20_000 + j));
        journal.add("127.0.0.1:" + journalPorts.get(j));
      }
      c.put("strata.master.rpc.port", Integer.toString(20_000 + i));
      c.put("strata.master.addresses", String.join(",", rpc));
      c.put("strata.master.journal.addresses", String.join(",", journal));
    }
    return c;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static JournalEntry.Builder inode(long id, long parent, String name) {
    return JournalEntry.newBuilder()
        .setInode(
            InodeEntry.newBuilder()
                .setId(id)
                .setParentId(parent)
                .setName(name)
                .setDirectory(true)
                .setComplete(true));
  }

  /** Starts a one-master journal whose leader work writes the root, as a master's does. */
  private JournalSystem single(
      Map<String, String> conf, MasterStateMachine.Applier applier, Runnable start)
      throws IOException {
    return single(conf, applier, start, new SimpleMeterRegistry());
  }

  private JournalSystem single(
      Map<String, String> conf,
      MasterStateMachine.Applier applier,
      Runnable start,
      MeterRegistry registry)
      throws IOException {
    JournalSystem j = JournalSystem.open(StrataConfig.load(conf), registry, applier);
    j.onRoleChange(
        new JournalSystem.RoleListener() {
          @Override
          public void gainedLead() {
            start.run();
          }

          @Override
          public void lostLead() {}
        });
    try {
      j.start();
    } catch (IOException | RuntimeException e) {
      j.close(false);
      throw e;
    }
    return j;
  }

  @Test
  void aMasterThatCannotApplyAnEntryStopsAndRecoversItFromItsLog() throws Exception {
    Map<String, String> conf = conf(0, List.of(freePort()));
    AtomicLong failAt = new AtomicLong(-1);
    AtomicBoolean failed = new AtomicBoolean();
    JournalSystem[] journal = new JournalSystem[1];
    journal[0] =
        single(
            conf,
            new MasterStateMachine.Applier() {
              InodeStore store;

              @Override
              public void apply(JournalEntry e) throws IOException {
                if (e.getSequence() == failAt.get()) {
                  throw new IOException("disk error at sequence " + e.getSequence());
                }
                store().apply(e);
              }

              private InodeStore store() {
                if (store == null) {
                  store = journal[0].store();
                }
                return store;
              }
            },
            () -> {});
    JournalSystem j = journal[0];
    j.onApplyFailure(() -> failed.set(true));
    j.write(
        List.of(
            inode(InodeStore.ROOT_ID, 0, ""), ClusterLayout.finalizeEntry(Version.LAYOUT_VERSION)));
    for (int i = 0; i < 5; i++) {
      j.write(List.of(inode(100 + i, InodeStore.ROOT_ID, "d" + i)));
    }
    long before = j.lastSequence();
    long snapshotBefore = j.checkpoint();
    assertEquals(before, snapshotBefore);

    failAt.set(before + 1);
    assertThrows(
        StrataException.class, () -> j.write(List.of(inode(200, InodeStore.ROOT_ID, "lost"))));
    assertTrue(failed.get(), "the master is told it stopped");
    assertFalse(j.isLeader(), "a master that skipped a committed entry must not serve");
    assertEquals(before, j.lastSequence(), "nothing past the failed entry is applied");
    StrataException refused =
        assertThrows(
            StrataException.class, () -> j.write(List.of(inode(201, InodeStore.ROOT_ID, "after"))));
    assertTrue(refused.getMessage().contains("could not apply"), refused.getMessage());
    assertThrows(StrataException.class, j::checkpoint, "no snapshot past a failed entry");
    j.close();
    assertEquals(
        snapshotBefore,
        newestSnapshotSequence(conf),
        "the final snapshot of a stopped master must not claim the failed entry");

    // Started again (the fault gone), it loads its last good snapshot and replays the entry.
    try (JournalSystem again = single(conf, null, () -> {})) {
      assertNotNull(
          again.store().child(InodeStore.ROOT_ID, "lost"),
          "the entry that could not be applied is applied on the restart");
      assertEquals(before + 1, again.lastSequence());
    }
  }

  private static long newestSnapshotSequence(Map<String, String> conf) throws IOException {
    return new Snapshots(
            JournalSystem.groupDir(Path.of(conf.get("strata.master.journal.dir"))).resolve("sm"))
        .newest()
        .map(Snapshots.Found::sequence)
        .orElse(-1L);
  }

  /**
   * The journal's gauges hold what they read strongly: Micrometer keeps a gauge's object only
   * weakly by default, and the role and index gauges read through objects nothing else holds, so
   * after a garbage collection they read NaN (and tools waiting for a follower to catch up, or for
   * a leader, waited forever).
   */
  @Test
  void theJournalsGaugesStillReadAfterAGarbageCollection() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (JournalSystem j = single(conf(0, List.of(freePort())), null, () -> {}, registry)) {
      j.awaitLead(Duration.ofSeconds(30));
      j.write(List.of(inode(2, 1, "a")));
      // A weak reference to an object nothing else holds shows that a collection has cleared
      // what only weak references held, as it would the gauges' objects were they held so.
      WeakReference<Object> collected = new WeakReference<>(new Object());
      await("a garbage collection to clear weak references")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                System.gc();
                return collected.get() == null;
              });
      assertEquals(1.0, registry.get(MetricNames.MASTER_JOURNAL_ROLE).gauge().value());
      double applied = registry.get(MetricNames.MASTER_JOURNAL_APPLIED_INDEX).gauge().value();
      assertTrue(applied >= 1, "applied index " + applied);
      assertEquals(0.0, registry.get(MetricNames.MASTER_JOURNAL_QUEUED).gauge().value());
    }
  }

  @Test
  void aLoneLeaderWhoseStartFailsTriesAgainUntilItServes() throws Exception {
    AtomicInteger starts = new AtomicInteger();
    long t0 = System.nanoTime();
    try (JournalSystem j =
        single(
            conf(0, List.of(freePort())),
            null,
            () -> {
              if (starts.incrementAndGet() <= 2) {
                throw new IllegalStateException("the root store does not answer (test)");
              }
            })) {
      assertTrue(j.isLeader(), "serves once a start succeeded");
      assertEquals(3, starts.get());
      assertTrue(
          System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30),
          "retried within seconds, not at the caller's give-up");
    }
  }

  @Test
  void aLeaderWhoseStartFailsHandsTheLeadToAMasterThatCanStart() throws Exception {
    List<Integer> ports = List.of(freePort(), freePort(), freePort());
    List<JournalSystem> masters = new ArrayList<>();
    AtomicInteger failedStarts = new AtomicInteger();
    try {
      for (int i = 0; i < 3; i++) {
        JournalSystem j =
            JournalSystem.open(StrataConfig.load(conf(i, ports)), new SimpleMeterRegistry());
        // Whichever master leads first cannot start its work, ever.
        j.onRoleChange(
            new JournalSystem.RoleListener() {
              @Override
              public void gainedLead() {
                synchronized (failedStarts) {
                  if (failedStarts.get() == 0 || broken.contains(j)) {
                    broken.add(j);
                    failedStarts.incrementAndGet();
                    throw new IllegalStateException("cannot start here (test)");
                  }
                }
              }

              @Override
              public void lostLead() {}
            });
        masters.add(j);
      }
      for (JournalSystem j : masters) {
        j.start();
      }
      JournalSystem serving =
          await("a master to serve: a leader whose start failed must not keep the lead")
              .atMost(Duration.ofSeconds(60))
              .pollInterval(Duration.ofMillis(50))
              .until(
                  () -> masters.stream().filter(JournalSystem::isLeader).findFirst().orElse(null),
                  Objects::nonNull);
      assertNotNull(serving, "no master serves: a leader whose start failed kept the lead");
      assertFalse(broken.contains(serving));
      assertTrue(failedStarts.get() >= 1);
    } finally {
      for (JournalSystem j : masters) {
        j.close(false);
      }
    }
  }

  private final List<JournalSystem> broken = new ArrayList<>();
}
