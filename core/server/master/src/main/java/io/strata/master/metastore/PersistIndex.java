package io.strata.master.metastore;

import io.strata.proto.PersistenceState;
import io.strata.proto.journal.InodeEntry;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;

/**
 * The complete files waiting for the persist scheduler (write type ASYNC_THROUGH, state
 * TO_BE_PERSISTED), so that a new leader finds its backlog without a walk of the namespace. One key
 * per such file, {@code "persist:"} + inode id (8 bytes, big-endian), with no value, written by
 * {@link InodeStore#apply} in the batch of the inode change it follows: ids grow with creation, so
 * the index is oldest first.
 *
 * <p>Like {@link TtlIndex}, the keys live in the {@code meta} column family, so that a master of an
 * earlier release can still open the database.
 */
public final class PersistIndex {
  private static final byte[] PREFIX = "persist:".getBytes(StandardCharsets.UTF_8);
  private static final int KEY_LENGTH = PREFIX.length + 8;

  private final RocksDB db;
  private final ColumnFamilyHandle meta;

  PersistIndex(RocksDB db, ColumnFamilyHandle meta) {
    this.db = db;
    this.meta = meta;
  }

  /** Whether the scheduler must persist this inode: a complete file TO_BE_PERSISTED. */
  public static boolean waits(InodeEntry n) {
    return n != null
        && !n.getDirectory()
        && n.getComplete()
        && n.getPersistenceState() == PersistenceState.PERSISTENCE_TO_BE_PERSISTED;
  }

  /**
   * Puts into {@code batch} what keeps the index right when {@code old} (null: none) becomes {@code
   * now}, the same inode.
   */
  void replace(WriteBatch batch, InodeEntry old, InodeEntry now) throws RocksDBException {
    boolean before = waits(old);
    boolean after = waits(now);
    if (before && !after) {
      batch.delete(meta, key(now.getId()));
    } else if (after && !before) {
      batch.put(meta, key(now.getId()), new byte[0]);
    }
  }

  /** Puts into {@code batch} the removal of a deleted inode's key. */
  void remove(WriteBatch batch, InodeEntry gone) throws RocksDBException {
    if (waits(gone)) {
      batch.delete(meta, key(gone.getId()));
    }
  }

  /**
   * Up to {@code limit} inode ids waiting, oldest first, after {@code afterId} (0: from the first).
   * Safe beside an apply: it sees the index before or after it.
   */
  List<Long> waiting(long afterId, int limit) throws RocksDBException {
    List<Long> out = new ArrayList<>();
    try (RocksIterator it = db.newIterator(meta)) {
      for (it.seek(key(afterId)); it.isValid() && out.size() < limit; it.next()) {
        byte[] k = it.key();
        if (k.length != KEY_LENGTH
            || !Arrays.equals(k, 0, PREFIX.length, PREFIX, 0, PREFIX.length)) {
          break;
        }
        long id = InodeStore.toLong(k, PREFIX.length);
        if (id != afterId) {
          out.add(id);
        }
      }
      it.status();
    }
    return out;
  }

  private static byte[] key(long inodeId) {
    byte[] k = Arrays.copyOf(PREFIX, KEY_LENGTH);
    System.arraycopy(InodeStore.longBytes(inodeId), 0, k, PREFIX.length, 8);
    return k;
  }
}
