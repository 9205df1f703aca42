package io.strata.master.file;

import io.grpc.stub.ServerCallStreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.DaemonThreads;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.NamespaceChange;
import io.strata.proto.WatchChangesResponse;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespace's changes as a stream, for clients that cache statuses until they change (FUSE
 * mounts): every change journaled through {@link InodeTree#journal} is published here with its
 * journal sequence, kept in a bounded history so that a client that reconnects gets what it missed,
 * and sent to every watcher in order by one thread of the feed's own.
 *
 * <p>Guarantees: a watcher gets every change after its position, in sequence order and once, and
 * never before the change is applied to the metastore (it is published within the journal write,
 * after the apply, so in journal order with every other write). When that cannot be kept -- the
 * position is older than the history, predates this master, or the watcher fell more than {@code
 * maxPending} changes behind -- the watcher is sent {@code reset} instead, then every later change.
 * The first message of a stream carries what the watcher missed (at most {@link #MAX_REPLAY}
 * changes; more is a reset). A message is sent to a watcher only while its call can take it, so a
 * slow watcher never makes the master buffer without bound, and publishing never waits for a
 * watcher. Memory is bounded by {@code historySize} changes plus {@code maxPending} per watcher.
 * When nothing was sent to a watcher for {@link #HEARTBEAT_NANOS}, it gets an empty message, by
 * which it can tell that the stream is alive.
 */
public final class ChangeFeed implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ChangeFeed.class);

  /** Most changes a reconnecting watcher is sent in place of a reset. */
  static final int MAX_REPLAY = 10_000;

  /** Most changes in one message after the first. */
  private static final int BATCH = 1_000;

  /** Quiet time after which a watcher gets a heartbeat. */
  static final long HEARTBEAT_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final int historySize;
  private final int maxPending;

  /** Guarded by this. */
  private final ArrayDeque<NamespaceChange> history = new ArrayDeque<>();

  /** Every change after this sequence is in the history. Guarded by this. */
  private long completeAfter;

  /** The sequence of the last change published (or where the feed started). Guarded by this. */
  private long lastSequence;

  /** Guarded by this. */
  private final List<Watcher> watchers = new ArrayList<>();

  private final Counter published;
  private final Counter resets;
  private final Thread sender;
  private volatile boolean closed;

  /** One stream and what it still has to be sent; guarded by the feed's monitor. */
  private static final class Watcher {
    final ServerCallStreamObserver<WatchChangesResponse> call;
    WatchChangesResponse first;
    final ArrayDeque<NamespaceChange> pending = new ArrayDeque<>();
    boolean resetPending;
    long lastSentNanos = System.nanoTime();

    Watcher(ServerCallStreamObserver<WatchChangesResponse> call) {
      this.call = call;
    }
  }

  /**
   * @param startSequence the journal's last sequence when the master starts: changes before it are
   *     not in the history
   * @param historySize changes kept for watchers that reconnect
   * @param maxPending changes a watcher may lag behind before it is reset
   */
  public ChangeFeed(long startSequence, int historySize, int maxPending, MeterRegistry registry) {
    this.completeAfter = startSequence;
    this.lastSequence = startSequence;
    this.historySize = Math.max(1, historySize);
    this.maxPending = Math.max(1, maxPending);
    this.published =
        Counter.builder(MetricNames.MASTER_WATCH_CHANGES)
            .description("Namespace changes published to watching clients")
            .register(registry);
    this.resets =
        Counter.builder(MetricNames.MASTER_WATCH_RESETS)
            .description("Watchers told to reset their caches (missed or too many changes)")
            .register(registry);
    Gauge.builder(MetricNames.MASTER_WATCH_WATCHERS, this, ChangeFeed::watcherCount)
        .description("Clients watching the namespace's changes")
        .register(registry);
    this.sender = DaemonThreads.daemon(this::sendLoop, "master-change-feed");
    sender.start();
  }

  /** Publishes changes, in sequence order, after they were applied. Never blocks on a watcher. */
  public void publish(List<NamespaceChange> changes) {
    if (changes.isEmpty()) {
      return;
    }
    synchronized (this) {
      for (NamespaceChange c : changes) {
        history.addLast(c);
        lastSequence = c.getSequence();
      }
      while (history.size() > historySize) {
        completeAfter = history.removeFirst().getSequence();
      }
      for (Watcher w : watchers) {
        if (w.resetPending) {
          continue;
        }
        w.pending.addAll(changes);
        if (w.pending.size() > maxPending) {
          w.pending.clear();
          w.resetPending = true;
          resets.increment();
        }
      }
      notifyAll();
    }
    published.increment(changes.size());
  }

  /**
   * Moves the feed's position to a journal sequence every change up to which was published (called
   * within each journal write, after its changes): a watcher that has been sent everything is then
   * at the journal's end, so a master restarted on the same journal owes it nothing and need not
   * reset it.
   */
  public synchronized void advance(long sequence) {
    if (sequence > lastSequence) {
      lastSequence = sequence;
    }
  }

  /**
   * Forgets the history and starts again at {@code sequence}: a master that takes the lead never
   * published what the previous leader did, so a watcher that asks from an older sequence must
   * reset rather than be told nothing changed.
   */
  public synchronized void restartAt(long sequence) {
    history.clear();
    completeAfter = sequence;
    lastSequence = sequence;
    for (Watcher w : watchers) {
      w.pending.clear();
      w.resetPending = true;
    }
    notifyAll();
  }

  /**
   * Starts streaming to a watcher whose last seen change is {@code afterSequence} (0: it has seen
   * none and caches nothing).
   */
  public void watch(long afterSequence, ServerCallStreamObserver<WatchChangesResponse> call) {
    Watcher w = new Watcher(call);
    call.setOnReadyHandler(this::wake);
    call.setOnCancelHandler(() -> remove(w));
    synchronized (this) {
      WatchChangesResponse.Builder first = WatchChangesResponse.newBuilder();
      if (afterSequence != 0) {
        List<NamespaceChange> missed = new ArrayList<>();
        boolean known = afterSequence >= completeAfter && afterSequence <= lastSequence;
        if (known) {
          for (NamespaceChange c : history) {
            if (c.getSequence() > afterSequence) {
              missed.add(c);
            }
          }
        }
        if (!known || missed.size() > MAX_REPLAY) {
          first.setReset(true);
          resets.increment();
        } else {
          first.addAllChanges(missed);
        }
      }
      w.first = first.setSequence(lastSequence).build();
      watchers.add(w);
      notifyAll();
    }
  }

  private synchronized void remove(Watcher w) {
    watchers.remove(w);
  }

  private synchronized void wake() {
    notifyAll();
  }

  private synchronized int watcherCount() {
    return watchers.size();
  }

  /** The thread that sends: each watcher what it has pending, or a heartbeat when due. */
  private void sendLoop() {
    List<Watcher> snapshot = new ArrayList<>();
    while (!closed) {
      synchronized (this) {
        try {
          // Woken by a publish, a new watcher or a call becoming ready; else at least once
          // per heartbeat period.
          wait(TimeUnit.NANOSECONDS.toMillis(HEARTBEAT_NANOS) / 4);
        } catch (InterruptedException e) {
          return;
        }
        snapshot.clear();
        snapshot.addAll(watchers);
      }
      for (Watcher w : snapshot) {
        try {
          drain(w);
        } catch (RuntimeException e) {
          // A call that failed under us (the client went away): forget it.
          LOG.debug("Dropping a change watcher: {}", e.toString());
          remove(w);
        }
      }
    }
  }

  /** Sends what a watcher is due while its call is ready. Only the sender thread calls this. */
  private void drain(Watcher w) {
    while (true) {
      if (w.call.isCancelled()) {
        remove(w);
        return;
      }
      if (!w.call.isReady()) {
        return;
      }
      WatchChangesResponse message;
      synchronized (this) {
        if (w.first != null) {
          message = w.first;
          w.first = null;
        } else if (w.resetPending) {
          w.resetPending = false;
          message =
              WatchChangesResponse.newBuilder().setReset(true).setSequence(lastSequence).build();
        } else if (!w.pending.isEmpty()) {
          WatchChangesResponse.Builder b = WatchChangesResponse.newBuilder();
          for (int i = 0; i < BATCH && !w.pending.isEmpty(); i++) {
            b.addChanges(w.pending.removeFirst());
          }
          long last = b.getChanges(b.getChangesCount() - 1).getSequence();
          message = b.setSequence(w.pending.isEmpty() ? lastSequence : last).build();
        } else if (System.nanoTime() - w.lastSentNanos >= HEARTBEAT_NANOS) {
          message = WatchChangesResponse.newBuilder().setSequence(lastSequence).build();
        } else {
          return;
        }
      }
      w.call.onNext(message);
      w.lastSentNanos = System.nanoTime();
    }
  }

  /** The sequence of the last change published. */
  public synchronized long lastSequence() {
    return lastSequence;
  }

  /** Ends every stream (the master is stopping) and the sender thread. */
  @Override
  public void close() {
    closed = true;
    sender.interrupt();
    try {
      // The sender may be inside onNext of a call: a call takes one thread at a time.
      sender.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    List<Watcher> all;
    synchronized (this) {
      all = new ArrayList<>(watchers);
      watchers.clear();
    }
    for (Watcher w : all) {
      try {
        w.call.onCompleted();
      } catch (RuntimeException e) {
        // Already gone.
      }
    }
  }
}
