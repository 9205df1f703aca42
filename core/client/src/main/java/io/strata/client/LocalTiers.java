package io.strata.client;

import io.strata.common.BlockFiles;
import io.strata.common.error.StrataException;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tier folders of the live workers on this machine, so that a cached block is read by opening
 * its file ({@link BlockFiles}) with no call to the worker: short-circuit without a round trip. A
 * worker's folders count only when this process sees them as folders (a worker in another container
 * reports folders that are not there, or that another user owns); when no local worker's folders
 * are visible, {@link #visible()} is false and the caller asks the worker for the block's path
 * instead, as before.
 *
 * <p>Thread-safe and lock-free on the read path: the folders of a worker are checked once per tier
 * list the master reports for it, then kept.
 */
final class LocalTiers {
  private final LiveWorkers workers;

  /** Per worker id: the tier folders last reported and those of them visible here. */
  private final Map<Long, Folders> byWorker = new ConcurrentHashMap<>();

  private record Folders(List<String> reported, List<Path> tiers) {}

  private final boolean verify;

  /**
   * @param verify whether block files opened are verified against their checksums
   */
  LocalTiers(LiveWorkers workers, boolean verify) {
    this.workers = workers;
    this.verify = verify;
  }

  /** Whether block files of this machine are verified against their checksums as they are read. */
  boolean verifies() {
    return verify;
  }

  /**
   * Opens the committed file of a block held by a live worker on this machine, or returns null when
   * no visible tier folder has it (not cached here, or evicted).
   *
   * @param length the block's length; a shorter file is not taken
   */
  LocalBlockFile open(long blockId, long length) throws StrataException {
    for (WorkerInfo w : workers.live()) {
      if (!LocalHost.isLocal(w.getAddress().getHost())) {
        continue;
      }
      for (Path tier : folders(w)) {
        try {
          return LocalBlockFile.open(BlockFiles.committed(tier, blockId), length, verify)
              .openedFor(w.getWorkerId(), w.getAddress());
        } catch (NoSuchFileException e) {
          // Not in this tier; try the next.
        } catch (IOException e) {
          // Unreadable here (moved between tiers, or not ours to read): the network has it.
          return null;
        }
      }
    }
    return null;
  }

  /** Whether a live worker on this machine has tier folders this process can see. */
  boolean visible() throws StrataException {
    for (WorkerInfo w : workers.live()) {
      if (LocalHost.isLocal(w.getAddress().getHost()) && !folders(w).isEmpty()) {
        return true;
      }
    }
    return false;
  }

  private List<Path> folders(WorkerInfo w) {
    List<String> reported = new ArrayList<>(w.getTiersCount());
    for (TierUsage t : w.getTiersList()) {
      reported.add(t.getDir());
    }
    Folders known = byWorker.get(w.getWorkerId());
    if (known != null && known.reported().equals(reported)) {
      return known.tiers();
    }
    List<Path> tiers = new ArrayList<>();
    for (String d : reported) {
      Path dir = d.isEmpty() ? null : Path.of(d);
      if (dir != null
          && dir.isAbsolute()
          && Files.isDirectory(BlockFiles.committedDir(dir))
          && Files.isReadable(BlockFiles.committedDir(dir))) {
        tiers.add(dir);
      }
    }
    byWorker.put(w.getWorkerId(), new Folders(reported, List.copyOf(tiers)));
    return tiers;
  }
}
