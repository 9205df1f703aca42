package io.strata.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.client.master.MasterClient;
import io.strata.common.DaemonThreads;
import io.strata.proto.NamespaceChange;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's stream of namespace changes (WatchChanges), kept open: when it breaks -- the master
 * restarted, the network failed, or no message came for {@link #SILENCE_NANOS} although the master
 * sends a heartbeat every second -- it is opened again after a back-off, from the last change seen,
 * so that the master sends what was missed or says it cannot (a reset).
 *
 * <p>What the listener is told, in order and from one thread at a time: {@code connected} once the
 * stream is in step with the master (with {@code reset} when changes were missed and every cached
 * status must be forgotten), then every change as it comes; {@code disconnected} when the stream
 * breaks, after which changes may be missed until {@code connected} again. A master that does not
 * know the call (an older release) is not asked again: the listener stays disconnected and callers
 * keep to their time-to-live.
 */
public final class NamespaceWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NamespaceWatch.class);

  /** A stream that says nothing this long is taken for broken; the master beats every 1 s. */
  static final long SILENCE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final long MIN_RETRY_MS = 100;
  private static final long MAX_RETRY_MS = 5_000;

  /** What a cache of statuses needs to hear of the stream. */
  public interface Listener {
    /** The stream is in step; with {@code reset}, forget every status cached before. */
    void connected(boolean reset);

    /** Changes, in journal order, each already applied by the master. */
    void changed(List<NamespaceChange> changes);

    /** The stream broke: changes may be missed until the next {@link #connected}. */
    void disconnected(String reason);
  }

  private final MasterClient master;
  private final Listener listener;
  private final ScheduledExecutorService timer;
  // Guarded by this.
  private Stream current;
  private long lastSequence;
  private long retryMs = MIN_RETRY_MS;
  private boolean closed;

  NamespaceWatch(MasterClient master, Listener listener) {
    this.master = master;
    this.listener = listener;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("strata-namespace-watch"));
  }

  /** Opens the first stream and starts watching it for silence. */
  void start() {
    long checkMs = TimeUnit.NANOSECONDS.toMillis(SILENCE_NANOS) / 5;
    // Runs until close() shuts the timer down; nothing waits for the periodic task.
    var unused =
        timer.scheduleWithFixedDelay(this::checkSilence, checkMs, checkMs, TimeUnit.MILLISECONDS);
    open();
  }

  private synchronized void open() {
    if (closed) {
      return;
    }
    current = new Stream();
    master.watchChanges(
        WatchChangesRequest.newBuilder().setAfterSequence(lastSequence).build(), current);
  }

  private synchronized void checkSilence() {
    Stream s = current;
    if (s != null && s.call != null && System.nanoTime() - s.lastMessageNanos > SILENCE_NANOS) {
      s.silent = true;
      s.call.cancel(
          "no message from the master for " + TimeUnit.NANOSECONDS.toSeconds(SILENCE_NANOS) + " s",
          null);
    }
  }

  /** Whether the stream is in step with the master now. */
  public synchronized boolean connected() {
    return current != null && current.inStep;
  }

  /** The sequence of the last change (or heartbeat) received. */
  public synchronized long lastSequence() {
    return lastSequence;
  }

  /** One WatchChanges call; its callbacks count only while it is the current one. */
  private final class Stream
      implements ClientResponseObserver<WatchChangesRequest, WatchChangesResponse> {
    ClientCallStreamObserver<WatchChangesRequest> call;
    volatile long lastMessageNanos = System.nanoTime();
    volatile boolean silent;
    boolean inStep;

    @Override
    public void beforeStart(ClientCallStreamObserver<WatchChangesRequest> requestStream) {
      call = requestStream;
    }

    @Override
    public void onNext(WatchChangesResponse message) {
      lastMessageNanos = System.nanoTime();
      boolean first;
      synchronized (NamespaceWatch.this) {
        if (current != this) {
          return;
        }
        first = !inStep;
        inStep = true;
        lastSequence = Math.max(lastSequence, message.getSequence());
        retryMs = MIN_RETRY_MS;
      }
      // The master sends a stream's messages one at a time, so the listener hears them in
      // order without a lock held here. What a reconnected stream replays is applied before
      // the listener hears it is in step, so no status it missed a change of counts as fresh.
      if (message.getReset()) {
        listener.connected(true);
      }
      if (message.getChangesCount() > 0) {
        listener.changed(message.getChangesList());
      }
      if (first && !message.getReset()) {
        listener.connected(false);
      }
    }

    @Override
    public void onError(Throwable t) {
      ended(Status.fromThrowable(t), t);
    }

    @Override
    public void onCompleted() {
      ended(Status.UNAVAILABLE.withDescription("the master ended the stream"), null);
    }

    /**
     * @param failure what the stream failed with; null when the master ended it
     */
    private void ended(Status status, Throwable failure) {
      long delay;
      synchronized (NamespaceWatch.this) {
        if (current != this) {
          return;
        }
        current = null;
        if (closed) {
          return;
        }
        delay = retryMs;
        retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
      }
      String reason =
          status.getCode()
              + (status.getDescription() == null ? "" : ": " + status.getDescription());
      listener.disconnected(reason);
      if (status.getCode() == Status.Code.UNIMPLEMENTED) {
        LOG.warn(
            "The Strata master at {} does not stream namespace changes (an older"
                + " release); cached statuses expire by their time-to-live only",
            master.target());
        return;
      }
      LOG.info(
          "Namespace change stream from {} broke ({}); reopening in {} ms",
          master.target(),
          reason,
          delay);
      if (failure != null) {
        // With several masters the stream opens again on the leader a follower named, or on
        // the next master; a silent master is passed over as a paused one would be.
        master.watchBroke(failure, silent);
      }
      try {
        // The reopen runs on its own after the back-off; nothing waits for it.
        var unused = timer.schedule(NamespaceWatch.this::open, delay, TimeUnit.MILLISECONDS);
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // Closed meanwhile.
      }
    }
  }

  /** Ends the stream; the listener hears nothing more. */
  @Override
  public void close() {
    Stream s;
    synchronized (this) {
      closed = true;
      s = current;
      current = null;
    }
    if (s != null && s.call != null) {
      s.call.cancel("watch closed", null);
    }
    timer.shutdownNow();
  }
}
