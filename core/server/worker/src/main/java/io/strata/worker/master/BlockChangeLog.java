package io.strata.worker.master;

import io.strata.proto.BlockReport;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Blocks added and removed since the last heartbeat the master acknowledged. A block is in at most
 * one of the two lists: its latest change wins. A heartbeat takes the changes with {@link #drain}
 * and gives them back with {@link #restore} when it fails, so no change is lost to an unreachable
 * master. Thread-safe.
 */
public final class BlockChangeLog {
  private final Map<Long, BlockReport> added = new LinkedHashMap<>();
  private final Set<Long> removed = new LinkedHashSet<>();

  /** The changes taken by one heartbeat. */
  public record Changes(List<BlockReport> added, List<Long> removed) {}

  public synchronized void added(BlockReport block) {
    removed.remove(block.getBlockId());
    added.put(block.getBlockId(), block);
  }

  public synchronized void removed(long blockId) {
    added.remove(blockId);
    removed.add(blockId);
  }

  /** Takes every pending change. */
  public synchronized Changes drain() {
    Changes c = new Changes(new ArrayList<>(added.values()), new ArrayList<>(removed));
    added.clear();
    removed.clear();
    return c;
  }

  /** Puts back changes whose report failed, unless a newer change of the same block came. */
  public synchronized void restore(Changes changes) {
    for (BlockReport b : changes.added()) {
      if (!removed.contains(b.getBlockId())) {
        added.putIfAbsent(b.getBlockId(), b);
      }
    }
    for (long id : changes.removed()) {
      if (!added.containsKey(id)) {
        removed.add(id);
      }
    }
  }

  /** Forgets every change: a full block report is about to replace them. */
  public synchronized void clear() {
    added.clear();
    removed.clear();
  }
}
