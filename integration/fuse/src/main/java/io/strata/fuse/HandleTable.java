package io.strata.fuse;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The handles the mount gave the kernel: each {@code open} or {@code create} gets a number of its
 * own ({@code fh}), so per-handle state (a writer, or the access pattern a reader detects) is never
 * shared between two opens of one file. Lookups are lock-free map reads.
 *
 * @param <H> what a handle holds
 */
final class HandleTable<H> {
  private final AtomicLong next = new AtomicLong(1);
  private final ConcurrentMap<Long, H> handles = new ConcurrentHashMap<>();

  /** Registers {@code handle}; the returned number is never reused by this table. */
  long add(H handle) {
    long fh = next.getAndIncrement();
    handles.put(fh, handle);
    return fh;
  }

  /** The handle numbered {@code fh}, or null when it is not open. */
  H get(long fh) {
    return handles.get(fh);
  }

  /** Removes and returns the handle numbered {@code fh}, or null. */
  H remove(long fh) {
    return handles.remove(fh);
  }

  int size() {
    return handles.size();
  }
}
