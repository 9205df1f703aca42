package io.strata.master.journal;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The leader's side of the journal's write path: changes go to {@link GroupCommit}, which sends
 * each batch here to be appended to the Raft log as one entry; a change's future completes when its
 * entries are applied on this master, or fails with UNAVAILABLE when they are not within {@link
 * RaftReplies#TIMEOUT}. Whether this master may write at all is {@link JournalSystem}'s to decide,
 * before it hands a change over.
 */
final class JournalWrites implements AutoCloseable {
  private static final Duration TIMEOUT = RaftReplies.TIMEOUT;

  /** The Raft division of this master, or the error that it has none (it is stopping). */
  @FunctionalInterface
  interface DivisionSource {
    RaftServer.Division division() throws IOException;
  }

  private final RaftServer server;
  private final DivisionSource division;
  private final MasterStateMachine stateMachine;
  private final ClientId localClient;
  private final AtomicLong callIds;
  private final Supplier<StrataException> notLeader;
  private final GroupCommit commit;
  private final Counter entriesCounter;
  private final DistributionSummary batchChanges;

  /**
   * @param localClient the client id of this master's own requests, which the state machine
   *     recognises as batches it need not parse back
   * @param notLeader the error of a write refused because this master no longer leads
   * @param grouping makes the batching of changes, given where its batches go
   */
  JournalWrites(
      RaftServer server,
      DivisionSource division,
      MasterStateMachine stateMachine,
      ClientId localClient,
      AtomicLong callIds,
      Supplier<StrataException> notLeader,
      Function<GroupCommit.Log, GroupCommit> grouping,
      MeterRegistry registry) {
    this.server = server;
    this.division = division;
    this.stateMachine = stateMachine;
    this.localClient = localClient;
    this.callIds = callIds;
    this.notLeader = notLeader;
    this.commit = grouping.apply(this::append);
    this.entriesCounter =
        Counter.builder(MetricNames.MASTER_JOURNAL_ENTRIES)
            .description("Journal entries written")
            .register(registry);
    this.batchChanges =
        DistributionSummary.builder(MetricNames.MASTER_JOURNAL_BATCH_CHANGES)
            .description("Changes carried by each journal entry this master wrote")
            .register(registry);
  }

  /** The batching of changes, for its gauges. */
  GroupCommit commit() {
    return commit;
  }

  /** See {@link JournalSystem#submit}; the caller checked that this master may write. */
  CompletableFuture<List<JournalEntry>> submit(
      List<JournalEntry> entries, CallIdentity caller, Consumer<List<JournalEntry>> applied) {
    if (entries.isEmpty()) {
      if (applied != null) {
        applied.accept(List.of());
      }
      return CompletableFuture.completedFuture(List.of());
    }
    return commit
        .submit(entries, caller, applied)
        .orTimeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
        .exceptionallyCompose(e -> CompletableFuture.failedFuture(writeFailure(e)));
  }

  /** {@link #submit}, waiting until the entries are applied. */
  List<JournalEntry> write(
      List<JournalEntry.Builder> entries, CallIdentity caller, Consumer<List<JournalEntry>> applied)
      throws StrataException {
    List<JournalEntry> built = new ArrayList<>(entries.size());
    for (JournalEntry.Builder e : entries) {
      built.add(e.clearSequence().build());
    }
    try {
      return submit(built, caller, applied).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StrataException.unavailable("Interrupted while writing to the journal", e);
    } catch (ExecutionException e) {
      Throwable t = e.getCause();
      if (t instanceof StrataException s) {
        throw s;
      }
      throw StrataException.unavailable("Cannot write to the journal: " + t, t);
    }
  }

  /** Fails every change not yet sent: this master lost the lead. */
  void failQueued(StrataException cause) {
    commit.failQueued(cause);
  }

  @Override
  public void close() {
    commit.close();
  }

  private static Throwable writeFailure(Throwable e) {
    Throwable t = e;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof TimeoutException) {
      return StrataException.unavailable(
          "Cannot write to the journal: nothing was committed"
              + " within "
              + TIMEOUT.toSeconds()
              + " s (has the group lost its majority?)",
          t);
    }
    return t;
  }

  /** Sends one batch as one Raft log entry; see {@link GroupCommit.Log}. */
  private CompletableFuture<Boolean> append(
      JournalBatch batch, Consumer<List<JournalEntry>> applied) {
    long callId = callIds.incrementAndGet();
    stateMachine.expect(callId, batch, applied);
    RaftClientRequest request =
        RaftClientRequest.newBuilder()
            .setClientId(localClient)
            .setServerId(server.getId())
            .setGroupId(RaftSettings.GROUP_ID)
            .setCallId(callId)
            // The array is the batch's own serialized copy and never changes: wrapped, not copied.
            .setMessage(Message.valueOf(UnsafeByteOperations.unsafeWrap(batch.toByteArray())))
            .setType(RaftClientRequest.writeRequestType())
            .build();
    CompletableFuture<RaftClientReply> sent;
    try {
      // The division itself takes the request on this thread; the server's front door would
      // hand it to a thread of its own and wait for it.
      RaftServer.Division d = division.division();
      sent =
          d instanceof RaftClientAsynchronousProtocol direct
              ? direct.submitClientRequestAsync(request)
              : server.submitClientRequestAsync(request);
    } catch (IOException e) {
      stateMachine.forget(callId);
      return CompletableFuture.failedFuture(
          StrataException.unavailable("Cannot write to the journal: " + e.getMessage(), e));
    }
    return sent.handle(
        (reply, error) -> {
          if (error != null || !reply.isSuccess()) {
            stateMachine.forget(callId);
            if (error == null
                && (reply.getNotLeaderException() != null
                    || reply.getLeaderNotReadyException() != null)) {
              throw new CompletionException(notLeader.get());
            }
            Throwable cause = error != null ? error : reply.getException();
            throw new CompletionException(
                StrataException.unavailable(
                    "The journal did not take"
                        + " the change ("
                        + (cause == null ? "no answer" : RaftReplies.rootMessage(cause))
                        + "); retry",
                    cause));
          }
          entriesCounter.increment(batch.getEntriesCount());
          batchChanges.record(Math.max(1, batch.getCallsCount()));
          return true;
        });
  }
}
