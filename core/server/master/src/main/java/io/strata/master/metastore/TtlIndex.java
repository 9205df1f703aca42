package io.strata.master.metastore;

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
 * The inodes that have a time to live, in the order their times end, so that finding what expired
 * costs the expired inodes and not a walk of the namespace. One key per such inode, {@code "ttl:"}
 * + expiry in ms (8 bytes, big-endian) + inode id (8 bytes), with no value, written by {@link
 * InodeStore#apply} in the batch of the inode change it follows.
 *
 * <p>The keys live in the {@code meta} column family rather than in one of their own: RocksDB opens
 * a database only with all of its column families named, so a new one would keep a master of
 * release 0.1.0 from opening a snapshot written before the cluster is finalized. No such key exists
 * until then (a time to live needs layout 2), and the counters that share the column family are
 * read by name only.
 */
public final class TtlIndex {
  private static final byte[] PREFIX = "ttl:".getBytes(StandardCharsets.UTF_8);
  private static final int KEY_LENGTH = PREFIX.length + 16;

  /** An inode whose time to live ends at {@code expiryMs}. */
  public record Expiry(long expiryMs, long inodeId) {}

  private final RocksDB db;
  private final ColumnFamilyHandle meta;

  TtlIndex(RocksDB db, ColumnFamilyHandle meta) {
    this.db = db;
    this.meta = meta;
  }

  /**
   * When an inode's time to live ends, in ms since the epoch: its modification time plus its time
   * to live, at least 0 and at most {@link Long#MAX_VALUE}; -1 when it has none.
   */
  public static long expiryMs(InodeEntry n) {
    if (n.getTtlMs() <= 0) {
      return -1;
    }
    long end = n.getModificationTimeMs() + n.getTtlMs();
    // Overflow only when both are near the top: the time to live never ends then.
    if (n.getModificationTimeMs() > 0 && end < 0) {
      return Long.MAX_VALUE;
    }
    return Math.max(0, end);
  }

  /**
   * Puts into {@code batch} what keeps the index right when {@code old} (null: none) becomes {@code
   * now}, the same inode.
   */
  void replace(WriteBatch batch, InodeEntry old, InodeEntry now) throws RocksDBException {
    long before = old == null ? -1 : expiryMs(old);
    long after = expiryMs(now);
    if (before == after) {
      return;
    }
    if (before >= 0) {
      batch.delete(meta, key(before, old.getId()));
    }
    if (after >= 0) {
      batch.put(meta, key(after, now.getId()), new byte[0]);
    }
  }

  /** Puts into {@code batch} the removal of a deleted inode's key. */
  void remove(WriteBatch batch, InodeEntry gone) throws RocksDBException {
    long expiry = expiryMs(gone);
    if (expiry >= 0) {
      batch.delete(meta, key(expiry, gone.getId()));
    }
  }

  /**
   * Up to {@code limit} inodes whose time to live ended at or before {@code nowMs}, earliest first,
   * starting after {@code after} (null: from the first). Safe beside an apply: it sees the index
   * before or after it.
   */
  List<Expiry> expiredBy(long nowMs, Expiry after, int limit) throws RocksDBException {
    List<Expiry> out = new ArrayList<>();
    byte[] start = after == null ? PREFIX : key(after.expiryMs(), after.inodeId());
    try (RocksIterator it = db.newIterator(meta)) {
      for (it.seek(start); it.isValid() && out.size() < limit; it.next()) {
        byte[] k = it.key();
        if (k.length != KEY_LENGTH
            || !Arrays.equals(k, 0, PREFIX.length, PREFIX, 0, PREFIX.length)) {
          break;
        }
        Expiry e =
            new Expiry(
                InodeStore.toLong(k, PREFIX.length), InodeStore.toLong(k, PREFIX.length + 8));
        if (e.expiryMs() > nowMs) {
          break;
        }
        if (!e.equals(after)) {
          out.add(e);
        }
      }
      it.status();
    }
    return out;
  }

  private static byte[] key(long expiryMs, long inodeId) {
    byte[] k = Arrays.copyOf(PREFIX, KEY_LENGTH);
    System.arraycopy(InodeStore.longBytes(expiryMs), 0, k, PREFIX.length, 8);
    System.arraycopy(InodeStore.longBytes(inodeId), 0, k, PREFIX.length + 8, 8);
    return k;
  }
}
