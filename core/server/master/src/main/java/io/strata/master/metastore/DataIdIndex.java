package io.strata.master.metastore;

import io.strata.proto.journal.InodeEntry;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * Which inode a content version's data id belongs to, for the files whose content was written anew
 * since they were created (their {@code data_id} is set): block reports name blocks by data id, and
 * the master must tell a live version's blocks from those of a version replaced since. One key per
 * such inode, {@code "data:"} + data id (8 bytes, big-endian), whose value is the inode id (8
 * bytes), written by {@link InodeStore#apply} in the batch of the inode change it follows. Files
 * whose data id is their own id have no key: their id says it.
 *
 * <p>In the {@code meta} column family for the reason {@link TtlIndex} gives: no new column family,
 * so that a master of the previous release can still open the metastore.
 */
final class DataIdIndex {
  private static final byte[] PREFIX = "data:".getBytes(StandardCharsets.UTF_8);

  private final RocksDB db;
  private final ColumnFamilyHandle meta;

  DataIdIndex(RocksDB db, ColumnFamilyHandle meta) {
    this.db = db;
    this.meta = meta;
  }

  /**
   * Puts into {@code batch} what keeps the index right when {@code old} (null: none) becomes {@code
   * now}.
   */
  void replace(WriteBatch batch, InodeEntry old, InodeEntry now) throws RocksDBException {
    long before = old == null ? 0 : old.getDataId();
    long after = now.getDataId();
    if (before == after) {
      return;
    }
    if (before != 0) {
      batch.delete(meta, key(before));
    }
    if (after != 0) {
      batch.put(meta, key(after), InodeStore.longBytes(now.getId()));
    }
  }

  /** Puts into {@code batch} the removal of a deleted inode's key. */
  void remove(WriteBatch batch, InodeEntry gone) throws RocksDBException {
    if (gone.getDataId() != 0) {
      batch.delete(meta, key(gone.getDataId()));
    }
  }

  /** The inode whose current content has this data id (set apart from its own id), or -1. */
  long inodeOf(long dataId) throws RocksDBException {
    byte[] v = db.get(meta, key(dataId));
    return v == null ? -1 : InodeStore.toLong(v, 0);
  }

  private static byte[] key(long dataId) {
    byte[] k = Arrays.copyOf(PREFIX, PREFIX.length + 8);
    System.arraycopy(InodeStore.longBytes(dataId), 0, k, PREFIX.length, 8);
    return k;
  }
}
