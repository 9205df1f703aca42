package io.strata.worker.block;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.BlockFiles;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.BlockReport;
import io.strata.proto.TierUsage;
import io.strata.server.common.FolderLock;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
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
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's cache of blocks over tiers of local folders (MEM, SSD, HDD), fastest first.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>A file in a tier's {@code blocks/} folder always holds a whole block: blocks are
 *       written to {@code tmp/}, their length checked, and then renamed into place. A crash
 *       leaves at most temporary files, which {@link #open} deletes.
 *   <li>A new block goes to the fastest tier with room. When none has room, the least recently
 *       used unpinned blocks of the fastest tier that can hold it are evicted. A block larger
 *       than every tier is not cached.
 *   <li>A pinned block (one being read) is never evicted or deleted; a removal asked for while
 *       it is pinned happens when its last reader unpins it.
 *   <li>Lookups are lock-free; LRU order, pins and space accounting share one lock whose
 *       critical sections do no I/O.
 * </ul>
 */
public final class TieredBlockStore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TieredBlockStore.class);
  private static final String TEMP_SUFFIX = ".tmp";

  private final List<StoreTier> tiers = new ArrayList<>();
  /** One per tier folder, held while the store is open: two workers must not share a tier. */
  private final List<FolderLock> folderLocks = new ArrayList<>();
  private final ConcurrentHashMap<Long, BlockMeta> blocks = new ConcurrentHashMap<>();
  private final Object lock = new Object();
  // Guarded by lock: blocks being written, and blocks whose files are being deleted. A block id
  // in either may not be written again until it leaves, so a deletion never hits a new file.
  private final Map<Long, TempBlock> writing = new HashMap<>();
  private final Set<Long> deleting = new HashSet<>();
  private final Counter evictedCounter;
  private final Counter cachedCounter;
  private final Cache<Long, Boolean> tooLargeLogged =
      Caffeine.newBuilder().maximumSize(10_000).build();
  private volatile BlockStoreListener listener = BlockStoreListener.NONE;

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
          .description("Capacity of the tier").baseUnit("bytes")
          .tag(MetricNames.TAG_TIER, spec.alias()).register(registry);
      Gauge.builder(MetricNames.WORKER_TIER_USED, tier, StoreTier::usedBytes)
          .description("Bytes of committed blocks in the tier").baseUnit("bytes")
          .tag(MetricNames.TAG_TIER, spec.alias()).register(registry);
      Gauge.builder(MetricNames.WORKER_TIER_BLOCKS, tier, StoreTier::blockCount)
          .description("Committed blocks in the tier")
          .tag(MetricNames.TAG_TIER, spec.alias()).register(registry);
    }
    evictedCounter = Counter.builder(MetricNames.WORKER_BLOCKS_EVICTED)
        .description("Blocks evicted to make room for others").register(registry);
    cachedCounter = Counter.builder(MetricNames.WORKER_BLOCKS_CACHED)
        .description("Blocks committed to the store").register(registry);
  }

  /** Sets who is told of committed and removed blocks. */
  public void setListener(BlockStoreListener listener) {
    this.listener = listener == null ? BlockStoreListener.NONE : listener;
  }

  /**
   * Prepares the tier folders and loads the committed blocks: deletes everything in each
   * {@code tmp/}, lists each {@code blocks/} once, and removes files that are not blocks. Blocks
   * are ordered for eviction by their files' modification times. Call once, before anything
   * else.
   *
   * @throws StrataException when a tier folder cannot be created or written; the message names
   *     the configuration key and the folder
   */
  public OpenResult open() throws StrataException {
    int tempRemoved = 0;
    int strayRemoved = 0;
    int evicted = 0;
    for (StoreTier tier : tiers) {
      prepare(tier);
      lockFolder(tier);
      tempRemoved += clearTemp(tier);
      List<Found> found = new ArrayList<>();
      strayRemoved += list(tier, found);
      found.sort(Comparator.comparingLong(Found::mtime));
      List<BlockMeta> over = new ArrayList<>();
      synchronized (lock) {
        for (Found f : found) {
          BlockMeta meta = new BlockMeta(f.blockId, f.length, tier, f.path);
          tier.add(meta);
          blocks.put(f.blockId, meta);
        }
        // A tier whose capacity was lowered since the last run holds too much: drop the oldest.
        for (BlockMeta b : tier.inLruOrder()) {
          if (tier.usedBytes() <= tier.capacity()) {
            break;
          }
          detach(b);
          over.add(b);
        }
      }
      evicted += over.size();
      finishDeletes(over, false);
    }
    long bytes = 0;
    for (BlockMeta b : blocks.values()) {
      bytes += b.length();
    }
    OpenResult result = new OpenResult(blocks.size(), bytes, tempRemoved, strayRemoved, evicted);
    LOG.info("Block store opened: {} blocks ({} bytes) in {} tiers; removed {} temporary and {} "
        + "stray files; evicted {} blocks over capacity", result.blocks(), bytes, tiers.size(),
        tempRemoved, strayRemoved, evicted);
    return result;
  }

  private record Found(long blockId, long length, long mtime, Path path) {}

  private void lockFolder(StoreTier tier) throws StrataException {
    TierSpec spec = tier.spec();
    try {
      folderLocks.add(FolderLock.acquire(spec.dir(), "worker " + spec.alias() + " tier",
          spec.dirKey()));
    } catch (IOException e) {
      close();
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, e.getMessage(), e);
    }
  }

  private static void prepare(StoreTier tier) throws StrataException {
    TierSpec spec = tier.spec();
    try {
      Files.createDirectories(tier.blocksDir());
      Files.createDirectories(tier.tmpDir());
      Path probe = tier.tmpDir().resolve(".write-probe");
      Files.write(probe, new byte[] {1});
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, "Cannot use folder " + spec.dir()
          + " of tier " + spec.alias() + " (" + spec.dirKey() + "): " + e
          + ". Make it writable by this user, or point " + spec.dirKey()
          + " at a writable folder.", e);
    }
  }

  private static int clearTemp(StoreTier tier) throws StrataException {
    int removed = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.tmpDir())) {
      for (Path p : dir) {
        deleteRecursively(p);
        removed++;
      }
    } catch (IOException e) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, "Cannot clear " + tier.tmpDir()
          + " of tier " + tier.spec().alias() + " (" + tier.spec().dirKey() + "): " + e, e);
    }
    return removed;
  }

  private static void deleteRecursively(Path p) throws IOException {
    if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      try (Stream<Path> walk = Files.walk(p)) {
        for (Path q : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
          Files.deleteIfExists(q);
        }
      }
    } else {
      Files.deleteIfExists(p);
    }
  }

  /** Lists a tier's blocks folder into {@code found}; returns the stray files removed. */
  private int list(StoreTier tier, List<Found> found) throws StrataException {
    int stray = 0;
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(tier.blocksDir())) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        Long id = parseBlockId(name);
        BasicFileAttributes attrs;
        try {
          attrs = Files.readAttributes(p, BasicFileAttributes.class,
              java.nio.file.LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
          continue;
        }
        if (id == null || !attrs.isRegularFile()) {
          LOG.warn("Removing {} from tier {}: its name is not a block id", p,
              tier.spec().alias());
          deleteRecursively(p);
          stray++;
        } else if (blocks.containsKey(id)) {
          // Also in a faster tier (copied there before a crash): keep the faster copy.
          LOG.warn("Removing {}: block {} is also in tier {}", p, id,
              blocks.get(id).tierAlias());
          Files.deleteIfExists(p);
          stray++;
        } else {
          found.add(new Found(id, attrs.size(), attrs.lastModifiedTime().toMillis(), p));
        }
      }
    } catch (IOException e) {
      throw new StrataException(ErrorCode.FAILED_PRECONDITION, "Cannot list "
          + tier.blocksDir() + " of tier " + tier.spec().alias() + " ("
          + tier.spec().dirKey() + "): " + e, e);
    }
    return stray;
  }

  private static Long parseBlockId(String name) {
    if (name.isEmpty() || name.length() > 19) {
      return null;
    }
    for (int i = 0; i < name.length(); i++) {
      if (!Character.isDigit(name.charAt(i))) {
        return null;
      }
    }
    try {
      long id = Long.parseLong(name);
      // Only the canonical spelling, so that one block never has two files.
      return Long.toString(id).equals(name) ? id : null;
    } catch (NumberFormatException e) {
      return null;
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
   * Reserves space for a new block and returns the temporary file to write it to. Evicts
   * least recently used blocks when no tier has room.
   *
   * @return empty when the block should not be cached now: it is already cached or being
   *     written or deleted, it is larger than every tier, or pinned blocks leave no room
   */
  public Optional<TempBlock> createTempBlock(long blockId, long length) throws IOException {
    if (length < 0) {
      throw new IllegalArgumentException("negative length " + length + " for block " + blockId);
    }
    List<BlockMeta> victims = List.of();
    TempBlock temp;
    synchronized (lock) {
      if (blocks.containsKey(blockId) || writing.containsKey(blockId)
          || deleting.contains(blockId)) {
        return Optional.empty();
      }
      StoreTier target = null;
      for (StoreTier t : tiers) {
        if (t.freeBytes() >= length) {
          target = t;
          break;
        }
      }
      boolean fitsSomewhere = false;
      if (target == null) {
        for (StoreTier t : tiers) {
          if (t.capacity() < length) {
            continue;
          }
          fitsSomewhere = true;
          List<BlockMeta> v = t.victimsFor(length - t.freeBytes());
          if (v != null) {
            target = t;
            victims = v;
            break;
          }
        }
      }
      if (target == null) {
        if (!fitsSomewhere && tooLargeLogged.asMap().putIfAbsent(blockId, Boolean.TRUE) == null) {
          LOG.debug("Block {} ({} bytes) is larger than every tier; serving it uncached",
              blockId, length);
        } else if (fitsSomewhere) {
          LOG.debug("No room for block {} ({} bytes): the blocks that could be evicted are "
              + "being read", blockId, length);
        }
        return Optional.empty();
      }
      for (BlockMeta v : victims) {
        detach(v);
      }
      target.reserve(length);
      temp = new TempBlock(blockId, length, target,
          target.tmpDir().resolve(blockId + TEMP_SUFFIX));
      writing.put(blockId, temp);
    }
    if (!victims.isEmpty()) {
      evictedCounter.increment(victims.size());
      LOG.debug("Evicted {} blocks from tier {} for block {}", victims.size(),
          temp.tierAlias(), blockId);
      finishDeletes(victims, true);
    }
    return Optional.of(temp);
  }

  /**
   * Makes a written block readable: checks that its file has exactly the reserved length and
   * renames it into the tier's {@code blocks/} folder. On any failure the temporary file is
   * deleted and the reservation released.
   */
  public BlockMeta commit(TempBlock temp) throws StrataException {
    Path target = BlockFiles.committed(temp.tier().spec().dir(), temp.blockId());
    try {
      long size = Files.size(temp.path());
      if (size != temp.length()) {
        throw new StrataException(ErrorCode.INTERNAL, "Block " + temp.blockId() + " written to "
            + temp.path() + " has " + size + " bytes, expected " + temp.length()
            + "; the copy was discarded and the block will be fetched again");
      }
      Files.move(temp.path(), target, StandardCopyOption.ATOMIC_MOVE);
    } catch (StrataException e) {
      abort(temp);
      throw e;
    } catch (IOException e) {
      abort(temp);
      throw new StrataException(ErrorCode.INTERNAL, "Cannot commit block " + temp.blockId()
          + " from " + temp.path() + " to " + target + ": " + e, e);
    }
    BlockMeta meta = new BlockMeta(temp.blockId(), temp.length(), temp.tier(), target);
    synchronized (lock) {
      temp.finished = true;
      writing.remove(temp.blockId());
      temp.tier().unreserve(temp.length());
      temp.tier().add(meta);
      blocks.put(meta.blockId(), meta);
    }
    cachedCounter.increment();
    listener.blockCommitted(meta, temp.isCallerTellingMaster());
    return meta;
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
   * Removes blocks. A block being read is hidden from new readers at once and deleted after
   * its last reader unpins it.
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
      try {
        Files.deleteIfExists(meta.path());
      } catch (IOException e) {
        LOG.warn("Cannot delete the file of {}: {}", meta, e.toString());
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
    return BlockReport.newBuilder().setBlockId(b.blockId()).setLength(b.length())
        .setTier(b.tierAlias()).build();
  }

  /** Capacity and use of every tier, fastest first. */
  public List<TierUsage> tierUsage() {
    List<TierUsage> usage = new ArrayList<>(tiers.size());
    for (StoreTier t : tiers) {
      usage.add(TierUsage.newBuilder().setAlias(t.spec().alias())
          .setCapacityBytes(t.capacity()).setUsedBytes(t.usedBytes())
          .setDir(t.spec().dir().toAbsolutePath().toString()).build());
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
