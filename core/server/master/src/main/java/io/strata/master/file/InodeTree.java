package io.strata.master.file;

import io.strata.common.BlockIds;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.journal.JournalSystem;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.FileInfo;
import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Consumer;

/**
 * The namespace tree over the {@link InodeStore}: path walks, loading of under-store metadata
 * on first access, journaled changes, and the {@link FileInfo} view of inodes.
 *
 * <p>Locking: one read-write lock for the whole tree. Reads (walks, pages, FileInfo) hold the
 * read lock and run concurrently; every change -- including inodes created for metadata loaded
 * from an under store -- holds the write lock, so changes are serialised. This is coarse but
 * simple and correct; per-path locks are the upgrade when write contention shows. The write
 * lock is held across the under-store metadata calls of the path being changed (stat, mkdir,
 * delete, rename) so that the store and the namespace change together. The one long operation,
 * loading a large directory listing, releases the lock between batches; names deleted or renamed
 * away meanwhile are remembered so the load does not bring them back.
 *
 * <p>Inode ids are allocated here, above every id ever applied, so ids (and so block ids) are
 * never reused.
 */
public final class InodeTree {
  /** Signature of a read done under the read lock on the inode of a path. */
  @FunctionalInterface
  public interface ReadBody<T> {
    T apply(InodeEntry inode) throws IOException;
  }

  /** Signature of a change done under the write lock. */
  @FunctionalInterface
  public interface WriteBody<T> {
    T call() throws IOException;
  }

  /** The inodes found along a path, from the root; shorter than the path when it ends early. */
  public record Walk(List<String> names, List<InodeEntry> inodes) {
    public boolean complete() {
      return inodes.size() == names.size() + 1;
    }

    /** The deepest inode found. */
    public InodeEntry last() {
      return inodes.get(inodes.size() - 1);
    }

    /** The path of the first {@code depth} names ("/" for 0). */
    public String pathAt(int depth) {
      return depth == 0 ? PathNames.ROOT : "/" + String.join("/", names.subList(0, depth));
    }

    /** Number of names found. */
    public int found() {
      return inodes.size() - 1;
    }
  }

  /** Names removed from a directory while its listing is being loaded. */
  private static final class LoadSession {
    int users;
    final Set<String> removed = new HashSet<>();
  }

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final InodeStore store;
  private final JournalSystem journal;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final int loadBatch;
  /** Guarded by the write lock. */
  private final Map<Long, LoadSession> loading = new HashMap<>();
  /** Guarded by the write lock. */
  private long nextId;

