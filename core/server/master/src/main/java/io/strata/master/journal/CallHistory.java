package io.strata.master.journal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The client calls whose changes were applied recently, by client id and call id, so a call retried
 * after a fail-over (its answer lost with the old leader) is recognised and not applied twice.
 * Every master records them as it applies entries, so the new leader knows them too. Bounded by
 * count and age, as a Raft retry cache is; a retry comes within the client's fail-over timeout, far
 * inside both bounds.
 */
public final class CallHistory {
  private static final int MAX_CALLS = 100_000;
  private static final long MAX_AGE_MS = 10 * 60_000;

  private record Call(String clientId, long callId) {}

  private final LinkedHashMap<Call, Long> applied =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Call, Long> eldest) {
          return size() > MAX_CALLS || eldest.getValue() < System.currentTimeMillis() - MAX_AGE_MS;
        }
      };

  synchronized void record(String clientId, long callId) {
    applied.put(new Call(clientId, callId), System.currentTimeMillis());
  }

  /** True when a change of that call was applied within the bounds. */
  public synchronized boolean wasApplied(String clientId, long callId) {
    Long at = applied.get(new Call(clientId, callId));
    return at != null && at >= System.currentTimeMillis() - MAX_AGE_MS;
  }
}
