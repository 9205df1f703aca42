package io.strata.master.file;

import io.strata.common.BlockIds;
import io.strata.common.PathNames;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.BlockInfo;
import io.strata.proto.FileInfo;
import io.strata.proto.journal.InodeEntry;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * The namespace as clients read it: the applied {@link InodeStore}, walked by path, listed by page,
 * and shown as {@link FileInfo}s; and what decides whether a path must first be loaded from, or
 * checked against, its under store.
 *
 * <p>Locking: a read holds the read side of one lock for the time of its walk and view (no
 * under-store call, no wait for a change); a journal batch applies under the write side, only for
 * the time it takes to write the batch to the metastore, so a reader sees every batch whole or not
 * at all. Changes take no part in this lock: they hold {@link PathLocks} and are checked against
 * {@link PendingChanges}.
 *
 * <p>Inode ids (and mount ids) are handed out here, above every id ever applied, so ids (and so
 * block ids) are never reused.
 */
public final class InodeTree {
  /** Signature of a read done on the inode of a path. */
  @FunctionalInterface
  public interface ReadBody<T> {
    T apply(InodeEntry inode) throws IOException;
  }

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final InodeStore store;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final SyncPolicy policy;
  private final AtomicLong nextId = new AtomicLong();
  private final AtomicLong nextMountId = new AtomicLong();
  private final InodeSource applied =
      new InodeSource() {
        @Override
        public InodeEntry get(long id) {
          return store.get(id);
        }

        @Override
        public InodeEntry child(long parentId, String name) {
          return store.child(parentId, name);
        }
      };

  public InodeTree(
      InodeStore store,
      MountTable mounts,
      UfsMetadataLoader loader,
      WorkerRegistry workers,
      SyncPolicy policy) {
    this.store = store;
    this.mounts = mounts;
    this.loader = loader;
    this.workers = workers;
    this.policy = policy;
  }

  public InodeStore store() {
    return store;
  }

  public MountTable mounts() {
    return mounts;
  }

  public UfsMetadataLoader loader() {
    return loader;
  }

  public WorkerRegistry workers() {
    return workers;
  }

  public SyncPolicy policy() {
    return policy;
  }

  /** The lock under whose write side journal batches apply (see the class comment). */
  public Lock readersLock() {
    return lock.writeLock();
  }

  // ---- reads of the applied namespace ----

