package io.strata.worker.block;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockChecksums;
import io.strata.common.BlockFiles;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.BlockReport;
import io.strata.proto.TierUsage;
import io.strata.server.common.FolderLock;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's cache of blocks over tiers of local folders (MEM, SSD, HDD), fastest first.
 *
 * <p>Guarantees:
 *
 * <ul>
 *   <li>A file in a tier's {@code blocks/} folder always holds a whole block: blocks are written to
 *       {@code tmp/}, their length checked, and then renamed into place. A crash leaves at most
 *       temporary files, which {@link #open} deletes.
 *   <li>A new block goes to the fastest tier with room. When none has room, the least recently used
 *       unpinned blocks of the fastest tier that can hold it are evicted. A block larger than every
 *       tier is not cached.
 *   <li>A pinned block (one being read) is never evicted or deleted; a removal asked for while it
 *       is pinned happens when its last reader unpins it.
 *   <li>A held block (a file's content written to the cache only, not yet in its under store) is
 *       never evicted, not even to fit a tier whose capacity was lowered; it goes only when {@link
 *       #release released} and then evicted, or {@link #remove removed}. The mark is an empty file
 *       {@code held/<blockId>} in the block's tier, so it survives a restart of the worker. Held
 *       blocks are written to the most durable tier, the last one configured.
 *   <li>Lookups are lock-free; LRU order, pins and space accounting share one lock whose critical
 *       sections do no I/O.
 * </ul>
 */
public final class TieredBlockStore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TieredBlockStore.class);
  private static final String TEMP_SUFFIX = ".tmp";

  /** Bytes of checksums kept in memory at most ({@link #checksums}). */
  private static final long CHECKSUM_CACHE_BYTES = 32L << 20;

  /** Buffer of a checksum computed by reading a written block file back. */
  private static final int CHECKSUM_READ_BUFFER = 256 << 10;

  private final List<StoreTier> tiers = new ArrayList<>();

  /** One per tier folder, held while the store is open: two workers must not share a tier. */
  private final List<FolderLock> folderLocks = new ArrayList<>();

  private final ConcurrentHashMap<Long, BlockMeta> blocks = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  // Serialises hold and release, so that a held mark and its marker file change together.
  // Taken before lock, never inside it; its sections do I/O, but only for those rare calls.
  private final Object markerLock = new Object();
  // Guarded by lock: blocks being written, and blocks whose files are being deleted. A block id
  // in either may not be written again until it leaves, so a deletion never hits a new file.
  private final Map<Long, TempBlock> writing = new HashMap<>();
  private final Set<Long> deleting = new HashSet<>();
  private final Counter evictedCounter;
  private final Counter cachedCounter;
  private final MeterRegistry registry;
  private final Cache<Long, Boolean> tooLargeLogged =
      Caffeine.newBuilder().maximumSize(10_000).build();
  private volatile BlockStoreListener listener = BlockStoreListener.NONE;
  private volatile BlockVerifier verifier = new BlockVerifier(this, true);

  /**
   * Checksums of blocks read lately, by block id, bounded by their size: a worker with a terabyte
   * of cache has 128 MB of checksums, more than its heap should hold; those not here are read from
   * their file (8 KiB for a 64 MiB block) when next needed.
   */
  private final Cache<Long, BlockChecksums> checksumCache =
      Caffeine.newBuilder()
          .maximumWeight(CHECKSUM_CACHE_BYTES)
          .weigher((Long id, BlockChecksums c) -> 64 + 4 * c.chunks())
          .build();

  private final java.util.concurrent.atomic.AtomicLong corruptBlocks =
      new java.util.concurrent.atomic.AtomicLong();

  /**
   * @param specs the tiers, fastest first; at least one
   * @param registry where the tier gauges and block counters are published
   */
  public TieredBlockStore(List<TierSpec> specs, MeterRegistry registry) {
    if (specs.isEmpty()) {
      throw new IllegalArgumentException("a block store needs at least one tier");
    }
    for (TierSpec spec : specs) {
      StoreTier tier = new StoreTier(spec);
      tiers.add(tier);
      Gauge.builder(MetricNames.WORKER_TIER_CAPACITY, tier, StoreTier::capacity)
          .description("Capacity of the tier")
          .baseUnit("bytes")
          .tag(MetricNames.TAG_TIER, spec.alias())
          .register(registry);
      Gauge.builder(MetricNames.WORKER_TIER_USED, tier, StoreTier::usedBytes)
          .description("Bytes of committed blocks in the tier")
          .baseUnit("bytes")
          .tag(MetricNames.TAG_TIER, spec.alias())
          .register(registry);
      Gauge.builder(MetricNames.WORKER_TIER_BLOCKS, tier, StoreTier::blockCount)
          .description("Committed blocks in the tier")
          .tag(MetricNames.TAG_TIER, spec.alias())
          .register(registry);
      Gauge.builder(MetricNames.WORKER_BLOCKS_HELD_BYTES, tier, StoreTier::heldBytes)
          .description(
              "Bytes of held blocks in the tier: written to the cache only, not yet "
                  + "persisted, never evicted")
          .baseUnit("bytes")
          .tag(MetricNames.TAG_TIER, spec.alias())
          .register(registry);
    }
    evictedCounter =
        Counter.builder(MetricNames.WORKER_BLOCKS_EVICTED)
            .description("Blocks evicted to make room for others")
            .register(registry);
    cachedCounter =
        Counter.builder(MetricNames.WORKER_BLOCKS_CACHED)
            .description("Blocks committed to the store")
            .register(registry);
    this.registry = registry;
    for (StoreTier tier : tiers) {
      corruptions(tier.spec().alias());
    }
  }

  private Counter corruptions(String tierAlias) {
    return Counter.builder(MetricNames.WORKER_BLOCK_CORRUPTIONS)
        .description("Cached blocks found not to match their checksums, and dropped")
        .tag(MetricNames.TAG_TIER, tierAlias)
        .register(registry);
  }

  /**
   * Turns the checks of blocks before they are served on or off ({@code
   * strata.worker.block.verify}).
   */
  public void verifyBlocks(boolean on) {
    verifier = new BlockVerifier(this, on);
  }

  /**
   * A block's checksums, from memory or from the tier's checksum file.
   *
   * @return null for a block cached before blocks had checksums (no file)
   * @throws IOException when the file cannot be read or is damaged
   */
  public BlockChecksums checksums(BlockMeta block) throws IOException {
    BlockChecksums c = checksumCache.getIfPresent(block.blockId());
    if (c == null) {
      c = BlockChecksums.read(block.tier().checksums(block.blockId()));
      if (c != null) {
        checksumCache.put(block.blockId(), c);
      }
    }
    return c;
  }

  /** Keeps checksums the scrubber computed for a block cached before blocks had them. */
  void keepChecksums(BlockMeta block, BlockChecksums c) throws IOException {
    c.write(block.tier().checksums(block.blockId()));
    checksumCache.put(block.blockId(), c);
  }

  /** What checks cached blocks against their checksums before they are served. */
  public BlockVerifier verifier() {
    return verifier;
  }

  /** Sets who is told of committed and removed blocks. */
  public void setListener(BlockStoreListener listener) {
    this.listener = listener == null ? BlockStoreListener.NONE : listener;
  }

  /**
   * Prepares the tier folders and loads the committed blocks: deletes everything in each {@code
   * tmp/}, lists each {@code blocks/} once, and removes files that are not blocks. Blocks are
   * ordered for eviction by their files' modification times. Blocks with a marker in their tier's
   * {@code held/} are held again, and markers of blocks that are gone are deleted. Call once,
   * before anything else.
   *
   * @throws StrataException when a tier folder cannot be created or written; the message names the
   *     configuration key and the folder
   */
  public OpenResult open() throws StrataException {
    int tempRemoved = 0;
    int strayRemoved = 0;
    int evicted = 0;
    int held = 0;
    for (StoreTier tier : tiers) {
      TierFolder.prepare(tier);
      lockFolder(tier);
      tempRemoved += TierFolder.clearTemp(tier);
      List<TierFolder.Found> found = new ArrayList<>();
      strayRemoved += TierFolder.listBlocks(tier, blocks, found);
      Set<Long> inTier = new HashSet<>();
      for (TierFolder.Found f : found) {
        inTier.add(f.blockId());
      }
      strayRemoved += TierFolder.clearStaleChecksums(tier, inTier);
      List<Long> markers = new ArrayList<>();
      strayRemoved += TierFolder.listHeld(tier, markers);
      found.sort(Comparator.comparingLong(TierFolder.Found::mtime));
      List<BlockMeta> over = new ArrayList<>();
      List<Long> staleMarkers = new ArrayList<>();
      synchronized (lock) {
        for (TierFolder.Found f : found) {
          BlockMeta meta = new BlockMeta(f.blockId(), f.length(), tier, f.path());
          tier.add(meta);
          blocks.put(f.blockId(), meta);
        }
        for (long id : markers) {
          BlockMeta meta = blocks.get(id);
          // A marker whose block is gone (a crash came between writing the marker and renaming
          // the block in) or was kept in a faster tier as a duplicate holds nothing.
          if (meta != null && meta.tier() == tier) {
            tier.hold(meta);
            held++;
          } else {
            staleMarkers.add(id);
          }
        }
        // A tier whose capacity was lowered since the last run holds too much: drop the oldest
        // of the blocks that can be fetched again; held blocks are the only copy of their bytes.
        for (BlockMeta b : tier.inLruOrder()) {
          if (tier.usedBytes() <= tier.capacity()) {
            break;
          }
          if (!b.held) {
            detach(b);
            over.add(b);
          }
        }
      }
      if (tier.usedBytes() > tier.capacity()) {
        LOG.warn(
            "Tier {} holds {} bytes, more than its capacity of {} bytes, of which {} bytes "
                + "are held blocks, written to the cache only and not yet persisted; they are kept. "
                + "Give the tier more room ({}), or persist or delete those files",
            tier.spec().alias(),
            tier.usedBytes(),
            tier.capacity(),
            tier.heldBytes(),
            TierFolder.capacityKey(tier));
      }
      for (long id : staleMarkers) {
        TierFolder.deleteMarker(tier, id);
      }
      strayRemoved += staleMarkers.size();
      evicted += over.size();
      finishDeletes(over, false);
    }
    long bytes = 0;
    for (BlockMeta b : blocks.values()) {
      bytes += b.length();
    }
    OpenResult result = new OpenResult(blocks.size(), bytes, tempRemoved, strayRemoved, evicted);
    LOG.info(
        "Block store opened: {} blocks ({} bytes, {} held) in {} tiers; removed {} "
            + "temporary and {} stray files; evicted {} blocks over capacity",
        result.blocks(),
        bytes,
        held,
        tiers.size(),
        tempRemoved,
        strayRemoved,
        evicted);
    return result;
  }

  private void lockFolder(StoreTier tier) throws StrataException {
    TierSpec spec = tier.spec();
    try {
      folderLocks.add(
          FolderLock.acquire(spec.dir(), "worker " + spec.alias() + " tier", spec.dirKey()));
    } catch (IOException e) {
      close();
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, e.getMessage(), e);
    }
  }

  /** The committed block with that id, or null; does not pin it or change its LRU position. */
  public BlockMeta get(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    return meta == null || meta.removePending ? null : meta;
  }

  /** True when the block is committed and not marked for removal. */
  public boolean contains(long blockId) {
    return get(blockId) != null;
  }

  /**
   * Marks a block as just used and returns it, or null when it is not cached. The block is not
   * pinned: use this when the caller hands out the file path rather than reading it.
   */
  public BlockMeta touch(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    if (meta == null) {
      return null;
    }
    synchronized (lock) {
      if (!meta.live || meta.removePending) {
        return null;
      }
      meta.tier().touch(blockId);
    }
    return meta;
  }

  /**
   * Pins a block for reading and marks it as just used, or returns null when it is not cached.
   * Every successful pin must be followed by exactly one {@link #unpin}.
   */
  public BlockMeta pin(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    if (meta == null) {
      return null;
    }
    synchronized (lock) {
      if (!meta.live || meta.removePending) {
        return null;
      }
      meta.pins++;
      meta.tier().touch(blockId);
    }
    return meta;
  }

  /** Blocks dropped because they did not match their checksums, since the store opened. */
  public long corruptBlocks() {
    return corruptBlocks.get();
  }

  /** The ids of the committed blocks now. */
  List<Long> blockIds() {
    return new ArrayList<>(blocks.keySet());
  }

  /** Releases a pin; deletes the block when a removal was waiting for its last reader. */
  public void unpin(BlockMeta meta) {
    List<BlockMeta> dropped = null;
    synchronized (lock) {
      if (meta.pins <= 0) {
        throw new IllegalStateException("unpin without pin: " + meta);
      }
      meta.pins--;
      if (meta.pins == 0 && meta.removePending && meta.live) {
        detach(meta);
        dropped = List.of(meta);
      }
    }
    if (dropped != null) {
      finishDeletes(dropped, true);
    }
  }

  /** How many readers hold the block; 0 when it is not cached. For tests and diagnostics. */
  public int pinCount(long blockId) {
    BlockMeta meta = blocks.get(blockId);
    if (meta == null) {
      return 0;
    }
    synchronized (lock) {
      return meta.pins;
    }
  }

  /**
   * Reserves space for a new block and returns the temporary file to write it to. Evicts least
   * recently used blocks when no tier has room.
   *
   * @return empty when the block should not be cached now: it is already cached or being written or
   *     deleted, it is larger than every tier, or pinned or held blocks leave no room
   */
  public Optional<TempBlock> createTempBlock(long blockId, long length) throws IOException {
    return Optional.ofNullable(reserve(blockId, length, tiers, false));
  }

  /**
   * Reserves space for a block that is held from the moment it is committed (see {@link #hold}), in
   * the most durable tier: the last one configured. Evicts least recently used blocks of that tier,
   * neither pinned nor held, when it has no room.
   *
   * @param length the bytes to reserve; the block may be committed shorter, with {@link
   *     #commit(TempBlock, long)}
   * @return empty when that tier cannot make room: held and pinned blocks fill it, or the block is
   *     larger than the whole tier
   * @throws StrataException FAILED_PRECONDITION when the block is already cached, or being written
   *     or deleted
   */
  public Optional<TempBlock> createHeldTempBlock(long blockId, long length) throws IOException {
    return Optional.ofNullable(reserve(blockId, length, List.of(durableTier()), true));
  }

  /** The tier of held blocks: the last, which is the slowest and most durable. */
  private StoreTier durableTier() {
    return tiers.get(tiers.size() - 1);
  }

  /**
   * Reserves space in the first of {@code candidates} with room, else in the first that can make
   * room by evicting; returns null when none can.
   */
  private TempBlock reserve(long blockId, long length, List<StoreTier> candidates, boolean held)
      throws IOException {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length + " for block " + blockId);
    }
    List<BlockMeta> victims = List.of();
    TempBlock temp;
    // The file systems' free space is read before the lock: a statvfs per tier, never under it.
    long[] usable = new long[candidates.size()];
    for (int i = 0; i < usable.length; i++) {
      usable[i] = candidates.get(i).usableSpace();
    }
    synchronized (lock) {
      if (blocks.containsKey(blockId)
          || writing.containsKey(blockId)
          || deleting.contains(blockId)) {
        if (held) {
          throw new StrataException(
              ErrorCode.FAILED_PRECONDITION,
              "Block "
                  + blockId
                  + " is already stored, being written or being deleted on this worker; a file's "
                  + "blocks are written once: create the file again to write new content");
        }
        return null;
      }
      StoreTier target = null;
      for (int i = 0; i < candidates.size(); i++) {
        StoreTier t = candidates.get(i);
        if (t.roomFor(usable[i]) >= length) {
          target = t;
          break;
        }
      }
      boolean fitsSomewhere = false;
      if (target == null) {
        for (int i = 0; i < candidates.size(); i++) {
          StoreTier t = candidates.get(i);
          if (t.capacity() < length) {
            continue;
          }
          fitsSomewhere = true;
          long room = t.roomFor(usable[i]);
          List<BlockMeta> v = t.victimsFor(length - room);
          if (room < t.freeBytes()) {
            diskLimits(t, usable[i], blockId, length);
          }
          if (v != null) {
            target = t;
            victims = v;
            break;
          }
        }
      }
      if (target == null) {
        if (!fitsSomewhere && tooLargeLogged.asMap().putIfAbsent(blockId, Boolean.TRUE) == null) {
          LOG.debug(
              "Block {} ({} bytes) is larger than every tier it may go to; not caching it",
              blockId,
              length);
        } else if (fitsSomewhere) {
          LOG.debug(
              "No room for block {} ({} bytes): the blocks that could be evicted are "
                  + "being read or held until persisted",
              blockId,
              length);
        }
        return null;
      }
      for (BlockMeta v : victims) {
        detach(v);
      }
      target.reserve(length);
      temp =
          new TempBlock(
              blockId, length, target, target.tmpDir().resolve(blockId + TEMP_SUFFIX), held);
      writing.put(blockId, temp);
    }
    if (!victims.isEmpty()) {
      evictedCounter.increment(victims.size());
      LOG.debug(
          "Evicted {} blocks from tier {} for block {}", victims.size(), temp.tierAlias(), blockId);
      finishDeletes(victims, true);
    }
    return temp;
  }

  /**
   * Makes a written block readable: checks that its file has exactly the reserved length and
   * renames it into the tier's {@code blocks/} folder. On any failure the temporary file is deleted
   * and the reservation released.
   */
  public BlockMeta commit(TempBlock temp) throws StrataException {
    return commit(temp, temp.length());
  }

  /**
   * Makes a written block of {@code length} bytes readable, as {@link #commit(TempBlock)} does,
   * when fewer bytes than were reserved were written (the last block of a file whose length was not
   * known up front); the rest of the reservation is released. A held block (see {@link
   * #createHeldTempBlock}) is held from the moment it is readable.
   *
   * @param length at most {@link TempBlock#length()}
   */
  public BlockMeta commit(TempBlock temp, long length) throws StrataException {
    return commit(temp, length, null);
  }

  /**
   * Makes a written block of {@code length} bytes readable, as {@link #commit(TempBlock, long)}
   * does, with the checksums its writer computed as the bytes came in; the checksums are written to
   * the tier's checksum folder before the block is renamed into place, so a committed block always
   * has them. When {@code checksums} is null they are computed from the written file.
   *
   * @param checksums of exactly the block's bytes, or null
   */
  public BlockMeta commit(TempBlock temp, long length, BlockChecksums checksums)
      throws StrataException {
    if (length < 0 || length > temp.length()) {
      abort(temp);
      throw new IllegalArgumentException(
          "block "
              + temp.blockId()
              + " committed with "
              + length
              + " bytes, but "
              + temp.length()
              + " were reserved");
    }
    Path target = BlockFiles.committed(temp.tier().spec().dir(), temp.blockId());
    // The marker goes first: a crash before the rename leaves a marker without a block, which
    // open() deletes, never a held block without its marker.
    Path marker = temp.isHeld() ? temp.tier().heldMarker(temp.blockId()) : null;
    try {
      long size = Files.size(temp.path());
      if (size != length) {
        throw new StrataException(
            ErrorCode.INTERNAL,
            "Block "
                + temp.blockId()
                + " written to "
                + temp.path()
                + " has "
                + size
                + " bytes, expected "
                + length
                + "; the copy was discarded and the block will be fetched again");
      }
      if (checksums == null) {
        checksums = BlockChecksums.compute(temp.path(), ByteBuffer.allocate(CHECKSUM_READ_BUFFER));
      }
      if (checksums.blockLength() != length) {
        throw new StrataException(
            ErrorCode.INTERNAL,
            "Block "
                + temp.blockId()
                + " has "
                + length
                + " bytes but checksums of "
                + checksums.blockLength()
                + "; the copy was discarded and the block will be fetched again");
      }
      // A crash after this and before the rename leaves checksums without a block, which open()
      // deletes; never a committed block without its checksums.
      checksums.write(temp.tier().checksums(temp.blockId()));
      if (marker != null) {
        TierFolder.writeMarker(marker);
      }
      Files.move(temp.path(), target, StandardCopyOption.ATOMIC_MOVE);
    } catch (StrataException e) {
      abortWithMarker(temp, marker);
      throw e;
    } catch (IOException e) {
      abortWithMarker(temp, marker);
      IOException full = writeFailure(temp, e);
      if (full instanceof StrataException s) {
        throw s;
      }
      throw new StrataException(
          ErrorCode.INTERNAL,
          "Cannot commit block "
              + temp.blockId()
              + " from "
              + temp.path()
              + " to "
              + target
              + ": "
              + e,
          e);
    }
    BlockMeta meta = new BlockMeta(temp.blockId(), length, temp.tier(), target);
    checksumCache.put(meta.blockId(), checksums);
    synchronized (lock) {
      temp.finished = true;
      writing.remove(temp.blockId());
      temp.tier().unreserve(temp.length());
      temp.tier().add(meta);
      if (temp.isHeld()) {
        temp.tier().hold(meta);
      }
      blocks.put(meta.blockId(), meta);
    }
    cachedCounter.increment();
    listener.blockCommitted(meta, temp.isCallerTellingMaster());
    return meta;
  }

  private void abortWithMarker(TempBlock temp, Path marker) {
    abort(temp);
    if (marker != null) {
      TierFolder.deleteMarker(temp.tier(), temp.blockId());
    }
  }

  /**
   * Holds a committed block: it is never evicted until {@link #release released}, and stays held
   * across a restart of the worker (see {@link TierFolder#writeMarker} for a power cut). Holding a
   * held block does nothing.
   *
   * @return false when the block is not cached (or is being removed)
   * @throws StrataException when the marker cannot be written; the block is then not held
   */
  public boolean hold(long blockId) throws StrataException {
    synchronized (markerLock) {
      // Pinned, so that it is neither evicted nor deleted while its marker is written.
      BlockMeta meta = pin(blockId);
      if (meta == null) {
        return false;
      }
      try {
        synchronized (lock) {
          if (meta.held) {
            return true;
          }
        }
        Path marker = meta.tier().heldMarker(blockId);
        try {
          TierFolder.writeMarker(marker);
        } catch (IOException e) {
          throw new StrataException(
              ErrorCode.INTERNAL,
              "Cannot hold block "
                  + blockId
                  + ": cannot write its marker "
                  + marker
                  + ": "
                  + e
                  + ". Make the tier folder "
                  + meta.tier().spec().dir()
                  + " writable ("
                  + meta.tier().spec().dirKey()
                  + ")",
              e);
        }
        synchronized (lock) {
          // A removal asked for meanwhile happens at the unpin below, and deletes the marker.
          meta.tier().hold(meta);
        }
        return true;
      } finally {
        unpin(meta);
      }
    }
  }

  /**
   * Stops holding blocks: they are evicted like any other from now on, and their markers are
   * deleted. Ids of blocks that are not cached or not held are ignored.
   *
   * @return how many of the blocks were held
   */
  public int release(Collection<Long> blockIds) {
    synchronized (markerLock) {
      List<BlockMeta> released = new ArrayList<>();
      synchronized (lock) {
        for (long id : blockIds) {
          BlockMeta meta = blocks.get(id);
          if (meta != null && meta.live && meta.tier().release(meta)) {
            released.add(meta);
          }
        }
      }
      for (BlockMeta meta : released) {
        TierFolder.deleteMarker(meta.tier(), meta.blockId());
      }
      return released.size();
    }
  }

  /** True when the block is committed, not marked for removal, and held. */
  public boolean isHeld(long blockId) {
    BlockMeta meta = get(blockId);
    if (meta == null) {
      return false;
    }
    synchronized (lock) {
      return meta.live && meta.held;
    }
  }

  /** The alias of the tier that held blocks are written to: the last one configured. */
  public String durableTierAlias() {
    return durableTier().spec().alias();
  }

  /** Discards a block being written; does nothing when it was already committed or aborted. */
  public void abort(TempBlock temp) {
    synchronized (lock) {
      if (temp.finished) {
        return;
      }
      temp.finished = true;
    }
    try {
      Files.deleteIfExists(temp.path());
    } catch (IOException e) {
      LOG.warn("Cannot delete temporary block file {}: {}", temp.path(), e.toString());
    }
    synchronized (lock) {
      writing.remove(temp.blockId());
      temp.tier().unreserve(temp.length());
    }
  }

  /**
   * Removes blocks, held or not (a held block's marker goes with it). A block being read is hidden
   * from new readers at once and deleted after its last reader unpins it.
   *
   * @return how many of the ids were cached (removed now or marked for removal)
   */
  public int remove(Collection<Long> blockIds) {
    int count = 0;
    List<BlockMeta> dropped = new ArrayList<>();
    synchronized (lock) {
      for (long id : blockIds) {
        BlockMeta meta = blocks.get(id);
        if (meta == null || !meta.live || meta.removePending) {
          continue;
        }
        count++;
        if (meta.pins > 0) {
          meta.removePending = true;
        } else {
          detach(meta);
          dropped.add(meta);
        }
      }
    }
    finishDeletes(dropped, true);
    return count;
  }

  /**
   * Drops a cached block whose bytes do not match its checksums, so that no reader is given them
   * again: counted in {@code strata_worker_block_corruptions_total} and logged once. A reader then
   * fetches the block again from the under store; a held block (written to the cache only) had no
   * other copy, which the log says.
   *
   * @param how what did not match, for the log
   */
  public void dropCorrupted(BlockMeta meta, String how) {
    if (remove(List.of(meta.blockId())) == 0) {
      // Dropped already by another reader that found it too.
      return;
    }
    corruptions(meta.tierAlias()).increment();
    corruptBlocks.incrementAndGet();
    LOG.error(
        "Block {} in tier {} ({}) does not match its checksums: {}. Dropped it from the cache;{}",
        meta.blockId(),
        meta.tierAlias(),
        meta.path(),
        how,
        meta.held
            ? " it was written to the cache only and not yet persisted, so its file's bytes are"
                + " lost"
            : " reads fetch it again from the under store");
  }

  /**
   * Logs, at most once a minute for each tier, that the tier's file system and not its capacity is
   * what makes room for a block: its capacity is set larger than what the disk holds for it.
   */
  private void diskLimits(StoreTier t, long usable, long blockId, long length) {
    long now = System.nanoTime();
    if (t.diskLimitLoggedNanos != 0 && now - t.diskLimitLoggedNanos < 60_000_000_000L) {
      return;
    }
    t.diskLimitLoggedNanos = now;
    LOG.warn(
        "Tier {}'s file system ({}) can take {} more bytes, less than its capacity ({}, {} bytes)"
            + " leaves: blocks are evicted to make room for block {} ({} bytes) and those after"
            + " it. Set {} to what that file system holds for the tier",
        t.spec().alias(),
        t.spec().dir(),
        Math.max(0, usable),
        TierFolder.capacityKey(t),
        t.capacity(),
        blockId,
        length,
        TierFolder.capacityKey(t));
  }

  /**
   * The error for a block of {@code bytes} that tier {@code alias} could not take because its file
   * system is full and none of its blocks could be evicted for it, or null when the file system has
   * the room (the capacity, held or pinned blocks are what refused it).
   */
  public StrataException fileSystemFull(String alias, long blockId, long bytes) {
    for (StoreTier t : tiers) {
      if (t.spec().alias().equals(alias)) {
        long usable = t.usableSpace();
        synchronized (lock) {
          if (t.roomFor(usable) >= bytes || t.roomFor(usable) >= t.freeBytes()) {
            return null;
          }
        }
        return fullFileSystem(blockId, t, null);
      }
    }
    return null;
  }

  /**
   * The error for a block that tier {@code tier}'s full file system could not take: refused before
   * it was written ({@code cause} null: nothing could be evicted for it), or failed while it was
   * written ({@code cause}, the write's ENOSPC).
   */
  private static StrataException fullFileSystem(long blockId, StoreTier tier, IOException cause) {
    return new StrataException(
        ErrorCode.RESOURCE_EXHAUSTED,
        io.strata.common.error.PosixError.ENOSPC,
        "No room for block "
            + blockId
            + ": the file system of tier "
            + tier.spec().alias()
            + "'s folder "
            + tier.spec().dir()
            + " is full, although the tier's capacity ("
            + TierFolder.capacityKey(tier)
            + ", "
            + tier.capacity()
            + " bytes) is not reached"
            + (cause == null ? ", and no block of the tier could be evicted for it" : "")
            + "; the block was not kept. Free space on that file system, or set "
            + TierFolder.capacityKey(tier)
            + " to what it holds",
        cause);
  }

  /**
   * The error for a write of {@code temp} that failed: when the tier's file system is full (ENOSPC,
   * although the tier's capacity said there was room), RESOURCE_EXHAUSTED with ENOSPC, which a
   * mount reports as "No space left on device" and the proxy as 503, naming the folder and what to
   * do; any other failure unchanged.
   */
  public IOException writeFailure(TempBlock temp, IOException e) {
    String m = e.getMessage();
    if (m == null || !m.contains("No space left on device")) {
      return e;
    }
    return fullFileSystem(temp.blockId(), temp.tier(), e);
  }

  /** Under the lock: makes a block unreachable and stops counting its space. */
  private void detach(BlockMeta meta) {
    meta.live = false;
    blocks.remove(meta.blockId(), meta);
    meta.tier().remove(meta);
    deleting.add(meta.blockId());
  }

  /** Outside the lock: deletes the files of detached blocks and tells the listener. */
  private void finishDeletes(List<BlockMeta> dropped, boolean notify) {
    if (dropped.isEmpty()) {
      return;
    }
    for (BlockMeta meta : dropped) {
      checksumCache.invalidate(meta.blockId());
      try {
        Files.deleteIfExists(meta.path());
        Files.deleteIfExists(meta.tier().checksums(meta.blockId()));
      } catch (IOException e) {
        LOG.warn("Cannot delete the file of {}: {}", meta, e.toString());
      }
      // Stable: a detached block is never held or released again.
      if (meta.held) {
        TierFolder.deleteMarker(meta.tier(), meta.blockId());
      }
    }
    synchronized (lock) {
      for (BlockMeta meta : dropped) {
        deleting.remove(meta.blockId());
      }
    }
    if (notify) {
      for (BlockMeta meta : dropped) {
        listener.blockRemoved(meta.blockId());
      }
    }
  }

  /** Every committed block, for a full report to the master. */
  public List<BlockReport> blockReport() {
    List<BlockReport> report = new ArrayList<>(blocks.size());
    for (BlockMeta b : blocks.values()) {
      report.add(toReport(b));
    }
    return report;
  }

  /** The master's view of one block. */
  public static BlockReport toReport(BlockMeta b) {
    return BlockReport.newBuilder()
        .setBlockId(b.blockId())
        .setLength(b.length())
        .setTier(b.tierAlias())
        .build();
  }

  /** Capacity and use of every tier, fastest first. */
  public List<TierUsage> tierUsage() {
    List<TierUsage> usage = new ArrayList<>(tiers.size());
    for (StoreTier t : tiers) {
      usage.add(
          TierUsage.newBuilder()
              .setAlias(t.spec().alias())
              .setCapacityBytes(t.capacity())
              .setUsedBytes(t.usedBytes())
              .setDir(t.spec().dir().toAbsolutePath().toString())
              .build());
    }
    return usage;
  }

  /** Bytes used by committed blocks in the tier with that alias; 0 when there is none. */
  public long usedBytes(String alias) {
    for (StoreTier t : tiers) {
      if (t.spec().alias().equals(alias)) {
        return t.usedBytes();
      }
    }
    return 0;
  }

  /** The capacity of the tier with that alias; 0 when there is none. */
  public long capacity(String alias) {
    for (StoreTier t : tiers) {
      if (t.spec().alias().equals(alias)) {
        return t.capacity();
      }
    }
    return 0;
  }

  /** Bytes of held blocks in the tier with that alias; 0 when there is none. */
  public long heldBytes(String alias) {
    for (StoreTier t : tiers) {
      if (t.spec().alias().equals(alias)) {
        return t.heldBytes();
      }
    }
    return 0;
  }

  /** Committed blocks over all tiers. */
  public int blockCount() {
    return blocks.size();
  }

  /** Blocks evicted since the store was created. */
  public long evictedBlocks() {
    return (long) evictedCounter.count();
  }

  @Override
  public void close() {
    // Nothing is buffered: committed blocks are files, and tmp/ is cleared by the next open.
    for (FolderLock l : folderLocks) {
      try {
        l.close();
      } catch (IOException e) {
        LOG.debug("Releasing a tier folder lock failed: {}", e.toString());
      }
    }
    folderLocks.clear();
  }
}
