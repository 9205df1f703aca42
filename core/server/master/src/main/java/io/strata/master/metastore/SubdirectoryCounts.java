package io.strata.master.metastore;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.LongSupplier;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * How many subdirectories each directory has, so that a directory's link count (2 plus its
 * subdirectories, as POSIX file systems report and {@code find} relies on) costs one read rather
 * than a scan of its children. One key per directory, {@code "subdirs:"} + directory id (8 bytes,
 * big-endian), whose value is the count (8 bytes), kept by {@link InodeStore#apply} in the batch of
 * each change that adds, removes or moves a directory.
 *
 * <p>Directories made before this index existed (metadata written by release 0.1.0) have no key:
 * their count is found by a scan of their children when asked, and written the first time one of
 * their subdirectories changes. In the {@code meta} column family for the reason {@link TtlIndex}
 * gives.
 */
final class SubdirectoryCounts {
  private static final byte[] PREFIX = "subdirs:".getBytes(StandardCharsets.UTF_8);

  private final RocksDB db;
  private final ColumnFamilyHandle meta;

  SubdirectoryCounts(RocksDB db, ColumnFamilyHandle meta) {
    this.db = db;
    this.meta = meta;
  }

  /** The stored count of a directory, or -1 when it has none (made by an older release). */
  long stored(long dirId) throws RocksDBException {
    byte[] v = db.get(meta, key(dirId));
    return v == null ? -1 : InodeStore.toLong(v, 0);
  }

  /** Puts into {@code batch} the count of a new, empty directory. */
  void created(WriteBatch batch, long dirId) throws RocksDBException {
    batch.put(meta, key(dirId), InodeStore.longBytes(0));
  }

  /**
   * Puts into {@code batch} the count of {@code dirId} changed by {@code delta}; a directory
   * without a stored count gets {@code counted} (its count before the change, from a scan) plus
   * delta.
   */
  void add(WriteBatch batch, long dirId, long delta, LongSupplier counted) throws RocksDBException {
    long now = stored(dirId);
    long base = now >= 0 ? now : counted.getAsLong();
    batch.put(meta, key(dirId), InodeStore.longBytes(Math.max(0, base + delta)));
  }

  /** Puts into {@code batch} the removal of a deleted directory's count. */
  void remove(WriteBatch batch, long dirId) throws RocksDBException {
    batch.delete(meta, key(dirId));
  }

  private static byte[] key(long dirId) {
    byte[] k = Arrays.copyOf(PREFIX, PREFIX.length + 8);
    System.arraycopy(InodeStore.longBytes(dirId), 0, k, PREFIX.length, 8);
    return k;
  }
}