  /**
   * Runs {@code body} on the applied inode of {@code path} when nothing has to be done first; empty
   * when the path's metadata must first be loaded from its under store, or checked against it
   * because its sync interval (the call's, or null for the mount's or the default) says it is due,
   * or when {@code body} answers null. Fails with NOT_FOUND when the path exists nowhere.
   */
  public <T> Optional<T> readIfCurrent(String path, SyncInterval call, ReadBody<T> body)
      throws IOException {
    lock.readLock().lock();
    try {
      Walk w = applied.walk(path);
      if (w.complete()) {
        return statusDue(w, call) ? Optional.empty() : Optional.ofNullable(body.apply(w.last()));
      }
      if (!loadable(w, call)) {
        throw StrataException.notFound(path);
      }
      return Optional.empty();
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Runs {@code body} on the applied inode of {@code path}; NOT_FOUND when there is none. */
  public <T> T readApplied(String path, ReadBody<T> body) throws IOException {
    lock.readLock().lock();
    try {
      Walk w = applied.walk(path);
      if (!w.complete()) {
        throw StrataException.notFound(path);
      }
      return body.apply(w.last());
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Walks a path through the applied namespace; loads nothing. */
  public Walk walk(String path) {
    lock.readLock().lock();
    try {
      return applied.walk(path);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The applied inode with that id, or null. */
  public InodeEntry get(long id) {
    lock.readLock().lock();
    try {
      return store.get(id);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** The current path of an applied inode, or null when it (or an ancestor) is gone. */
  public String pathOf(long id) {
    lock.readLock().lock();
    try {
      return applied.pathOf(id);
    } finally {
      lock.readLock().unlock();
    }
  }

  // ---- what must be loaded or checked ----

  /**
   * Whether the name after the end of an incomplete walk may exist in the store unseen: below a
   * directory whose children were never loaded, or whose listing is due for a sync.
   */
  boolean loadable(Walk w, SyncInterval call) {
    InodeEntry last = w.last();
    if (!last.getDirectory()) {
      return false;
    }
    return !last.getChildrenLoaded() || policy.listingDue(last, w.pathAt(w.found() + 1), call);
  }

  /** Whether the inode a complete walk ends at is due for a check against its store. */
  boolean statusDue(Walk w, SyncInterval call) {
    int depth = w.found();
    InodeEntry n = w.last();
    if (depth == 0 || (!n.getDirectory() && !n.getComplete())) {
      return false;
    }
    String path = w.pathAt(depth);
    // A mount point mirrors the root of its own store, which a sync never removes.
    if (mounts.at(path) != null) {
      return false;
    }
    return policy.statusDue(n, w.inodes().get(depth - 1), path, call);
  }

  // ---- ids ----

  /** A new inode id, above every id handed out or applied. */
  public long newInodeId() {
    long cur;
    long id;
    do {
      cur = nextId.get();
      id = Math.max(cur, store.nextInodeId());
    } while (!nextId.compareAndSet(cur, id + 1));
    return id;
  }

  /** A new mount id, above every id handed out or applied. */
  public long newMountId() {
    long cur;
    long id;
    do {
      cur = nextMountId.get();
      id = Math.max(cur, store.nextMountId());
    } while (!nextMountId.compareAndSet(cur, id + 1));
    return id;
  }

  // ---- walks below an inode ----

  /**
   * Calls {@code consumer} with every file at or below an inode, once each: below {@code top}, a
   * file is reached by its first name only, so another name (a hard link) of a file whose first
   * name is elsewhere is not visited. Reads the applied store; a change calls it while it holds the
   * write lock of {@code top}'s path, so nothing below is in flight.
   */
  public void forEachFileBelow(InodeEntry top, Consumer<InodeEntry> consumer) {
    Deque<InodeEntry> pending = new ArrayDeque<>();
    pending.push(top);
    while (!pending.isEmpty()) {
      InodeEntry n = pending.pop();
      if (!n.getDirectory()) {
        consumer.accept(n);
        continue;
      }
      long dirId = n.getId();
      store.forEachChild(
          dirId,
          c -> {
            InodeEntry child = store.get(c.id());
            if (child != null && child.getParentId() == dirId && child.getName().equals(c.name())) {
              pending.push(child);
            }
          });
    }
  }

  // ---- directory listings ----

  /**
   * One page of a directory's children in name order after {@code startAfter}, with each file's
   * blocks when asked; empty when the directory is gone.
   */
  public Page page(
      long dirId, String startAfter, int limit, boolean withBlocks, boolean includeHidden) {
    lock.readLock().lock();
    try {
      String dirPath = applied.pathOf(dirId);
      if (dirPath == null) {
        return new Page(List.of(), startAfter, true);
      }
      List<FileInfo> out = new ArrayList<>();
      List<InodeStore.Child> children = store.children(dirId, startAfter, limit);
      for (InodeStore.Child c : children) {
        if (!includeHidden && PathNames.isHidden(c.name())) {
          continue;
        }
        InodeEntry n = store.get(c.id());
        if (n != null) {
          out.add(info(n, PathNames.join(dirPath, c.name()), withBlocks));
        }
      }
      String last = children.isEmpty() ? startAfter : children.get(children.size() - 1).name();
      return new Page(out, last, children.size() < limit);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * One page of a directory's children in name order.
   *
   * @param files the children's statuses, hidden ones left out unless asked for
   * @param last the name of the last child read, hidden or not: where the next page starts
   * @param end whether no child follows {@code last}
   */
  public record Page(List<FileInfo> files, String last, boolean end) {}

  /** Up to {@code limit} child inodes of a directory in name order after {@code startAfter}. */
  List<InodeEntry> childrenPage(long dirId, String startAfter, int limit) {
    lock.readLock().lock();
    try {
      List<InodeEntry> out = new ArrayList<>();
      for (InodeStore.Child c : store.children(dirId, startAfter, limit)) {
        InodeEntry n = store.get(c.id());
        if (n != null) {
          out.add(n);
        }
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Whether an id names an existing file. Takes no lock, so worker heartbeats never wait behind an
   * apply.
   */
  public boolean isFile(long id) {
    InodeEntry n = store.contentOwner(id);
    return n != null && !n.getDirectory();
  }

  /** The id a file's current content is named by (its blocks' file id): its data id or own id. */
  public static long dataId(InodeEntry n) {
    return n.getDataId() != 0 ? n.getDataId() : n.getId();
  }

  // ---- the client's view ----

  /** The FileInfo of an inode at a path. */
  public FileInfo info(InodeEntry n, String path) {
    return info(n, path, false);
  }

  /**
   * The FileInfo of an inode at a path; with {@code withBlocks}, a complete file's blocks and the
   * live workers that hold each ({@link FileInfo#getBlocksList}).
   */
  public FileInfo info(InodeEntry n, String path, boolean withBlocks) {
    MountTable.Resolution r = mounts.resolve(path);
    long dataId = dataId(n);
    // The name is the path's: a file with several names (hard links) has one inode.
    FileInfo.Builder b =
        FileInfo.newBuilder()
            .setFileId(dataId)
            .setPath(path)
            .setName(path.equals(PathNames.ROOT) ? n.getName() : PathNames.name(path))
            .setDirectory(n.getDirectory())
            .setLength(n.getLength())
            .setBlockSize(n.getBlockSize())
            .setModificationTimeMs(n.getModificationTimeMs())
            .setMode(n.getMode())
            .setOwner(n.getOwner())
            .setGroup(n.getGroup())
            .setComplete(n.getComplete())
            .setUfsPath(r.ufsUri())
            .setMountId(r.mount().getMountId())
            .setUfsFingerprint(n.getUfsFingerprint())
            .setSyncIntervalMs(policy.interval(r.mount()).millis())
            .putAllXattrs(n.getXattrsMap())
            .setTtlMs(n.getTtlMs())
            .setTtlAction(n.getTtlAction())
            .setFileType(n.getFileType())
            .setSymlinkTarget(n.getSymlinkTarget())
            .setRdev(n.getRdev())
            .setInodeNumber(n.getId())
            .setNamespaceOnly(n.getNamespaceOnly())
            .setPersistenceState(n.getPersistenceState())
            .setLinkCount(
                n.getDirectory()
                    ? (int) Math.min(Integer.MAX_VALUE, 2 + store.subdirectoryCount(n.getId()))
                    : 1 + n.getLinksCount())
            .setModificationTimeNs(InodeTimes.modificationNs(n))
            .setChangeTimeNs(InodeTimes.changeNs(n))
            .setAccessTimeNs(InodeTimes.accessNs(n));
    if (!n.getDirectory() && n.getBlockSize() > 0) {
      b.setBlockCount(BlockIds.blockCount(n.getLength(), n.getBlockSize()));
      b.setCachedBytes(workers.cachedBytes(dataId, n.getLength(), n.getBlockSize()));
      if (withBlocks && n.getComplete()) {
        b.addAllBlocks(blocks(n));
      }
    }
    return b.build();
  }

  /** Every block of a file with the live workers that hold it. */
  public List<BlockInfo> blocks(InodeEntry file) {
    long blockSize = file.getBlockSize();
    int count = BlockIds.blockCount(file.getLength(), blockSize);
    List<BlockInfo> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      long blockId = BlockIds.blockId(dataId(file), i);
      long offset = i * blockSize;
      out.add(
          BlockInfo.newBuilder()
              .setBlockId(blockId)
              .setOffset(offset)
              .setLength(Math.min(blockSize, file.getLength() - offset))
              .addAllLocations(workers.locations(blockId))
              .build());
    }
    return out;
  }
}
