package io.strata.master.journal;

import io.strata.common.DaemonThreads;
import io.strata.common.error.StrataException;
import io.strata.proto.journal.BatchedCall;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands changes to the replicated log so that changes made at the same time share log entries: a
 * group commit, as HDFS's edit log syncs many edits at once. Callers never wait here; each change's
 * future completes once its entries are applied on this master.
 *
 * <p>While fewer than {@code maxInFlight} entries are being committed, a change is sent as soon as
 * it arrives, from the caller's thread (a lone writer waits for nothing but its own commit); while
 * that many are in flight, the changes that arrive meanwhile gather, and a thread of its own sends
 * them together in the next entry, up to {@code maxBytes} of entries, as soon as an entry in flight
 * completes, and at the latest {@code maxWait} after the oldest of them arrived. So sixteen
 * concurrent creates cost one or two commits, not sixteen, and a change never waits longer than a
 * commit or {@code maxWait}, whichever is shorter.
 *
 * <p>Entries of one call stay together and in the order given, and changes go to the log in the
 * order they were submitted: the journal's order is the submission order. Only while the cluster's
 * layout allows it ({@code grouped}) does a log entry carry several calls; before that (a previous
 * release may still read the log) every call is a log entry of its own, still sent without waiting
 * for the one before.
 */
