package io.strata.master.journal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps changes from filling the disks of the journal and the metastore: while either has less free
 * space than {@code strata.master.journal.reserved.space}, the leader refuses changes with
 * RESOURCE_EXHAUSTED (ENOSPC) naming the folder, and takes them again once there is room; reads go
 * on meanwhile. Without it the Raft log would fail a write half-way and close for good, and a
 * metastore that cannot apply a committed entry stops the master.
 *
 * <p>Free space is read at most once a second, so a change costs no system call.
 */
final class JournalSpace {
  private static final Logger LOG = LoggerFactory.getLogger(JournalSpace.class);
  private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final List<Path> folders;
  private final long reserve;
  private volatile long checkedNanos;
  private volatile long freeBytes = Long.MAX_VALUE;
  private volatile Path tightest;
  private final ReentrantLock refreshing = new ReentrantLock();

  /** Guarded by {@link #refreshing}. */
  private boolean refusing;

  JournalSpace(List<Path> folders, long reserve, MeterRegistry registry) {
    this.folders = List.copyOf(folders);
    this.reserve = reserve;
    Gauge.builder(MetricNames.MASTER_JOURNAL_FREE, this, s -> s.refresh(System.nanoTime()))
        .description(
            "Free space of the fuller of the journal's and the metastore's file systems;"
                + " changes are refused below strata.master.journal.reserved.space")
        .baseUnit("bytes")
        .register(registry);
  }

  /**
   * Fails with RESOURCE_EXHAUSTED (ENOSPC) while the journal's or the metastore's file system has
   * less free space than the reserve.
   */
  void check() throws StrataException {
    if (reserve <= 0) {
      return;
    }
    long now = System.nanoTime();
    long free = now - checkedNanos < RECHECK_NANOS ? freeBytes : refresh(now);
    if (free >= reserve) {
      return;
    }
    throw new StrataException(
        ErrorCode.RESOURCE_EXHAUSTED,
        PosixError.ENOSPC,
        "The master refuses changes: the file system of "
            + tightest
            + " has "
            + mb(free)
            + " free, less than strata.master.journal.reserved.space ("
            + mb(reserve)
            + "). Free space there (`strata fsadmin checkpoint` also drops journal segments"
            + " older than a new checkpoint); reads go on meanwhile");
  }

  /**
   * Reads the free space again. A caller that finds another thread reading it takes the last value
   * instead of waiting behind that thread's file-system call.
   */
  private long refresh(long now) {
    if (!refreshing.tryLock()) {
      return freeBytes;
    }
    try {
      return read(now);
    } finally {
      refreshing.unlock();
    }
  }

  private long read(long now) {
    long least = Long.MAX_VALUE;
    Path at = null;
    for (Path f : folders) {
      try {
        long usable = Files.getFileStore(existing(f)).getUsableSpace();
        if (usable < least) {
          least = usable;
          at = f;
        }
      } catch (IOException e) {
        LOG.debug("Cannot read the free space of {}: {}", f, e.toString());
      }
    }
    freeBytes = least;
    tightest = at;
    checkedNanos = now;
    boolean refuse = reserve > 0 && least < reserve;
    if (refuse != refusing) {
      refusing = refuse;
      if (refuse) {
        LOG.error(
            "Refusing changes: the file system of {} has {} free, less than"
                + " strata.master.journal.reserved.space ({}); reads go on",
            at,
            mb(least),
            mb(reserve));
      } else {
        LOG.info("Taking changes again: the file system of {} has {} free", at, mb(least));
      }
    }
    return least;
  }

  private static Path existing(Path p) {
    Path at = p.toAbsolutePath();
    while (at != null && !Files.exists(at)) {
      at = at.getParent();
    }
    return at == null ? p : at;
  }

  private static String mb(long bytes) {
    return (bytes >> 20) + " MB";
  }
}