  public InodeTree(JournalSystem journal, MountTable mounts, UfsMetadataLoader loader,
      WorkerRegistry workers, int loadBatch) {
    this.journal = journal;
    this.store = journal.store();
    this.mounts = mounts;
    this.loader = loader;
    this.workers = workers;
    this.loadBatch = Math.max(1, loadBatch);
    this.nextId = store.nextInodeId();
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

  /** Creates the root inode from the root mount's store, if the namespace has none yet. */
  public void ensureRoot() throws IOException {
    write(() -> {
      if (store.get(InodeStore.ROOT_ID) == null) {
        MountTable.Resolution root = mounts.resolve(PathNames.ROOT);
        UfsStatus s = loader.stat(root).orElseThrow(() -> new StrataException(ErrorCode.NOT_FOUND,
            "The root under store " + root.ufsUri()
            + " does not exist: create it or set strata.master.root.ufs"));
        journal(List.of(inode(loader.toInode(s, InodeStore.ROOT_ID, 0, ""))));
      }
      return null;
    });
  }

  // ---- locking ----

  /** Runs a change under the write lock. */
  public <T> T write(WriteBody<T> body) throws IOException {
    lock.writeLock().lock();
    try {
      return body.call();
    } finally {
      lock.writeLock().unlock();
    }
  }

  /**
   * Runs {@code body} under the read lock with the inode of {@code path}, first loading the
   * path's metadata from its under store when the namespace has not seen it yet. Fails with
   * NOT_FOUND when the path exists nowhere.
   */
  public <T> T read(String path, ReadBody<T> body) throws IOException {
    lock.readLock().lock();
    try {
      Walk w = walk(path);
      if (w.complete()) {
        return body.apply(w.last());
      }
      if (!loadable(w)) {
        throw StrataException.notFound(path);
      }
    } finally {
      lock.readLock().unlock();
    }
    lock.writeLock().lock();
    boolean downgraded = false;
    try {
      InodeEntry inode = resolveLocked(path);
      // Downgrade so the body runs concurrently with other reads, on the state just loaded.
      lock.readLock().lock();
      lock.writeLock().unlock();
      downgraded = true;
      return body.apply(inode);
    } finally {
      if (downgraded) {
        lock.readLock().unlock();
      } else {
        lock.writeLock().unlock();
      }
    }
  }

  // ---- walks (caller holds a lock) ----

  /** Walks a normalized path through the namespace as it is; loads nothing. */
  public Walk walk(String path) {
    List<String> names = PathNames.components(path);
    List<InodeEntry> inodes = new ArrayList<>(names.size() + 1);
    InodeEntry cur = store.get(InodeStore.ROOT_ID);
    inodes.add(cur);
    for (String name : names) {
      if (!cur.getDirectory()) {
        break;
      }
      InodeEntry next = store.child(cur.getId(), name);
      if (next == null) {
        break;
      }
      inodes.add(next);
      cur = next;
    }
    return new Walk(names, inodes);
  }

  private static boolean loadable(Walk w) {
    InodeEntry last = w.last();
    return last.getDirectory() && !last.getChildrenLoaded();
  }

  /**
   * Walks a path, creating inodes for components that exist in the under store but not yet in
   * the namespace (only below directories whose children are not all known). Caller holds the
   * write lock.
   */
  public Walk walkLoading(String path) throws IOException {
    Walk w = walk(path);
    while (!w.complete() && loadable(w)) {
      int depth = w.found() + 1;
      String childPath = w.pathAt(depth);
      Optional<UfsStatus> s = loader.stat(mounts.resolve(childPath));
      if (s.isEmpty()) {
        break;
      }
      String name = w.names().get(depth - 1);
      InodeEntry.Builder child = loader.toInode(s.get(), newInodeId(), w.last().getId(), name);
      journal(List.of(inode(child)));
      loader.countLoaded(1);
      w.inodes().add(child.build());
    }
    return w;
  }

  /** The inode of a path, loading it when needed; NOT_FOUND otherwise. Write lock held. */
  public InodeEntry resolveLocked(String path) throws IOException {
    Walk w = walkLoading(path);
    if (!w.complete()) {
      throw StrataException.notFound(path);
    }
    return w.last();
  }

  /** The current path of an inode, or null when it (or an ancestor) no longer exists. */
  public String pathOf(long id) {
    List<String> names = new ArrayList<>();
    long cur = id;
    for (int depth = 0; cur != InodeStore.ROOT_ID; depth++) {
      InodeEntry n = store.get(cur);
      if (n == null || depth > 10_000) {
        return null;
      }
      names.add(n.getName());
      cur = n.getParentId();
    }
    StringBuilder path = new StringBuilder();
    for (int i = names.size() - 1; i >= 0; i--) {
      path.append('/').append(names.get(i));
    }
    return path.length() == 0 ? PathNames.ROOT : path.toString();
  }

  // ---- changes (caller holds the write lock) ----

  public long newInodeId() {
    long id = Math.max(nextId, store.nextInodeId());
    nextId = id + 1;
    return id;
  }

  public long newMountId() {
    return store.nextMountId();
  }

  /** Journals and applies entries; the mount table follows mount entries. */
  public void journal(List<JournalEntry.Builder> entries) throws StrataException {
    List<JournalEntry> written = journal.write(entries);
    for (JournalEntry e : written) {
      if (e.hasAddMount() || e.hasDeleteMount()) {
        mounts.reload(store.mounts());
        break;
      }
    }
  }

  public static JournalEntry.Builder inode(InodeEntry.Builder inode) {
    return JournalEntry.newBuilder().setInode(inode);
  }

  /** Records that a child left a directory, so a listing being loaded does not restore it. */
  public void noteRemoved(long parentId, String name) {
    LoadSession s = loading.get(parentId);
    if (s != null) {
      s.removed.add(name);
    }
  }

  /**
   * Whether a directory has no children, in the namespace and -- when its children were never
   * loaded -- in its under store. Write lock held.
   */
  public boolean isEmpty(InodeEntry dir, String path) throws IOException {
    if (store.hasChildren(dir.getId())) {
      return false;
    }
    if (dir.getChildrenLoaded()) {
      return true;
    }
    MountTable.Resolution r = mounts.resolve(path);
    try (UnderFileSystem.CloseableIterator<UfsStatus> it =
        loader.store(r.mount()).list(r.ufsUri())) {
      while (it.hasNext()) {
        if (UfsMetadataLoader.validName(it.next().name())) {
          return false;
        }
      }
      return true;
    } catch (NoSuchFileException e) {
      return true;
    }
  }

  /** Calls {@code consumer} with every file at or below an inode. A lock is held. */
  public void forEachFileBelow(InodeEntry top, Consumer<InodeEntry> consumer) {
    Deque<InodeEntry> pending = new ArrayDeque<>();
    pending.push(top);
    while (!pending.isEmpty()) {
      InodeEntry n = pending.pop();
      if (!n.getDirectory()) {
        consumer.accept(n);
        continue;
      }
      store.forEachChildId(n.getId(), id -> {
        InodeEntry child = store.get(id);
        if (child != null) {
          pending.push(child);
        }
      });
    }
  }

  // ---- directory listings ----

  /**
   * Makes sure every child of a directory is in the namespace, loading the under-store listing
   * in batches when it never was. The caller holds no lock.
   */
  public void ensureChildrenLoaded(String path) throws IOException {
    // Most listings are of directories already loaded: find out under the shared lock.
    if (!read(path, n -> n.getDirectory() && !n.getChildrenLoaded())) {
      return;
    }
    long dirId;
    MountTable.Resolution where;
    LoadSession session;
    lock.writeLock().lock();
    try {
      InodeEntry dir = resolveLocked(path);
      if (!dir.getDirectory() || dir.getChildrenLoaded()) {
        return;
      }
      dirId = dir.getId();
      where = mounts.resolve(path);
      session = loading.computeIfAbsent(dirId, k -> new LoadSession());
      session.users++;
    } finally {
      lock.writeLock().unlock();
    }
    try {
      loadChildren(dirId, where, session);
    } finally {
      write(() -> {
        if (--session.users == 0) {
          loading.remove(dirId);
        }
        return null;
      });
    }
  }

  private void loadChildren(long dirId, MountTable.Resolution where, LoadSession session)
      throws IOException {
    UnderFileSystem ufs = loader.store(where.mount());
    List<UfsStatus> batch = new ArrayList<>(loadBatch);
    // The listing is read without the lock: a store may take long to list a large directory.
    try (UnderFileSystem.CloseableIterator<UfsStatus> it = ufs.list(where.ufsUri())) {
      while (it.hasNext()) {
        batch.add(it.next());
        if (batch.size() >= loadBatch) {
          if (!addLoaded(dirId, batch, session)) {
            return;
          }
          batch.clear();
        }
      }
    }
    if (!addLoaded(dirId, batch, session)) {
      return;
    }
    write(() -> {
      InodeEntry dir = store.get(dirId);
      if (dir != null && !dir.getChildrenLoaded()) {
        journal(List.of(inode(dir.toBuilder().setChildrenLoaded(true))));
      }
      return null;
    });
  }

  /** Creates inodes for one batch of a listing; false when the load should stop. */
  private boolean addLoaded(long dirId, List<UfsStatus> batch, LoadSession session)
      throws IOException {
    return write(() -> {
      InodeEntry dir = store.get(dirId);
      if (dir == null || dir.getChildrenLoaded()) {
        return false;
      }
      List<JournalEntry.Builder> entries = new ArrayList<>();
      for (UfsStatus s : batch) {
        String name = s.name();
        if (UfsMetadataLoader.validName(name) && !session.removed.contains(name)
            && store.childId(dirId, name) < 0) {
          entries.add(inode(loader.toInode(s, newInodeId(), dirId, name)));
        }
      }
      journal(entries);
      loader.countLoaded(entries.size());
      return true;
    });
  }

  /**
   * One page of a directory's children in name order after {@code startAfter}; empty when the
   * directory is gone. Takes the read lock.
   */
  public List<FileInfo> page(long dirId, String startAfter, int limit) {
    lock.readLock().lock();
    try {
      String dirPath = pathOf(dirId);
      if (dirPath == null) {
        return List.of();
      }
      List<FileInfo> out = new ArrayList<>();
      for (InodeStore.Child c : store.children(dirId, startAfter, limit)) {
        InodeEntry n = store.get(c.id());
        if (n != null) {
          out.add(info(n, PathNames.join(dirPath, c.name())));
        }
      }
      return out;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Whether an id names an existing file. Takes no lock, so worker heartbeats never wait behind
   * a long namespace change.
   */
  public boolean isFile(long id) {
    InodeEntry n = store.peek(id);
    return n != null && !n.getDirectory();
  }

  // ---- the client's view ----

  /** The FileInfo of an inode at a path. A lock is held. */
  public FileInfo info(InodeEntry n, String path) {
    MountTable.Resolution r = mounts.resolve(path);
    FileInfo.Builder b = FileInfo.newBuilder().setFileId(n.getId()).setPath(path)
        .setName(n.getName()).setDirectory(n.getDirectory()).setLength(n.getLength())
        .setBlockSize(n.getBlockSize()).setModificationTimeMs(n.getModificationTimeMs())
        .setMode(n.getMode()).setOwner(n.getOwner()).setGroup(n.getGroup())
        .setComplete(n.getComplete()).setUfsPath(r.ufsUri()).setMountId(r.mount().getMountId())
        .setUfsFingerprint(n.getUfsFingerprint());
    if (!n.getDirectory() && n.getBlockSize() > 0) {
      b.setBlockCount(BlockIds.blockCount(n.getLength(), n.getBlockSize()));
      b.setCachedBytes(workers.cachedBytes(n.getId(), n.getLength(), n.getBlockSize()));
    }
    return b.build();
  }
}
