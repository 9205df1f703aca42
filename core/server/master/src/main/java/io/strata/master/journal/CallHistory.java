package io.strata.master.journal;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The client calls whose changes were applied recently, by client id and call id, so a call retried
 * after a fail-over (its answer lost with the old leader) is recognised and not applied twice.
 * Every master records them as it applies entries, so the new leader knows them too. Bounded by
 * count and age, as a Raft retry cache is; a retry comes within the client's fail-over timeout, far
 * inside both bounds.
 *
 * <p>A snapshot carries the history as it was at the snapshot's index ({@link #FILE}): a master
 * that starts from a snapshot, or is sent one by the leader, knows the calls whose entries the
 * snapshot holds, and does not take a retry of one of them for a new call.
 */
public final class CallHistory {
  /** The file in a snapshot's folder that holds the history at the snapshot's index. */
  public static final String FILE = "calls";

  private static final int MAX_CALLS = 100_000;
  private static final long MAX_AGE_MS = 10 * 60_000;
  private static final int FORMAT = 1;

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

  /**
   * Writes the calls within the age bound to {@code file}, oldest first. The caller holds applies
   * off, so the file matches one applied index.
   */
  void writeTo(Path file) throws IOException {
    List<Map.Entry<Call, Long>> calls;
    synchronized (this) {
      calls = new ArrayList<>(applied.entrySet());
    }
    long oldest = System.currentTimeMillis() - MAX_AGE_MS;
    try (DataOutputStream out =
        new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
      out.writeInt(FORMAT);
      int count = 0;
      for (Map.Entry<Call, Long> c : calls) {
        if (c.getValue() >= oldest) {
          count++;
        }
      }
      out.writeInt(count);
      for (Map.Entry<Call, Long> c : calls) {
        if (c.getValue() >= oldest) {
          out.writeUTF(c.getKey().clientId());
          out.writeLong(c.getKey().callId());
          out.writeLong(c.getValue());
        }
      }
    }
  }

  /**
   * Adds the calls of a snapshot's history file to this one (a snapshot of an older release has
   * none: nothing is added). A file this release cannot read is an error naming it.
   */
  void readFrom(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      return;
    }
    try (DataInputStream in =
        new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
      int format = in.readInt();
      if (format != FORMAT) {
        throw new IOException(
            "The call history "
                + file
                + " is of format "
                + format
                + "; this release reads format "
                + FORMAT);
      }
      int count = in.readInt();
      List<Map.Entry<Call, Long>> read = new ArrayList<>(Math.min(count, MAX_CALLS));
      for (int i = 0; i < count; i++) {
        read.add(Map.entry(new Call(in.readUTF(), in.readLong()), in.readLong()));
      }
      synchronized (this) {
        for (Map.Entry<Call, Long> c : read) {
          applied.merge(c.getKey(), c.getValue(), Math::max);
        }
      }
    }
  }

  /** True when a change of that call was applied within the bounds. */
  public synchronized boolean wasApplied(String clientId, long callId) {
    Long at = applied.get(new Call(clientId, callId));
    return at != null && at >= System.currentTimeMillis() - MAX_AGE_MS;
  }
}