final class GroupCommit implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(GroupCommit.class);

  /** Entries in flight allowed while the log carries one call per entry (before layout 2). */
  private static final int MAX_IN_FLIGHT_UNGROUPED = 64;

  /** Appends one batch to the log; the reply completes after the batch was applied here. */
  interface Log {
    /**
     * Sends {@code batch} as one log entry; {@code applied} runs on the apply thread with the
     * batch's entries as applied, before the returned future completes.
     */
    CompletableFuture<Boolean> append(JournalBatch batch, Consumer<List<JournalEntry>> applied);
  }

  /** One caller's change waiting for or in a log entry. */
  private static final class Change {
    final List<JournalEntry> entries;
    final CallIdentity caller;
    final int bytes;
    final Consumer<List<JournalEntry>> applied;
    final CompletableFuture<List<JournalEntry>> done = new CompletableFuture<>();
    final long queuedNanos = System.nanoTime();

    Change(
        List<JournalEntry> entries,
        CallIdentity caller,
        int bytes,
        Consumer<List<JournalEntry>> applied) {
      this.entries = entries;
      this.caller = caller;
      this.bytes = bytes;
      this.applied = applied;
    }
  }

  private final Log log;
  private final BooleanSupplier grouped;
  private final int maxInFlight;
  private final long maxBytes;
  private final long maxWaitNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  /** Guarded by lock. */
  private final ArrayDeque<Change> queue = new ArrayDeque<>();

  /** Log entries sent and not yet answered; guarded by lock. */
  private int inFlight;

  /** Guarded by lock. */
  private boolean closed;

  private final Thread sender;

  /**
   * @param grouped whether a log entry may carry several calls now (the cluster's layout)
   * @param maxInFlight log entries being committed at once before new changes gather
   * @param maxBytes most bytes of changes one log entry carries (a larger change goes alone)
   * @param maxWaitNanos longest time a change waits for the entries in flight
   */
  GroupCommit(Log log, BooleanSupplier grouped, int maxInFlight, long maxBytes, long maxWaitNanos) {
    this.log = log;
    this.grouped = grouped;
    this.maxInFlight = Math.max(1, maxInFlight);
    this.maxBytes = Math.max(1, maxBytes);
    this.maxWaitNanos = Math.max(0, maxWaitNanos);
    this.sender = DaemonThreads.daemon(this::sendLoop, "master-journal-group-commit");
    sender.start();
  }

  /**
   * Queues a change: its entries (their sequences are set when they apply), the call that made it
   * (null: the master itself), and what to run with the entries as applied, on the apply thread
   * before any later change applies. The future completes after that, or fails with the reason the
   * change will not be applied by this master.
   */
  CompletableFuture<List<JournalEntry>> submit(
      List<JournalEntry> entries, CallIdentity caller, Consumer<List<JournalEntry>> applied) {
    int bytes = 0;
    for (JournalEntry e : entries) {
      bytes += e.getSerializedSize();
    }
    Change c = new Change(entries, caller, bytes, applied);
    boolean now;
    lock.lock();
    try {
      if (closed) {
        c.done.completeExceptionally(
            StrataException.unavailable("The master is shutting down; retry on its restart", null));
        return c.done;
      }
      // Nothing waiting and room in flight: sent from this thread, saving the hand-off to the
      // sender (what a lone writer waits for). Callers submit one at a time where their order
      // matters (the staging lock), so nothing can overtake it.
      now = queue.isEmpty() && inFlight < cap(grouped.getAsBoolean());
      if (now) {
        inFlight++;
      } else {
        queue.addLast(c);
        changed.signal();
      }
    } finally {
      lock.unlock();
    }
    if (now) {
      send(List.of(c));
    }
    return c.done;
  }

  /** Fails every change not yet sent (this master stopped leading); later ones queue anew. */
  void failQueued(StrataException reason) {
    List<Change> dropped;
    lock.lock();
    try {
      dropped = new ArrayList<>(queue);
      queue.clear();
    } finally {
      lock.unlock();
    }
    for (Change c : dropped) {
      c.done.completeExceptionally(reason);
    }
  }

  /** Changes queued and not yet sent, and log entries sent and not yet answered. */
  int[] backlog() {
    lock.lock();
    try {
      return new int[] {queue.size(), inFlight};
    } finally {
      lock.unlock();
    }
  }

  private void sendLoop() {
    while (true) {
      List<Change> batch;
      boolean group;
      lock.lock();
      try {
        group = grouped.getAsBoolean();
        while (!closed && !readyToSend(group)) {
          if (queue.isEmpty() || inFlight < cap(group)) {
            changed.await();
          } else {
            long left = maxWaitNanos - (System.nanoTime() - queue.peekFirst().queuedNanos);
            if (left <= 0) {
              break;
            }
            changed.awaitNanos(left);
          }
          group = grouped.getAsBoolean();
        }
        if (closed) {
          return;
        }
        batch = take(group);
        inFlight++;
      } catch (InterruptedException e) {
        return;
      } finally {
        lock.unlock();
      }
      send(batch);
    }
  }

  private int cap(boolean group) {
    return group ? maxInFlight : MAX_IN_FLIGHT_UNGROUPED;
  }

  /** Lock held. */
  private boolean readyToSend(boolean group) {
    if (queue.isEmpty()) {
      return false;
    }
    return inFlight < cap(group)
        || System.nanoTime() - queue.peekFirst().queuedNanos >= maxWaitNanos;
  }

  /** The changes of the next log entry, in queue order. Lock held; the queue is not empty. */
  private List<Change> take(boolean group) {
    List<Change> batch = new ArrayList<>();
    long bytes = 0;
    while (!queue.isEmpty()) {
      Change next = queue.peekFirst();
      if (!batch.isEmpty() && (!group || bytes + next.bytes > maxBytes)) {
        break;
      }
      batch.add(queue.removeFirst());
      bytes += next.bytes;
    }
    return batch;
  }

  private void send(List<Change> batch) {
    JournalBatch.Builder b = JournalBatch.newBuilder();
    if (batch.size() == 1) {
      // One call: the shape every release reads.
      Change c = batch.get(0);
      b.addAllEntries(c.entries);
      if (c.caller != null) {
        b.setClientId(c.caller.clientId()).setCallId(c.caller.callId());
      }
    } else {
      for (Change c : batch) {
        b.addAllEntries(c.entries);
        BatchedCall.Builder call = BatchedCall.newBuilder().setEntryCount(c.entries.size());
        if (c.caller != null) {
          call.setClientId(c.caller.clientId()).setCallId(c.caller.callId());
        }
        b.addCalls(call);
      }
    }
    CompletableFuture<Boolean> reply;
    try {
      reply = log.append(b.build(), applied -> dispatch(batch, applied));
    } catch (RuntimeException e) {
      reply = CompletableFuture.failedFuture(e);
    }
    // The callback is the last stage: it hands every change its outcome, so nothing waits for it.
    var unused =
        reply.whenComplete(
            (ok, error) -> {
              lock.lock();
              try {
                inFlight--;
                changed.signal();
              } finally {
                lock.unlock();
              }
              if (error == null && Boolean.TRUE.equals(ok)) {
                for (Change c : batch) {
                  // Answered without its apply having run here (not expected): never leave it
                  // hanging.
                  if (!c.done.isDone()) {
                    c.done.completeExceptionally(
                        StrataException.unavailable(
                            "The journal took the"
                                + " change but this master did not apply it; retry",
                            null));
                  }
                }
              }
              if (error != null || !Boolean.TRUE.equals(ok)) {
                Throwable cause = error != null ? unwrap(error) : null;
                StrataException reason =
                    cause instanceof StrataException s
                        ? s
                        : StrataException.unavailable(
                            "The journal did not take the change ("
                                + (cause == null ? "no answer" : cause.getMessage())
                                + "); retry",
                            cause);
                for (Change c : batch) {
                  c.done.completeExceptionally(reason);
                }
              }
            });
  }

  /** On the apply thread: hands each change its own entries, in order. */
  private static void dispatch(List<Change> batch, List<JournalEntry> applied) {
    int total = 0;
    for (Change c : batch) {
      total += c.entries.size();
    }
    if (applied.size() != total) {
      // Not reached: a batch applies whole or stops the master.
      StrataException e =
          StrataException.internal(
              "A journal entry applied " + applied.size() + " of its " + total + " entries", null);
      batch.forEach(c -> c.done.completeExceptionally(e));
      return;
    }
    int from = 0;
    for (Change c : batch) {
      List<JournalEntry> mine = applied.subList(from, from + c.entries.size());
      from += c.entries.size();
      try {
        if (c.applied != null) {
          c.applied.accept(mine);
        }
      } catch (RuntimeException e) {
        LOG.error("A change's follow-up after its apply failed", e);
      }
      c.done.complete(mine);
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof java.util.concurrent.CompletionException
            || t instanceof java.util.concurrent.ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    failQueued(
        StrataException.unavailable("The master is shutting down; retry on its restart", null));
    try {
      sender.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
