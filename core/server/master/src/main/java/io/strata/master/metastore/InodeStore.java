package io.strata.master.metastore;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.InvalidProtocolBufferException;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.common.Version;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.LoadFailure;
import io.strata.proto.MountInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.LoadJobEntry;
import io.strata.proto.journal.RenameEntry;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.Slice;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The master's metadata in RocksDB: inodes, the parent/child edges that make them a tree, the mount
 * records and the counters that must survive a restart. It changes only through {@link
 * #apply(JournalEntry)}, the same code for live writes and for journal replay, so a replay
 * reproduces exactly the state that was served.
 *
 * <p>Layout, one column family each:
 *
 * <ul>
 *   <li>{@code inodes}: inode id (8 bytes, big-endian) to a serialized {@link InodeEntry};
 *   <li>{@code edges}: parent id (8 bytes, big-endian) followed by the child's name in UTF-8, to
 *       the child's id (8 bytes). A child lookup is one point get and a directory page is one range
 *       scan; names come back in UTF-8 byte order, which is code point order;
 *   <li>{@code mounts}: mount id (8 bytes) to a serialized {@link MountInfo};
 *   <li>{@code jobs}: load jobs: {@code 'J'} + job id (8 bytes) to the job's last {@link
 *       LoadJobEntry} (without its failures), and {@code 'F'} + job id + the file's namespace path
 *       in UTF-8 to why that file could not be loaded;
 *   <li>{@code meta}: counter name to an 8-byte value (last applied journal sequence, next inode
 *       id, next mount id, inode count), written in the same batch as the change they follow; the
 *       {@link TtlIndex} of the inodes that have a time to live, and the {@link PersistIndex} of
 *       the files waiting to be persisted.
 * </ul>
 *
 * <p>Each applied entry is one atomic RocksDB write batch. The RocksDB write-ahead log is off: the
 * journal is the log, and start-up always rebuilds this database from a checkpoint plus the
 * journal.
 *
 * <p>Concurrency: reads are safe from many threads at once. {@link #apply} must not run at the same
 * time as reads or other applies (the namespace lock and the journal guarantee this), which is what
 * keeps the in-heap inode cache exact without further locking.
 */
public final class InodeStore implements Closeable {
  /** Id of the root directory; it is never deleted. */
  public static final long ROOT_ID = 1;

  private static final byte[] APPLIED_SEQUENCE = bytes("applied_sequence");
  private static final byte[] NEXT_INODE_ID = bytes("next_inode_id");
  private static final byte[] NEXT_MOUNT_ID = bytes("next_mount_id");
  private static final byte[] INODE_COUNT = bytes("inode_count");

  /** The cluster's finalized metadata layout; absent (layout 1) in every 0.1.0 metastore. */
  private static final byte[] LAYOUT_VERSION = bytes("layout_version");

  /** Mount id 1 is the root mount, which comes from configuration and is never journaled. */
  private static final long FIRST_MOUNT_ID = 2;

  static {
    RocksDB.loadLibrary();
  }

  private final Path dir;
  private final Cache<Long, InodeEntry> cache;
  // Not final: replaceWith reopens the database from a snapshot a follower was sent.
  private DBOptions dbOptions;
  private ColumnFamilyOptions cfOptions;
  private WriteOptions writeOptions;
  private RocksDB db;
  private List<ColumnFamilyHandle> handles;
  private ColumnFamilyHandle inodes;
  private ColumnFamilyHandle edges;
  private ColumnFamilyHandle mounts;
  private ColumnFamilyHandle meta;
  private ColumnFamilyHandle jobs;
  private TtlIndex ttlIndex;
  private PersistIndex persistIndex;
  private DataIdIndex dataIds;
  private SubdirectoryCounts subdirectories;

  private volatile long appliedSequence;
  private volatile long nextInodeId;
  private volatile long nextMountId;
  private volatile long inodeCount;
  private volatile int layoutVersion;

  private InodeStore(Path dir, int cacheSize) throws IOException {
    this.dir = dir;
    this.cache = Caffeine.newBuilder().maximumSize(Math.max(1, cacheSize)).recordStats().build();
    openDatabase();
  }

  private void openDatabase() throws IOException {
    Files.createDirectories(dir);
    dbOptions =
        new DBOptions()
            .setCreateIfMissing(true)
            .setCreateMissingColumnFamilies(true)
            .setKeepLogFileNum(2);
    cfOptions = new ColumnFamilyOptions();
    writeOptions = new WriteOptions().setDisableWAL(true);
    List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
    for (String name : List.of("default", "inodes", "edges", "mounts", "meta", "jobs")) {
      descriptors.add(new ColumnFamilyDescriptor(bytes(name), cfOptions));
    }
    handles = new ArrayList<>();
    try {
      db = RocksDB.open(dbOptions, dir.toString(), descriptors, handles);
    } catch (RocksDBException e) {
      cfOptions.close();
      dbOptions.close();
      writeOptions.close();
      throw new IOException(
          "Cannot open the metastore at "
              + dir
              + ": "
              + e.getMessage()
              + " (is another master using strata.master.metastore.dir?)",
          e);
    }
    inodes = handles.get(1);
    edges = handles.get(2);
    mounts = handles.get(3);
    meta = handles.get(4);
    jobs = handles.get(5);
    ttlIndex = new TtlIndex(db, meta);
    persistIndex = new PersistIndex(db, meta);
    dataIds = new DataIdIndex(db, meta);
    subdirectories = new SubdirectoryCounts(db, meta);
    appliedSequence = readMeta(APPLIED_SEQUENCE, 0);
    nextInodeId = readMeta(NEXT_INODE_ID, ROOT_ID + 1);
    nextMountId = readMeta(NEXT_MOUNT_ID, FIRST_MOUNT_ID);
    inodeCount = readMeta(INODE_COUNT, 0);
    layoutVersion = (int) readMeta(LAYOUT_VERSION, Version.FIRST_LAYOUT_VERSION);
  }

  /**
   * Opens (creating when missing) the metastore in a folder and publishes its cache and inode
   * metrics to the registry.
   */
  public static InodeStore open(Path dir, int cacheSize, MeterRegistry registry)
      throws IOException {
    InodeStore store = new InodeStore(dir, cacheSize);
    FunctionCounter.builder(
            MetricNames.MASTER_INODE_CACHE_HITS, store.cache, c -> c.stats().hitCount())
        .description("Inode reads served by the in-heap cache")
        .register(registry);
    FunctionCounter.builder(
            MetricNames.MASTER_INODE_CACHE_MISSES, store.cache, c -> c.stats().missCount())
        .description("Inode reads that went to RocksDB")
        .register(registry);
    Gauge.builder(MetricNames.MASTER_INODES, store, s -> s.inodeCount)
        .description("Inodes in the namespace")
        .register(registry);
    return store;
  }

  // ---- reads ----

  /** The inode with that id, or null. */
  public InodeEntry get(long id) {
    return cache.get(id, this::readInode);
  }

  /**
   * The inode with that id read straight from RocksDB, bypassing (and not filling) the cache.
   * Unlike {@link #get} it is safe to call while an apply runs, so callers that must not wait for
   * the namespace lock use it; they see the state before or after that apply.
   */
  public InodeEntry peek(long id) {
    return readInode(id);
  }

  private InodeEntry readInode(long id) {
    try {
      byte[] v = db.get(inodes, key(id));
      return v == null ? null : InodeEntry.parseFrom(v);
    } catch (RocksDBException | InvalidProtocolBufferException e) {
      throw new IllegalStateException(
          "Cannot read inode " + id + " from the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /** The id of a directory's child of that name, or -1. */
  public long childId(long parentId, String name) {
    try {
      byte[] v = db.get(edges, edgeKey(parentId, name));
      return v == null ? -1 : toLong(v, 0);
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /** The child inode of that name, or null. */
  public InodeEntry child(long parentId, String name) {
    long id = childId(parentId, name);
    return id < 0 ? null : get(id);
  }

  /**
   * How many subdirectories a directory has: its stored count, or (for a directory made by an older
   * release, which has none) a count of its children.
   */
  public long subdirectoryCount(long dirId) {
    try {
      long stored = subdirectories.stored(dirId);
      return stored >= 0 ? stored : countSubdirectories(dirId);
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Counts the directories among a directory's children (by their first names). */
  private long countSubdirectories(long dirId) {
    long[] n = {0};
    scanChildren(
        dirId,
        "",
        Integer.MAX_VALUE,
        c -> {
          InodeEntry child = get(c.id());
          if (child != null && child.getDirectory() && child.getParentId() == dirId) {
            n[0]++;
          }
        });
    return n[0];
  }

  /**
   * The inode whose current content has blocks named by {@code dataId}, or null: the inode of that
   * id when its content is still its first version, else the inode whose data id it is. Like {@link
   * #peek}, bypasses the cache and is safe beside an apply.
   */
  public InodeEntry contentOwner(long dataId) {
    InodeEntry n = peek(dataId);
    if (n != null) {
      long current = n.getDataId() != 0 ? n.getDataId() : n.getId();
      return current == dataId ? n : null;
    }
    try {
      long id = dataIds.inodeOf(dataId);
      return id < 0 ? null : peek(id);
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /** One child of a directory as stored in the edges column family. */
  public record Child(String name, long id) {}

  /**
   * Up to {@code limit} children of a directory in name order ({@link io.strata.common.NameOrder}),
   * starting after {@code startAfter} (all from the first when empty).
   */
  public List<Child> children(long parentId, String startAfter, int limit) {
    List<Child> out = new ArrayList<>(Math.min(limit, 1024));
    scanChildren(parentId, startAfter, limit, c -> out.add(c));
    return out;
  }

  /** Whether a directory has at least one child in the namespace. */
  public boolean hasChildren(long parentId) {
    boolean[] found = {false};
    scanChildren(parentId, "", 1, c -> found[0] = true);
    return found[0];
  }

  /** Calls {@code consumer} with every child edge of a directory, in name order. */
  public void forEachChild(long parentId, Consumer<Child> consumer) {
    scanChildren(parentId, "", Integer.MAX_VALUE, consumer);
  }

  /** Calls {@code consumer} with the id of every child of a directory, in name order. */
  public void forEachChildId(long parentId, LongConsumer consumer) {
    scanChildren(parentId, "", Integer.MAX_VALUE, c -> consumer.accept(c.id()));
  }

  private void scanChildren(long parentId, String startAfter, int limit, Consumer<Child> consumer) {
    byte[] start = edgeKey(parentId, startAfter);
    try (Slice upper = new Slice(key(parentId + 1));
        ReadOptions ro = new ReadOptions().setIterateUpperBound(upper);
        RocksIterator it = db.newIterator(edges, ro)) {
      it.seek(start);
      int n = 0;
      while (it.isValid() && n < limit) {
        byte[] k = it.key();
        if (!startAfter.isEmpty() && Arrays.equals(k, start)) {
          it.next();
          continue;
        }
        String name = new String(k, 8, k.length - 8, StandardCharsets.UTF_8);
        consumer.accept(new Child(name, toLong(it.value(), 0)));
        n++;
        it.next();
      }
      it.status();
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot scan directory "
              + parentId
              + " in the metastore at "
              + dir
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * Calls {@code consumer} with every inode, in id order, read from a snapshot of the store taken
   * when the scan starts (applies meanwhile are not seen, and are not held off). For the rare walks
   * that must see every inode, such as the new leader's search for leased files.
   */
  public void forEachInode(Consumer<InodeEntry> consumer) {
    org.rocksdb.Snapshot snapshot = db.getSnapshot();
    try (ReadOptions ro = new ReadOptions().setSnapshot(snapshot).setFillCache(false);
        RocksIterator it = db.newIterator(inodes, ro)) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        consumer.accept(InodeEntry.parseFrom(it.value()));
      }
      it.status();
    } catch (RocksDBException | InvalidProtocolBufferException e) {
      throw new IllegalStateException(
          "Cannot scan the inodes of the metastore at " + dir + ": " + e.getMessage(), e);
    } finally {
      db.releaseSnapshot(snapshot);
    }
  }

  /** Every mount added through the journal (not the root mount), in id order. */
  public List<MountInfo> mounts() {
    List<MountInfo> out = new ArrayList<>();
    try (RocksIterator it = db.newIterator(mounts)) {
      for (it.seekToFirst(); it.isValid(); it.next()) {
        out.add(MountInfo.parseFrom(it.value()));
      }
      it.status();
    } catch (RocksDBException | InvalidProtocolBufferException e) {
      throw new IllegalStateException(
          "Cannot read mounts from the metastore at " + dir + ": " + e.getMessage(), e);
    }
    return out;
  }

  /** The last record of every load job, in job id order. */
  public List<LoadJobEntry> loadJobs() {
    List<LoadJobEntry> out = new ArrayList<>();
    byte[] prefix = {'J'};
    try (RocksIterator it = db.newIterator(jobs)) {
      for (it.seek(prefix); it.isValid() && it.key()[0] == 'J'; it.next()) {
        out.add(LoadJobEntry.parseFrom(it.value()));
      }
      it.status();
    } catch (RocksDBException | InvalidProtocolBufferException e) {
      throw new IllegalStateException(
          "Cannot read load jobs from the metastore at " + dir + ": " + e.getMessage(), e);
    }
    return out;
  }

  /** Up to {@code limit} recorded failures of a load job, in path byte order. */
  public List<LoadFailure> loadFailures(long jobId, int limit) {
    List<LoadFailure> out = new ArrayList<>();
    byte[] prefix = jobKey('F', jobId);
    try (RocksIterator it = db.newIterator(jobs)) {
      for (it.seek(prefix);
          it.isValid() && out.size() < limit && startsWith(it.key(), prefix);
          it.next()) {
        byte[] k = it.key();
        out.add(
            LoadFailure.newBuilder()
                .setPath(
                    new String(k, prefix.length, k.length - prefix.length, StandardCharsets.UTF_8))
                .setReason(new String(it.value(), StandardCharsets.UTF_8))
                .build());
      }
      it.status();
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read load failures from the metastore at " + dir + ": " + e.getMessage(), e);
    }
    return out;
  }

  /** Whether a load job recorded a failure for a path. */
  public boolean hasLoadFailure(long jobId, String path) {
    try {
      return db.get(jobs, failureKey(jobId, path)) != null;
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read load failures from the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /**
   * Up to {@code limit} inodes whose time to live ended at or before {@code nowMs}, earliest first,
   * after {@code after} (null: from the first). Safe to call while an apply runs.
   */
  public List<TtlIndex.Expiry> expiredBy(long nowMs, TtlIndex.Expiry after, int limit) {
    try {
      return ttlIndex.expiredBy(nowMs, after, limit);
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read the time-to-live index of the metastore at " + dir + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Up to {@code limit} ids of files waiting to be persisted, oldest first, after {@code afterId}
   * (0: from the first). Safe to call while an apply runs.
   */
  public List<Long> waitingToPersist(long afterId, int limit) {
    try {
      return persistIndex.waiting(afterId, limit);
    } catch (RocksDBException e) {
      throw new IllegalStateException(
          "Cannot read the persist index of the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  /** Sequence of the last journal entry applied. */
  public long appliedSequence() {
    return appliedSequence;
  }

  /** The smallest inode id never used, so ids are never reused even after deletes. */
  public long nextInodeId() {
    return nextInodeId;
  }

  /** The smallest mount id never used. */
  public long nextMountId() {
    return nextMountId;
  }

  /**
   * The cluster's finalized metadata layout as applied here: what snapshots and backups are written
   * as, and what features may be used (see {@link io.strata.common.LayoutFeature}).
   */
  public int layoutVersion() {
    return layoutVersion;
  }

  public long inodeCount() {
    return inodeCount;
  }

  // ---- the one write path ----

  /**
   * Applies one journal entry atomically. Semantics: an inode entry creates or replaces the inode
   * of its id (moving its edge when parent or name changed); deleting an inode deletes it and every
   * inode below it; a rename moves an inode to a new parent and name; mount entries add or remove a
   * mount record. Counters follow: the next inode and mount ids only grow. The time-to-live index
   * follows every inode change.
   */
  public void apply(JournalEntry entry) throws IOException {
    Applied applied = new Applied();
    try (WriteBatch batch = new WriteBatch()) {
      switch (entry.getEntryCase()) {
        case INODE -> putInode(batch, entry.getInode(), applied);
        case DELETE_INODE -> deleteInode(batch, entry.getDeleteInode().getId(), applied);
        case RENAME -> rename(batch, entry, applied);
        case ADD_MOUNT -> {
          MountInfo m = entry.getAddMount().getMount();
          batch.put(mounts, key(m.getMountId()), m.toByteArray());
          applied.nextMount = Math.max(applied.nextMount, m.getMountId() + 1);
        }
        case DELETE_MOUNT -> batch.delete(mounts, key(entry.getDeleteMount().getMountId()));
        case LOAD_JOB -> putLoadJob(batch, entry.getLoadJob());
        case LAYOUT -> finalizeLayout(batch, entry, applied);
        default ->
            throw new IOException(
                "Journal entry "
                    + entry.getSequence()
                    + " has no change this release understands (written by a newer release?)");
      }
      batch.put(meta, APPLIED_SEQUENCE, longBytes(entry.getSequence()));
      batch.put(meta, NEXT_INODE_ID, longBytes(applied.nextId));
      batch.put(meta, NEXT_MOUNT_ID, longBytes(applied.nextMount));
      batch.put(meta, INODE_COUNT, longBytes(applied.count));
      db.write(writeOptions, batch);
    } catch (RocksDBException e) {
      throw new IOException(
          "Cannot apply journal entry "
              + entry.getSequence()
              + " to the metastore at "
              + dir
              + ": "
              + e.getMessage(),
          e);
    }
    cache.invalidateAll(applied.removed);
    for (InodeEntry inode : applied.updated) {
      cache.put(inode.getId(), inode);
    }
    appliedSequence = entry.getSequence();
    inodeCount = applied.count;
    nextInodeId = applied.nextId;
    nextMountId = applied.nextMount;
    layoutVersion = applied.layout;
  }

  /**
   * What one entry changes beyond its write batch: the counters, taken over by the store only once
   * the batch is written, and the inodes whose cached copies must go or be replaced.
   */
  private final class Applied {
    final List<Long> removed = new ArrayList<>();
    final List<InodeEntry> updated = new ArrayList<>();
    long count = inodeCount;
    long nextId = nextInodeId;
    long nextMount = nextMountId;
    int layout = layoutVersion;
  }

  /** A new or changed inode: its record, every name it has, and the indexes over it. */
  private void putInode(WriteBatch batch, InodeEntry inode, Applied applied)
      throws IOException, RocksDBException {
    InodeEntry old = get(inode.getId());
    if (old == null) {
      applied.count++;
    }
    // Every name of the inode is an edge: its first (parent_id, name) and its hard links.
    List<InodeName> after = names(inode);
    for (InodeName n : names(old)) {
      if (!after.contains(n)) {
        batch.delete(edges, edgeKey(n.parentId(), n.name()));
      }
    }
    for (InodeName n : after) {
      batch.put(edges, edgeKey(n.parentId(), n.name()), key(inode.getId()));
    }
    batch.put(inodes, key(inode.getId()), inode.toByteArray());
    ttlIndex.replace(batch, old, inode);
    persistIndex.replace(batch, old, inode);
    dataIds.replace(batch, old, inode);
    if (inode.getDirectory()) {
      if (old == null) {
        subdirectories.created(batch, inode.getId());
      }
      moveSubdirectory(batch, old, inode.getId(), inode.getParentId());
    }
    applied.nextId =
        Math.max(
            applied.nextId,
            Math.max(inode.getId(), Math.max(inode.getDataId(), inode.getWritingDataId())) + 1);
    applied.updated.add(inode);
  }

  /** An inode and everything below it; nothing when it is gone already. */
  private void deleteInode(WriteBatch batch, long id, Applied applied)
      throws IOException, RocksDBException {
    InodeEntry top = get(id);
    if (top == null) {
      return;
    }
    batch.delete(edges, edgeKey(top.getParentId(), top.getName()));
    if (top.getDirectory() && top.getParentId() != 0) {
      long parent = top.getParentId();
      subdirectories.add(batch, parent, -1, () -> countSubdirectories(parent));
    }
    int before = applied.removed.size();
    deleteSubtree(batch, top, applied.removed);
    applied.count -= applied.removed.size() - before;
  }

  /** An inode under a new parent or name, with the times the rename gave it. */
  private void rename(WriteBatch batch, JournalEntry entry, Applied applied)
      throws IOException, RocksDBException {
    RenameEntry r = entry.getRename();
    InodeEntry old = get(r.getId());
    if (old == null) {
      throw new IOException(
          "Journal entry "
              + entry.getSequence()
              + " renames inode "
              + r.getId()
              + ", which does not exist");
    }
    InodeEntry.Builder movedBuilder =
        old.toBuilder()
            .setParentId(r.getNewParentId())
            .setName(r.getNewName())
            .setModificationTimeMs(r.getModificationTimeMs());
    if (r.hasChangeTimeNs()) {
      movedBuilder.setChangeTimeNs(r.getChangeTimeNs());
    }
    InodeEntry moved = movedBuilder.build();
    if (old.getDirectory()) {
      moveSubdirectory(batch, old, old.getId(), r.getNewParentId());
    }
    batch.delete(edges, edgeKey(old.getParentId(), old.getName()));
    batch.put(edges, edgeKey(moved.getParentId(), moved.getName()), key(moved.getId()));
    batch.put(inodes, key(moved.getId()), moved.toByteArray());
    ttlIndex.replace(batch, old, moved);
    applied.updated.add(moved);
  }

  /** A load job's state, with the failures it reports for the first time kept apart. */
  private void putLoadJob(WriteBatch batch, LoadJobEntry job) throws RocksDBException {
    batch.put(
        jobs,
        jobKey('J', job.getJobId()),
        job.toBuilder().clearNewFailures().build().toByteArray());
    for (LoadFailure f : job.getNewFailuresList()) {
      batch.put(jobs, failureKey(job.getJobId(), f.getPath()), bytes(f.getReason()));
    }
  }

  /** A finalized metadata layout; one newer than this release reads stops the apply. */
  private void finalizeLayout(WriteBatch batch, JournalEntry entry, Applied applied)
      throws IOException, RocksDBException {
    int target = entry.getLayout().getLayoutVersion();
    if (target > Version.LAYOUT_VERSION) {
      throw new IOException(
          "Journal entry "
              + entry.getSequence()
              + " finalizes metadata layout "
              + target
              + ", but this release ("
              + Version.RELEASE
              + ") reads layouts up to "
              + Version.LAYOUT_VERSION
              + ": run release "
              + entry.getLayout().getRelease()
              + " or newer on this master");
    }
    applied.layout = Math.max(applied.layout, target);
    batch.put(meta, LAYOUT_VERSION, longBytes(applied.layout));
  }

  /**
   * Deletes an inode and everything below it. Only first names are followed down: a child edge that
   * is another name (a hard link) of a file whose first name is elsewhere loses the edge only.
   * Every name of a deleted inode goes with it, so no edge is left pointing at nothing (the master
   * removes names outside the subtree from their files beforehand).
   */
  private void deleteSubtree(WriteBatch batch, InodeEntry top, List<Long> removed)
      throws RocksDBException {
    Deque<Long> pending = new ArrayDeque<>();
    pending.push(top.getId());
    while (!pending.isEmpty()) {
      long id = pending.pop();
      InodeEntry inode = get(id);
      if (inode != null) {
        ttlIndex.remove(batch, inode);
        persistIndex.remove(batch, inode);
        dataIds.remove(batch, inode);
        for (InodeName n : names(inode)) {
          batch.delete(edges, edgeKey(n.parentId(), n.name()));
        }
      }
      if (inode != null && inode.getDirectory()) {
        subdirectories.remove(batch, id);
        for (Child c : children(id, "", Integer.MAX_VALUE)) {
          batch.delete(edges, edgeKey(id, c.name()));
          InodeEntry child = get(c.id());
          if (child != null && child.getParentId() == id && child.getName().equals(c.name())) {
            pending.push(c.id());
          }
        }
      }
      batch.delete(inodes, key(id));
      removed.add(id);
    }
  }

  /** One name of an inode: the folder it is in and the name there. */
  private record InodeName(long parentId, String name) {}

  /** Every name of an inode (none for the root, or for null). */
  private static List<InodeName> names(InodeEntry n) {
    if (n == null || n.getId() == ROOT_ID) {
      return List.of();
    }
    List<InodeName> out = new ArrayList<>(1 + n.getLinksCount());
    out.add(new InodeName(n.getParentId(), n.getName()));
    for (io.strata.proto.journal.LinkName l : n.getLinksList()) {
      out.add(new InodeName(l.getParentId(), l.getName()));
    }
    return out;
  }

  /**
   * Puts into {@code batch} the subdirectory counts of the folders a directory leaves and joins
   * when it becomes a child of {@code newParent} ({@code old} null: it is new).
   */
  private void moveSubdirectory(WriteBatch batch, InodeEntry old, long id, long newParent)
      throws RocksDBException {
    if (id == ROOT_ID || (old != null && old.getParentId() == newParent)) {
      return;
    }
    if (old != null && old.getDirectory() && old.getParentId() != 0) {
      long from = old.getParentId();
      subdirectories.add(batch, from, -1, () -> countSubdirectories(from));
    }
    if (newParent != 0) {
      subdirectories.add(batch, newParent, 1, () -> countSubdirectories(newParent));
    }
  }

  // ---- checkpoints and lifecycle ----

  /**
   * Writes a consistent copy of the database into {@code target}, which must not exist yet.
   * Memtables are flushed first: with the write-ahead log off they are not otherwise in files.
   */
  public void checkpointTo(Path target) throws IOException {
    try (FlushOptions flush = new FlushOptions().setWaitForFlush(true);
        Checkpoint checkpoint = Checkpoint.create(db)) {
      db.flush(flush, handles);
      checkpoint.createCheckpoint(target.toString());
    } catch (RocksDBException e) {
      throw new IOException(
          "Cannot checkpoint the metastore at " + dir + " into " + target + ": " + e.getMessage(),
          e);
    }
  }

  /**
   * Replaces the whole database with a copy of the checkpoint folder {@code source} (a snapshot a
   * follower was sent by the leader) and reopens it. Must not run with any read or apply.
   */
  public void replaceWith(Path source) throws IOException {
    close();
    try (java.util.stream.Stream<Path> old = Files.list(dir)) {
      for (Path f : (Iterable<Path>) old::iterator) {
        Files.delete(f);
      }
    }
    try (java.util.stream.Stream<Path> files = Files.list(source)) {
      for (Path f : (Iterable<Path>) files::iterator) {
        if (!f.getFileName().toString().endsWith(".md5")) {
          Files.copy(f, dir.resolve(f.getFileName()));
        }
      }
    }
    cache.invalidateAll();
    openDatabase();
  }

  @Override
  public void close() {
    for (ColumnFamilyHandle h : handles) {
      h.close();
    }
    db.close();
    writeOptions.close();
    cfOptions.close();
    dbOptions.close();
  }

  // ---- encoding ----

  private long readMeta(byte[] name, long fallback) throws IOException {
    try {
      byte[] v = db.get(meta, name);
      return v == null ? fallback : toLong(v, 0);
    } catch (RocksDBException e) {
      throw new IOException("Cannot read the metastore at " + dir + ": " + e.getMessage(), e);
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static byte[] key(long id) {
    return longBytes(id);
  }

  static byte[] longBytes(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }

  static long toLong(byte[] b, int off) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[off + i] & 0xFF);
    }
    return v;
  }

  private static byte[] jobKey(char kind, long jobId) {
    byte[] k = new byte[9];
    k[0] = (byte) kind;
    System.arraycopy(longBytes(jobId), 0, k, 1, 8);
    return k;
  }

  private static byte[] failureKey(long jobId, String path) {
    byte[] p = bytes(path);
    byte[] k = Arrays.copyOf(jobKey('F', jobId), 9 + p.length);
    System.arraycopy(p, 0, k, 9, p.length);
    return k;
  }

  private static boolean startsWith(byte[] key, byte[] prefix) {
    return key.length >= prefix.length
        && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
  }

  static byte[] edgeKey(long parentId, String name) {
    byte[] n = bytes(name);
    byte[] k = Arrays.copyOf(key(parentId), 8 + n.length);
    System.arraycopy(n, 0, k, 8, n.length);
    return k;
  }
}
