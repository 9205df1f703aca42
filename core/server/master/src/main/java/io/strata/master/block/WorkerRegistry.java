package io.strata.master.block;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockIds;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.BlockLocation;
import io.strata.proto.BlockReport;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerCommand;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The workers the master knows and which blocks each holds. State is in memory only: after a master
 * restart workers are told to register again and their full reports rebuild it.
 *
 * <p>Guarantees: a worker's id depends only on its address (host and data port), so it is the same
 * across worker and master restarts, and block placement by {@code WorkerHashing} stays stable.
 * Locations are only ever of live workers: a worker without a heartbeat for the timeout is marked
 * lost by {@link #markLostWorkers} and its locations are dropped. Blocks of deleted or freed files
 * are queued for removal on every worker holding them and handed out in that worker's next
 * heartbeat response; a block a worker reports whose file no longer exists is queued the same way,
 * so that workers do not keep blocks nobody can read.
 *
 * <p>Thread-safety: every method is safe to call from many threads; they serialise on this object
 * with short critical sections. The file-existence check runs outside that lock, so the namespace
 * may call into this class while holding its own lock without risk of deadlock.
 */
public final class WorkerRegistry {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerRegistry.class);

  private static final class Worker {
    final long id;
    WorkerAddress address;
    WorkerState state = WorkerState.WORKER_LIVE;
    List<TierUsage> tiers = List.of();
    WorkerCacheStats stats = WorkerCacheStats.getDefaultInstance();
    String release = "";
    int protocol;

    /** Stopping: not named as a source of new reads (see HeartbeatRequest.draining). */
    boolean draining;

    long registeredMs;
    long lastHeartbeatMs;
    final Set<Long> blocks = new HashSet<>();
    final Set<Long> pendingRemovals = new LinkedHashSet<>();

    Worker(long id) {
      this.id = id;
    }
  }

  /** The workers holding one block and the tier each keeps it in. */
  private static final class BlockHolders {
    final Map<Long, String> tierByWorker = new LinkedHashMap<>(4);
  }

  private final Duration timeout;
  private final LongPredicate fileExists;
  private final Map<Long, Worker> workers = new HashMap<>();

  /** See {@link #membershipVersion}; guarded by this. */
  private long membership;

  private final Map<String, Long> idsByAddress = new HashMap<>();
  private final TreeMap<Long, BlockHolders> locations = new TreeMap<>();

  /**
   * @param timeout time without a heartbeat after which a worker is lost
   * @param fileExists whether a file id names an existing file; called without this lock held
   */
  public WorkerRegistry(Duration timeout, LongPredicate fileExists, MeterRegistry registry) {
    this.timeout = timeout;
    this.fileExists = fileExists;
    Gauge.builder(MetricNames.MASTER_WORKERS, this, r -> r.count(WorkerState.WORKER_LIVE))
        .tag(MetricNames.TAG_STATE, "live")
        .description("Workers by state")
        .register(registry);
    Gauge.builder(MetricNames.MASTER_WORKERS, this, r -> r.count(WorkerState.WORKER_LOST))
        .tag(MetricNames.TAG_STATE, "lost")
        .description("Workers by state")
        .register(registry);
  }

  /**
   * Forgets every worker and block location: a master that takes the lead learns them afresh from
   * registrations (a worker heartbeating an unknown id is asked to register again), and one that
   * loses it must not keep a view that goes stale.
   */
  public synchronized void clear() {
    membership++;
    workers.clear();
    idsByAddress.clear();
    locations.clear();
  }

  private synchronized int count(WorkerState state) {
    int n = 0;
    for (Worker w : workers.values()) {
      if (w.state == state) {
        n++;
      }
    }
    return n;
  }

  /**
   * A number that changes whenever a worker registers, is lost, starts or stops draining, or the
   * registry is cleared: a cached list of eligible workers is stale once it moved.
   */
  public synchronized long membershipVersion() {
    return membership;
  }

  /** Registers (or re-registers) a worker with its full block report; returns its id. */
  public long register(RegisterWorkerRequest request) throws StrataException {
    WorkerAddress address = request.getAddress();
    if (address.getHost().isEmpty() || address.getDataPort() <= 0) {
      throw StrataException.invalidArgument(
          "A worker registered without a host or data port ("
              + address
              + "): set strata.worker.hostname");
    }
    Set<Long> orphans = orphans(request.getBlocksList());
    long now = System.currentTimeMillis();
    synchronized (this) {
      String key = address.getHost() + ":" + address.getDataPort();
      Long id = idsByAddress.get(key);
      if (id == null) {
        id = deriveId(key);
        idsByAddress.put(key, id);
      }
      Worker w = workers.computeIfAbsent(id, Worker::new);
      dropLocations(w);
      w.address = address;
      w.state = WorkerState.WORKER_LIVE;
      membership++;
      w.tiers = List.copyOf(request.getTiersList());
      w.release = request.getRelease();
      w.protocol = request.getRpcProtocolVersion();
      w.draining = false;
      w.registeredMs = now;
      w.lastHeartbeatMs = now;
      for (BlockReport b : request.getBlocksList()) {
        addBlock(w, b, orphans);
      }
      LOG.info(
          "Worker {} registered from {} ({} blocks, release {})",
          id,
          key,
          request.getBlocksCount(),
          request.getRelease());
      return id;
    }
  }

  /** A stable id for an address; probes past ids of other addresses on a hash collision. */
  private long deriveId(String key) {
    long id;
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
      id = 0;
      for (int i = 0; i < 8; i++) {
        id = (id << 8) | (h[i] & 0xFF);
      }
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
    id &= Long.MAX_VALUE >>> 12;
    while (id == 0 || idsByAddress.containsValue(id)) {
      id++;
    }
    return id;
  }

  /** Records a heartbeat; tells an unknown or lost worker to register again. */
  public HeartbeatResponse heartbeat(HeartbeatRequest request) {
    Set<Long> orphans = orphans(request.getAddedBlocksList());
    synchronized (this) {
      Worker w = workers.get(request.getWorkerId());
      if (w == null || w.state != WorkerState.WORKER_LIVE) {
        return HeartbeatResponse.newBuilder()
            .setCommand(WorkerCommand.WORKER_COMMAND_REGISTER)
            .build();
      }
      w.lastHeartbeatMs = System.currentTimeMillis();
      if (request.getDraining() && !w.draining) {
        LOG.info(
            "Worker {} at {} is draining: new reads go to other workers",
            w.id,
            w.address.getHost() + ":" + w.address.getDataPort());
      }
      if (w.draining != request.getDraining()) {
        membership++;
      }
      w.draining = request.getDraining();
      if (request.getTiersCount() > 0) {
        w.tiers = List.copyOf(request.getTiersList());
      }
      if (request.hasCacheStats()) {
        w.stats = request.getCacheStats();
      }
      for (long blockId : request.getRemovedBlockIdsList()) {
        removeLocation(w, blockId);
        w.pendingRemovals.remove(blockId);
      }
      for (BlockReport b : request.getAddedBlocksList()) {
        addBlock(w, b, orphans);
      }
      HeartbeatResponse.Builder response =
          HeartbeatResponse.newBuilder()
              .setCommand(WorkerCommand.WORKER_COMMAND_NONE)
              .addAllRemoveBlockIds(w.pendingRemovals);
      w.pendingRemovals.clear();
      return response.build();
    }
  }

  /**
   * Adds one block a worker has just cached. The commit is newer than a free of the block not yet
   * handed to the worker, so that removal is called off: otherwise a block freed and then loaded
   * again before the worker's next heartbeat would be ignored here and then removed.
   */
  public void commitBlock(long workerId, BlockReport block) throws StrataException {
    commitBlocks(workerId, List.of(block));
  }

  /** {@link #commitBlock} of each block, in order, under one lock. */
  public void commitBlocks(long workerId, List<BlockReport> blocks) throws StrataException {
    Set<Long> orphans = orphans(blocks);
    synchronized (this) {
      Worker w = workers.get(workerId);
      if (w == null || w.state != WorkerState.WORKER_LIVE) {
        throw new StrataException(
            ErrorCode.FAILED_PRECONDITION,
            "Worker "
                + workerId
                + " is not registered with this master; it registers again on its next heartbeat");
      }
      for (BlockReport block : blocks) {
        w.pendingRemovals.remove(block.getBlockId());
        addBlock(w, block, orphans);
      }
    }
  }

  private Set<Long> orphans(List<BlockReport> blocks) {
    Set<Long> orphans = new HashSet<>();
    Map<Long, Boolean> checked = new HashMap<>();
    for (BlockReport b : blocks) {
      long fileId = BlockIds.fileId(b.getBlockId());
      if (!checked.computeIfAbsent(fileId, fileExists::test)) {
        orphans.add(b.getBlockId());
      }
    }
    return orphans;
  }

  private void addBlock(Worker w, BlockReport b, Set<Long> orphans) {
    long blockId = b.getBlockId();
    if (orphans.contains(blockId) || w.pendingRemovals.contains(blockId)) {
      w.pendingRemovals.add(blockId);
      return;
    }
    w.blocks.add(blockId);
    locations.computeIfAbsent(blockId, k -> new BlockHolders()).tierByWorker.put(w.id, b.getTier());
  }

  private void removeLocation(Worker w, long blockId) {
    w.blocks.remove(blockId);
    BlockHolders holders = locations.get(blockId);
    if (holders != null) {
      holders.tierByWorker.remove(w.id);
      if (holders.tierByWorker.isEmpty()) {
        locations.remove(blockId);
      }
    }
  }

  private void dropLocations(Worker w) {
    for (long blockId : new ArrayList<>(w.blocks)) {
      removeLocation(w, blockId);
    }
  }

  /** Marks workers without a heartbeat for the timeout as lost; returns how many. */
  public int markLostWorkers() {
    long now = System.currentTimeMillis();
    int lost = 0;
    synchronized (this) {
      for (Worker w : workers.values()) {
        if (w.state == WorkerState.WORKER_LIVE && now - w.lastHeartbeatMs > timeout.toMillis()) {
          w.state = WorkerState.WORKER_LOST;
          membership++;
          int blocks = w.blocks.size();
          dropLocations(w);
          lost++;
          LOG.warn(
              "Worker {} at {}:{} is lost: no heartbeat for {} ms; dropped {} block " + "locations",
              w.id,
              w.address.getHost(),
              w.address.getDataPort(),
              now - w.lastHeartbeatMs,
              blocks);
        }
      }
    }
    return lost;
  }

  /** The live workers holding a block; draining ones are left out. */
  public synchronized List<BlockLocation> locations(long blockId) {
    BlockHolders holders = locations.get(blockId);
    if (holders == null) {
      return List.of();
    }
    List<BlockLocation> out = new ArrayList<>(holders.tierByWorker.size());
    for (Map.Entry<Long, String> e : holders.tierByWorker.entrySet()) {
      Worker w = workers.get(e.getKey());
      if (w.draining) {
        continue;
      }
      out.add(
          BlockLocation.newBuilder()
              .setWorkerId(w.id)
              .setAddress(w.address)
              .setTier(e.getValue())
              .build());
    }
    return out;
  }

  private NavigableMap<Long, BlockHolders> blocksOfFile(long fileId) {
    return locations.subMap(
        BlockIds.blockId(fileId, 0),
        true,
        BlockIds.blockId(fileId, (int) BlockIds.MAX_BLOCKS_PER_FILE - 1),
        true);
  }

  /** Bytes of a file held by at least one live worker. */
  public synchronized long cachedBytes(long fileId, long length, long blockSize) {
    long bytes = 0;
    for (long blockId : blocksOfFile(fileId).keySet()) {
      bytes += blockLength(BlockIds.index(blockId), length, blockSize);
    }
    return bytes;
  }

  private static long blockLength(int index, long length, long blockSize) {
    long offset = (long) index * blockSize;
    return Math.max(0, Math.min(blockSize, length - offset));
  }

  /** What {@link #free} queued for removal. */
  public record Freed(long blocks, long bytes) {}

  /**
   * Queues every cached block of the files for removal on the workers holding it and drops those
   * locations. Each file is given as {@code {fileId, length, blockSize}}.
   */
  public synchronized Freed free(Collection<long[]> files) {
    long blocks = 0;
    long bytes = 0;
    for (long[] f : files) {
      NavigableMap<Long, BlockHolders> held = blocksOfFile(f[0]);
      for (Map.Entry<Long, BlockHolders> e : held.entrySet()) {
        blocks++;
        bytes += blockLength(BlockIds.index(e.getKey()), f[1], f[2]);
        queueRemoval(e.getKey(), e.getValue());
      }
      held.clear();
    }
    return new Freed(blocks, bytes);
  }

  /** Queues removal of every block of deleted files on the workers holding them. */
  public synchronized void removeFiles(Collection<Long> fileIds) {
    for (long fileId : fileIds) {
      NavigableMap<Long, BlockHolders> held = blocksOfFile(fileId);
      for (Map.Entry<Long, BlockHolders> e : held.entrySet()) {
        queueRemoval(e.getKey(), e.getValue());
      }
      held.clear();
    }
  }

  private void queueRemoval(long blockId, BlockHolders holders) {
    for (long workerId : holders.tierByWorker.keySet()) {
      Worker w = workers.get(workerId);
      w.blocks.remove(blockId);
      w.pendingRemovals.add(blockId);
    }
  }

  /** Every worker ever registered since this master started, live or lost. */
  public synchronized List<WorkerInfo> workers() {
    List<WorkerInfo> out = new ArrayList<>();
    for (Worker w : workers.values()) {
      out.add(
          WorkerInfo.newBuilder()
              .setWorkerId(w.id)
              .setAddress(w.address)
              .setState(
                  w.draining && w.state == WorkerState.WORKER_LIVE
                      ? WorkerState.WORKER_DRAINING
                      : w.state)
              .addAllTiers(w.tiers)
              .setLastHeartbeatMs(w.lastHeartbeatMs)
              .setRegisteredMs(w.registeredMs)
              .setBlockCount(w.blocks.size())
              .setCacheStats(w.stats)
              .setRelease(w.release)
              .setProtocolVersion(w.protocol)
              .build());
    }
    out.sort((a, b) -> Long.compare(a.getWorkerId(), b.getWorkerId()));
    return out;
  }
}
