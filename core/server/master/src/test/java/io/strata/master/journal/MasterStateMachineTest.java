package io.strata.master.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.BatchedCall;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The state machine applies committed batches as every master must: in log order, numbering entries
 * from the applied sequence, recording the calls they carry, and replaying the same log into the
 * same namespace; a batch it cannot apply stops it without counting as applied.
 */
class MasterStateMachineTest {
  @TempDir Path dir;
  private final List<InodeStore> stores = new ArrayList<>();

  /** What the state machine told the master. */
  private static final class Heard implements MasterStateMachine.Listener {
    final List<JournalEntry> applied = new ArrayList<>();
    final List<Long> advanced = new ArrayList<>();
    Exception failure;

    @Override
    public void applied(List<JournalEntry> entries) {
      applied.addAll(entries);
    }

    @Override
    public void advanced(long sequence) {
      advanced.add(sequence);
    }

    @Override
    public void applyFailed(long index, Exception cause) {
      failure = cause;
    }

    @Override
    public void leaderReady() {}

    @Override
    public void leaderChanged(RaftPeerId leader) {}

    @Override
    public void reloaded() {}
  }

  @AfterEach
  void closeStores() {
    stores.forEach(InodeStore::close);
  }

  private InodeStore store(String name) throws IOException {
    InodeStore s = InodeStore.open(dir.resolve(name), 16, new SimpleMeterRegistry());
    stores.add(s);
    return s;
  }

  private static JournalEntry folder(long id, long parent, String name) {
    return JournalEntry.newBuilder()
        .setInode(
            InodeEntry.newBuilder()
                .setId(id)
                .setParentId(parent)
                .setName(name)
                .setDirectory(true)
                .setComplete(true))
        .build();
  }

  /** A committed log entry carrying {@code batch}, written by another master's client. */
  private static LogEntryProto logEntry(long term, long index, JournalBatch batch) {
    return LogEntryProto.newBuilder()
        .setTerm(term)
        .setIndex(index)
        .setStateMachineLogEntry(
            StateMachineLogEntryProto.newBuilder()
                .setClientId(ClientId.randomId().toByteString())
                .setCallId(index)
                .setLogData(ByteString.copyFrom(batch.toByteArray())))
        .build();
  }

  private static void apply(MasterStateMachine sm, LogEntryProto entry) throws Exception {
    sm.applyTransaction(
            TransactionContext.newBuilder().setStateMachine(sm).setLogEntry(entry).build())
        .get();
  }

  /** The journal of a short history: root, two folders in one batch, one more folder. */
  private static List<LogEntryProto> log() {
    return List.of(
        logEntry(
            1,
            1,
            JournalBatch.newBuilder()
                .addEntries(folder(InodeStore.ROOT_ID, 0, ""))
                .setClientId("admin")
                .setCallId(1)
                .build()),
        logEntry(
            1,
            2,
            JournalBatch.newBuilder()
                .addEntries(folder(2, 1, "a"))
                .addEntries(folder(3, 1, "b"))
                .addCalls(BatchedCall.newBuilder().setEntryCount(1).setClientId("c1").setCallId(10))
                .addCalls(BatchedCall.newBuilder().setEntryCount(1).setClientId("c2").setCallId(20))
                .build()),
        logEntry(
            2,
            5,
            JournalBatch.newBuilder()
                .addEntries(folder(4, 2, "c"))
                .setClientId("c1")
                .setCallId(11)
                .build()));
  }

  private MasterStateMachine machine(
      InodeStore store, MasterStateMachine.Applier applier, CallHistory calls, Heard heard) {
    return new MasterStateMachine(store, applier, ClientId.randomId(), calls, null, heard);
  }

  @Test
  void batchesApplyInOrderWithSequencesAndTheirCallsRecorded() throws Exception {
    InodeStore store = store("m");
    CallHistory calls = new CallHistory();
    Heard heard = new Heard();
    MasterStateMachine sm = machine(store, store::apply, calls, heard);
    for (LogEntryProto e : log()) {
      apply(sm, e);
    }
    assertEquals(4, store.appliedSequence(), "one sequence per entry, not per batch");
    assertEquals(
        List.of(1L, 2L, 3L, 4L), heard.applied.stream().map(JournalEntry::getSequence).toList());
    assertEquals(List.of(1L, 3L, 4L), heard.advanced, "after each batch, its last sequence");
    assertEquals(TermIndex.valueOf(2, 5), sm.getLastAppliedTermIndex());
    assertEquals(4, store.childId(2, "c"));
    assertTrue(calls.wasApplied("admin", 1));
    assertTrue(calls.wasApplied("c1", 10), "each call of a grouped batch");
    assertTrue(calls.wasApplied("c2", 20));
    assertTrue(calls.wasApplied("c1", 11));
    assertFalse(calls.wasApplied("c2", 10), "a call id belongs to its client");
    assertNull(sm.failure());
  }

  @Test
  void replayingTheSameLogGivesTheSameNamespace() throws Exception {
    InodeStore first = store("first");
    InodeStore second = store("second");
    MasterStateMachine a = machine(first, first::apply, new CallHistory(), new Heard());
    MasterStateMachine b = machine(second, second::apply, new CallHistory(), new Heard());
    for (LogEntryProto e : log()) {
      apply(a, e);
    }
    for (LogEntryProto e : log()) {
      apply(b, e);
    }
    for (long id = InodeStore.ROOT_ID; id <= 4; id++) {
      assertEquals(first.get(id), second.get(id), "inode " + id);
    }
    assertEquals(first.appliedSequence(), second.appliedSequence());
    assertEquals(first.nextInodeId(), second.nextInodeId());
  }

  @Test
  void aBatchThatCannotBeAppliedStopsTheMachineWithoutCountingAsApplied() throws Exception {
    InodeStore store = store("m");
    Heard heard = new Heard();
    MasterStateMachine.Applier failsOnC =
        entry -> {
          if (entry.getInode().getName().equals("c")) {
            throw new IOException("disk full");
          }
          store.apply(entry);
        };
    MasterStateMachine sm = machine(store, failsOnC, new CallHistory(), heard);
    List<LogEntryProto> log = log();
    apply(sm, log.get(0));
    apply(sm, log.get(1));

    IllegalStateException stopped =
        assertThrows(IllegalStateException.class, () -> apply(sm, log.get(2)));
    assertTrue(stopped.getMessage().contains("Cannot apply journal entry 5"), stopped.toString());
    assertNotNull(heard.failure);
    assertTrue(heard.failure.getMessage().contains("disk full"), heard.failure.toString());
    assertEquals(TermIndex.valueOf(1, 2), sm.getLastAppliedTermIndex(), "not past the failure");
    assertEquals(3, store.appliedSequence());
    IOException noSnapshot = assertThrows(IOException.class, sm::takeSnapshot);
    assertTrue(noSnapshot.getMessage().contains("No snapshot"), noSnapshot.toString());
    IOException noReads =
        assertThrows(IOException.class, () -> sm.atAppliedIndex(applied -> applied));
    assertTrue(noReads.getMessage().contains("restart it"), noReads.toString());
    assertThrows(IllegalStateException.class, () -> apply(sm, log.get(2)), "nothing after it");
  }
}
