package io.strata.common;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * Stable assignment of blocks to workers by rendezvous (highest-random-weight) hashing: every
 * worker gets a score for a block and the highest wins. Adding or losing a worker moves only the
 * blocks that worker wins or won, so repeated reads and loads of a block hit the same worker.
 * Clients and the master's load scheduler use this same function.
 */
public final class WorkerHashing {
  private WorkerHashing() {}

  /** Score of a (block, worker) pair; a 64-bit mix so that scores are uniform. */
  public static long score(long blockId, long workerId) {
    long h = blockId * 0x9E3779B97F4A7C15L ^ (workerId + 0x632BE59BD9B4E019L);
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h;
  }

  /** The workers in order of preference for a block: the first is the block's home. */
  public static <W> List<W> rank(long blockId, List<W> workers, ToLongFunction<W> workerId) {
    List<W> ranked = new ArrayList<>(workers);
    ranked.sort(
        Comparator.comparingLong((W w) -> score(blockId, workerId.applyAsLong(w))).reversed());
    return ranked;
  }

  /** The home worker of a block, or null when there are no workers. */
  public static <W> W pick(long blockId, List<W> workers, ToLongFunction<W> workerId) {
    W best = null;
    long bestScore = Long.MIN_VALUE;
    for (W w : workers) {
      long s = score(blockId, workerId.applyAsLong(w));
      if (best == null || s > bestScore) {
        best = w;
        bestScore = s;
      }
    }
    return best;
  }
}
