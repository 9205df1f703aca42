package io.strata.master.file;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.master.journal.CallIdentity;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The inodes each client call made or found in an under store on this master, for the call's later
 * attempts: a create retried while its earlier attempt was still running here (the client gave up
 * waiting, on a slow leader) or after that attempt found its entry in the store and then failed,
 * finds the path taken by its own work, which the journal's call history does not show yet or at
 * all. Held for ten minutes (a client's retries end well inside) and for at most 100,000 calls; on
 * another master the attempts fall back to the call history.
 */
final class CallInodes {
  private final Cache<CallIdentity, Set<Long>> made =
      Caffeine.newBuilder().expireAfterWrite(Duration.ofMinutes(10)).maximumSize(100_000).build();

  /** Records that an attempt of {@code call} made or found inode {@code id}. */
  void record(CallIdentity call, long id) {
    if (call != null) {
      made.get(call, k -> ConcurrentHashMap.newKeySet()).add(id);
    }
  }

  /** Whether an attempt of {@code call} on this master made or found inode {@code id}. */
  boolean madeBy(CallIdentity call, long id) {
    if (call == null) {
      return false;
    }
    Set<Long> ids = made.getIfPresent(call);
    return ids != null && ids.contains(id);
  }
}
