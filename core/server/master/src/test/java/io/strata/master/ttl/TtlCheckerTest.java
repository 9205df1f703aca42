package io.strata.master.ttl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.common.metrics.MetricNames;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.TtlAction;
import io.strata.proto.journal.DeleteInodeEntry;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the checker decides for each inode of the index, and what it asks its target to do. */
class TtlCheckerTest {
  private static final long T0 = 1_700_000_000_000L;

  @TempDir Path dir;
  private InodeStore store;
  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final ScriptedTarget target = new ScriptedTarget();
  private long sequence;

  /**
   * Records the calls and does to the store what the namespace would: a free clears the time to
   * live, a delete removes the inode. {@code failing} fails every call instead.
   */
  private final class ScriptedTarget implements TtlChecker.Target {
    final List<String> calls = new ArrayList<>();
    boolean failing;
    boolean changedMeanwhile;

    @Override
    public Optional<String> free(InodeEntry expired) throws IOException {
      calls.add("free " + expired.getName());
      if (failing) {
        throw new IOException("store unreachable");
      }
      if (changedMeanwhile) {
        return Optional.empty();
      }
      apply(JournalEntry.newBuilder().setInode(expired.toBuilder().clearTtlMs().clearTtlAction()));
      return Optional.of("/" + expired.getName());
    }

    @Override
    public Optional<String> delete(InodeEntry expired) throws IOException {
      calls.add("delete " + expired.getName());
      if (failing) {
        throw new IOException("store unreachable");
      }
      if (changedMeanwhile) {
        return Optional.empty();
      }
      apply(
          JournalEntry.newBuilder()
              .setDeleteInode(DeleteInodeEntry.newBuilder().setId(expired.getId())));
      return Optional.of("/" + expired.getName());
    }
  }

  @BeforeEach
  void setUp() throws Exception {
    store = InodeStore.open(dir, 100, new SimpleMeterRegistry());
    apply(
        JournalEntry.newBuilder()
            .setInode(InodeEntry.newBuilder().setId(InodeStore.ROOT_ID).setDirectory(true)));
  }

  @AfterEach
  void tearDown() {
    store.close();
  }

  private void apply(JournalEntry.Builder entry) throws IOException {
    store.apply(entry.setSequence(++sequence).build());
  }

  private InodeEntry add(long id, String name, long mtime, long ttl, TtlAction action)
      throws IOException {
    InodeEntry n =
        InodeEntry.newBuilder()
            .setId(id)
            .setParentId(InodeStore.ROOT_ID)
            .setName(name)
            .setModificationTimeMs(mtime)
            .setTtlMs(ttl)
            .setTtlAction(action)
            .build();
    apply(JournalEntry.newBuilder().setInode(n));
    return n;
  }

  private double actions(String action) {
    return registry
        .get(MetricNames.MASTER_TTL_ACTIONS)
        .tag(MetricNames.TAG_ACTION, action)
        .counter()
        .count();
  }

  @Test
  void dueOnlyOnceTheTimeToLiveHasPassed() {
    InodeEntry n =
        InodeEntry.newBuilder()
            .setModificationTimeMs(T0)
            .setTtlMs(1000)
            .setTtlAction(TtlAction.TTL_ACTION_DELETE)
            .build();
    assertEquals(Optional.empty(), TtlChecker.due(n, T0 + 999));
    assertEquals(Optional.of(TtlAction.TTL_ACTION_DELETE), TtlChecker.due(n, T0 + 1000));
    assertEquals(
        Optional.of(TtlAction.TTL_ACTION_FREE),
        TtlChecker.due(n.toBuilder().setTtlAction(TtlAction.TTL_ACTION_FREE).build(), T0 + 5000));
    assertEquals(
        Optional.empty(),
        TtlChecker.due(n.toBuilder().clearTtlMs().build(), Long.MAX_VALUE),
        "no time to live, nothing due");
    assertEquals(Optional.empty(), TtlChecker.due(null, T0 + 5000));
    assertEquals(
        Optional.of(TtlAction.TTL_ACTION_FREE),
        TtlChecker.due(n.toBuilder().setTtlActionValue(7).build(), T0 + 1000),
        "an action of a newer release frees, which loses nothing");
  }

  @Test
  void aRoundFreesOrDeletesWhatExpiredAndLeavesTheRest() throws Exception {
    add(2, "old-free", T0, 100, TtlAction.TTL_ACTION_FREE);
    add(3, "old-delete", T0, 200, TtlAction.TTL_ACTION_DELETE);
    add(4, "young", T0, 10_000, TtlAction.TTL_ACTION_DELETE);
    add(5, "none", T0, 0, TtlAction.TTL_ACTION_DELETE);
    TtlChecker checker = new TtlChecker(store, target, registry);

    assertEquals(2, checker.check(T0 + 5000));
    assertEquals(List.of("free old-free", "delete old-delete"), target.calls);
    assertEquals(1, actions("free"));
    assertEquals(1, actions("delete"));
    assertEquals(0, store.get(2).getTtlMs(), "freed, and its time to live cleared");
    assertEquals(null, store.get(3));
    assertEquals(10_000, store.get(4).getTtlMs());

    // The freed inode is not freed again; the young one's time comes later.
    target.calls.clear();
    assertEquals(0, checker.check(T0 + 5000));
    assertEquals(List.of(), target.calls);
    assertEquals(1, checker.check(T0 + 10_000));
    assertEquals(List.of("delete young"), target.calls);
    checker.close();
  }

  @Test
  void failedOrStaleActionsAreNotCountedAndAreTriedAgain() throws Exception {
    add(2, "a", T0, 100, TtlAction.TTL_ACTION_FREE);
    add(3, "b", T0, 100, TtlAction.TTL_ACTION_DELETE);
    TtlChecker checker = new TtlChecker(store, target, registry);
    target.failing = true;
    assertEquals(0, checker.check(T0 + 100));
    assertEquals(List.of("free a", "delete b"), target.calls, "one failure stops nothing");
    target.failing = false;
    target.changedMeanwhile = true;
    assertEquals(0, checker.check(T0 + 100));
    assertEquals(0, actions("free") + actions("delete"));
    target.changedMeanwhile = false;
    assertEquals(2, checker.check(T0 + 100));
    assertEquals(6, target.calls.size());
    checker.close();
  }

  @Test
  void aRoundReadsTheIndexInBatchesAndEndsEvenWhenEverythingFails() throws Exception {
    int count = TtlChecker.BATCH * 2 + 7;
    for (int i = 0; i < count; i++) {
      // Several inodes end at the same time: paging must not skip or repeat them.
      add(10 + i, "f" + i, T0 + i / 3, 1, TtlAction.TTL_ACTION_FREE);
    }
    TtlChecker checker = new TtlChecker(store, target, registry);
    target.failing = true;
    assertEquals(0, checker.check(T0 + count));
    assertEquals(count, target.calls.size());
    assertEquals(count, target.calls.stream().distinct().count());

    target.failing = false;
    target.calls.clear();
    assertEquals(count, checker.check(T0 + count));
    assertEquals(count, (int) actions("free"));
    assertTrue(store.expiredBy(Long.MAX_VALUE, null, 10).isEmpty());
    checker.close();
  }
}
