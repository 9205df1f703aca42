package io.strata.client;

import io.strata.client.master.MasterClient;
import io.strata.common.DaemonThreads;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.RenewLeasesRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews this client's leases on the incomplete files it created and still writes, in one master
 * call every {@code strata.client.lease.renew.interval}, so that the leader removes a file only
 * when its writer is gone (see the master's WriterLeases). A file is held from its create until its
 * stream completes, fails or is cancelled; a client that stops renews nothing, and its files lapse.
 * The timer thread starts with the first file held. Thread-safe.
 */
final class LeaseRenewal implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewal.class);

  private final MasterClient master;
  private final Duration interval;
  private final Set<Long> held = ConcurrentHashMap.newKeySet();
  private ScheduledExecutorService timer;
  private volatile boolean unsupported;
  private boolean closed;

  LeaseRenewal(MasterClient master, Duration interval) {
    this.master = master;
    this.interval = interval;
  }

  /** Starts renewing the lease of a file this client just created with one. */
  void hold(long fileId) {
    held.add(fileId);
    startTimer();
  }

  /** Stops renewing it: its stream completed, failed or was cancelled. */
  void release(long fileId) {
    held.remove(fileId);
  }

  private synchronized void startTimer() {
    if (timer != null || closed || interval.isZero() || interval.isNegative()) {
      return;
    }
    timer = Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("strata-lease-renewal"));
    long ms = Math.max(1, interval.toMillis());
    var unused = timer.scheduleWithFixedDelay(this::renewQuietly, ms, ms, TimeUnit.MILLISECONDS);
  }

  private void renewQuietly() {
    if (held.isEmpty() || unsupported) {
      return;
    }
    try {
      renew();
    } catch (StrataException e) {
      if (e.code() == ErrorCode.UNIMPLEMENTED) {
        // A master of an earlier release keeps no leases: its files were never created with one.
        unsupported = true;
        return;
      }
      LOG.warn(
          "Cannot renew the leases of {} files being written: {}; trying again in {} s",
          held.size(),
          e.getMessage(),
          interval.toSeconds());
    }
  }

  /** Renews every held lease now; files the master no longer leases are released. */
  void renew() throws StrataException {
    List<Long> ids = new ArrayList<>(held);
    if (ids.isEmpty()) {
      return;
    }
    List<Long> lapsed =
        master
            .call(s -> s.renewLeases(RenewLeasesRequest.newBuilder().addAllFileIds(ids).build()))
            .getLapsedFileIdsList();
    for (long id : lapsed) {
      if (held.remove(id)) {
        LOG.warn(
            "The master holds no lease on file {} any more (its lease lapsed and the file was"
                + " removed, or it was completed or deleted elsewhere): its write cannot complete;"
                + " write the file again, and keep strata.client.lease.renew.interval well below"
                + " the masters' strata.master.lease.timeout",
            id);
      }
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
