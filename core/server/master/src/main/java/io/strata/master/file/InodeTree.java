package io.strata.master.file;

import io.strata.common.BlockIds;
import io.strata.common.PathNames;
import io.strata.common.Version;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.master.block.WorkerRegistry;
import io.strata.master.journal.CallIdentity;
import io.strata.master.journal.JournalSystem;
import io.strata.master.metastore.InodeStore;
import io.strata.master.upgrade.ClusterLayout;
import io.strata.proto.BlockInfo;
import io.strata.proto.FileInfo;
import io.strata.proto.NamespaceChange;
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
 * The namespace tree over the {@link InodeStore}: path walks, loading and checking of
 * under-store metadata, journaled changes, and the {@link FileInfo} view of inodes.
 *
 * <p>Locking: one read-write lock for the whole tree. Reads (walks, pages, FileInfo) hold the
 * read lock and run concurrently; every change -- including inodes created for metadata loaded
 * from an under store -- holds the write lock, so changes are serialised. This is coarse but
 * simple and correct; per-path locks are the upgrade when write contention shows. The write
 * lock is held across the under-store metadata calls of the path being changed (stat, mkdir,
 * delete, rename) so that the store and the namespace change together. Checks of paths that
 * are due for a sync ask the store with no lock held and apply the answer under the write lock
 * only if nothing changed the path meanwhile; listings are synced by {@link ListingSync}, which
 * releases the lock between batches. While a directory's listing is loaded or synced, every
 * name changed in it through Strata is remembered in its {@link ListingSession}, so the sync
 * never undoes a create, delete or rename that raced it.
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

  /** Names changed through Strata in a directory while its listing is loaded or synced. */
  static final class ListingSession {
    private int users;
    private final Set<String> touched = new HashSet<>();

    /** Whether the name changed through Strata since the session opened. Write lock held. */
    boolean touched(String name) {
      return touched.contains(name);
    }
  }

  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final InodeStore store;
  private final JournalSystem journal;
  private final ChangeFeed changes;
  private final MountTable mounts;
  private final UfsMetadataLoader loader;
  private final WorkerRegistry workers;
  private final SyncPolicy policy;
  private final UfsReconciler reconciler;
  private final int loadBatch;
  /** Guarded by the write lock. */
  private final Map<Long, ListingSession> sessions = new HashMap<>();
  /** Guarded by the write lock. */
  private long nextId;

  /** @param loadBatch under-store entries applied per journal write when a listing is loaded */
  public InodeTree(JournalSystem journal, MountTable mounts, UfsMetadataLoader loader,
      WorkerRegistry workers, SyncPolicy policy, int loadBatch, ChangeFeed changes) {
    this.journal = journal;
    this.changes = changes;
    this.store = journal.store();
    this.mounts = mounts;
    this.loader = loader;
    this.workers = workers;
    this.policy = policy;
    this.reconciler = new UfsReconciler(this);
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

  public SyncPolicy policy() {
    return policy;
  }

  UfsReconciler reconciler() {
    return reconciler;
  }

  int loadBatch() {
    return loadBatch;
  }

  /**
   * The lock that applies of entries this master did not write itself (as a follower, or
   * inherited by a new leader) take, so they never run beside a read of the namespace.
   */
  public java.util.concurrent.locks.Lock replicaApplyLock() {
    return lock.writeLock();
  }

  /**
   * Creates the root inode from the root mount's store, if the namespace has none yet. A new
   * namespace starts at this release's metadata layout: there is no older master to go back to.
   */
  public void ensureRoot() throws IOException {
    write(() -> {
      if (store.get(InodeStore.ROOT_ID) == null) {
        MountTable.Resolution root = mounts.resolve(PathNames.ROOT);
        UfsStatus s;
        try {
          // The root folder may be a symbolic link to the real one.
          s = loader.store(root.mount()).getTargetStatus(root.ufsUri());
        } catch (NoSuchFileException e) {
          throw new StrataException(ErrorCode.NOT_FOUND, "The root under store "
              + root.ufsUri() + " does not exist: create it or set strata.master.root.ufs");
        }
        journal(List.of(inode(loader.toInode(s, InodeStore.ROOT_ID, 0, "")),
            ClusterLayout.finalizeEntry(Version.LAYOUT_VERSION)));
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
   * Runs {@code body} under the read lock with the inode of {@code path}. The path's metadata is
   * first loaded from its under store when the namespace has not seen it, and checked against
   * the store when its sync interval (the call's, or null for the mount's or the default) says
   * it is due. Fails with NOT_FOUND when the path exists nowhere.
   */
  public <T> T read(String path, SyncInterval call, ReadBody<T> body) throws IOException {
    InodeEntry due = null;
    lock.readLock().lock();
    try {
      Walk w = walk(path);
      if (w.complete()) {
        if (!statusDue(w, call)) {
          return body.apply(w.last());
        }
        due = w.last();
      } else if (!loadable(w, call)) {
        throw StrataException.notFound(path);
      }
    } finally {
      lock.readLock().unlock();
    }
    if (due != null) {
      reconciler.checkStatus(path, due);
      // Just checked: a name the store no longer has is not looked up there again.
      return readLoaded(path, SyncInterval.NEVER, body);
    }
    return loadAndRead(path, call, body);
  }

  /** {@link #read} with the mount's or the default sync interval. */
  public <T> T read(String path, ReadBody<T> body) throws IOException {
    return read(path, null, body);
  }

  /**
   * The inode of a path, loading what the namespace has not seen (or, under a directory whose
   * listing is due, what it may have missed), without checking the inode itself.
   */
  public InodeEntry resolve(String path, SyncInterval call) throws IOException {
    return readLoaded(path, call, n -> n);
  }

  /** The inode with that id, or null. Takes the read lock. */
  InodeEntry get(long id) {
    lock.readLock().lock();
    try {
      return store.get(id);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** Runs a body on the inode of a path, loading what is missing but checking nothing. */
  private <T> T readLoaded(String path, SyncInterval call, ReadBody<T> body) throws IOException {
    lock.readLock().lock();
    try {
      Walk w = walk(path);
      if (w.complete()) {
        return body.apply(w.last());
      }
      if (!loadable(w, call)) {
        throw StrataException.notFound(path);
      }
    } finally {
      lock.readLock().unlock();
    }
    return loadAndRead(path, call, body);
  }

  private <T> T loadAndRead(String path, SyncInterval call, ReadBody<T> body)
      throws IOException {
    lock.writeLock().lock();
    boolean downgraded = false;
    try {
      InodeEntry inode = resolveLocked(path, call);
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

  /**
   * Whether the name after the end of an incomplete walk may exist in the store unseen: below a
   * directory whose children were never loaded, or whose listing is due for a sync.
   */
  private boolean loadable(Walk w, SyncInterval call) {
    InodeEntry last = w.last();
    if (!last.getDirectory()) {
      return false;
    }
    return !last.getChildrenLoaded()
        || policy.listingDue(last, w.pathAt(w.found() + 1), call);
  }

  /** Whether the inode a complete walk ends at is due for a check against its store. */
  private boolean statusDue(Walk w, SyncInterval call) {
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

  /**
   * Walks a path, creating inodes for components that exist in the under store but not yet in
   * the namespace (only below directories whose children may be missing, see
   * {@link #loadable}). Caller holds the write lock.
   */
  public Walk walkLoading(String path, SyncInterval call) throws IOException {
    Walk w = walk(path);
    while (!w.complete() && loadable(w, call)) {
      int depth = w.found() + 1;
      String childPath = w.pathAt(depth);
      long now = System.currentTimeMillis();
      if (w.last().getChildrenLoaded()) {
        policy.countStatusCheck();
      }
      Optional<UfsStatus> s = loader.stat(mounts.resolve(childPath));
      if (s.isEmpty()) {
        break;
      }
      String name = w.names().get(depth - 1);
      InodeEntry.Builder child = loader.toInode(s.get(), newInodeId(), w.last().getId(), name,
          now);
      journalDiscovered(List.of(inode(child)));
      loader.countLoaded(1);
      if (child.getDirectory()) {
        policy.statusChecked(child.getId(), now);
      }
      w.inodes().add(child.build());
    }
    return w;
  }

  /** {@link #walkLoading(String, SyncInterval)} with the mount's or the default interval. */
  public Walk walkLoading(String path) throws IOException {
    return walkLoading(path, null);
  }

  /** The inode of a path, loading it when needed; NOT_FOUND otherwise. Write lock held. */
  public InodeEntry resolveLocked(String path) throws IOException {
    return resolveLocked(path, null);
  }

  private InodeEntry resolveLocked(String path, SyncInterval call) throws IOException {
    Walk w = walkLoading(path, call);
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

  /**
   * Journals and applies entries; the mount table follows mount entries. Names the entries
   * change in directories whose listing is being synced are remembered for that sync.
   */
  public void journal(List<JournalEntry.Builder> entries) throws StrataException {
    journal(entries, false);
  }

  /**
   * {@link #journal(List)} for what a load or sync found in an under store. New inodes in a
   * directory whose children were never loaded are not announced to watchers: nobody can hold
   * a listing of such a directory, only the absence of a name in it, which clients keep for
   * their time-to-live at most; and the first load of a large directory would otherwise stream
   * a change per child, each of which makes a client drop what a listing racing it put.
   */
  void journalDiscovered(List<JournalEntry.Builder> entries) throws StrataException {
    journal(entries, true);
  }

  private void journal(List<JournalEntry.Builder> entries, boolean discovered)
      throws StrataException {
    if (!sessions.isEmpty()) {
      noteTouched(entries);
    }
    // Paths are named before the entries apply: a removed or renamed inode has no path after.
    List<PathChange> described = describe(entries, discovered);
    // What a load or sync found was changed in the under store, not by the client whose call
    // found it: that client holds none of it yet, so its notices must not pass as its own.
    CallIdentity caller = discovered ? null : CallIdentity.current();
    String clientId = caller == null ? "" : caller.clientId();
    journal.write(entries, applied -> {
      if (!described.isEmpty()) {
        List<NamespaceChange> published = new ArrayList<>(described.size());
        for (PathChange c : described) {
          published.add(NamespaceChange.newBuilder().setPath(c.path()).setSubtree(c.subtree())
              .setSequence(applied.get(c.entry()).getSequence()).setClientId(clientId).build());
        }
        changes.publish(published);
      }
    });
  }

  /** A path that entry number {@code entry} of a batch changes, as watchers are told. */
  private record PathChange(int entry, String path, boolean subtree) {}

  /**
   * What each entry changes in the namespace as clients see it. Write lock held, before the
   * entries apply. An inode rewritten with only what clients do not see (its children loaded,
   * its last sync time) changes nothing. Entries of one batch may name inodes an earlier entry
   * of the same batch creates (a directory and its parents), so the paths of new directories
   * are remembered on the way.
   */
  private List<PathChange> describe(List<JournalEntry.Builder> entries, boolean discovered) {
    List<PathChange> out = new ArrayList<>();
    Map<Long, String> paths = new HashMap<>();
    for (int i = 0; i < entries.size(); i++) {
      JournalEntry.Builder e = entries.get(i);
      switch (e.getEntryCase()) {
        case INODE -> {
          InodeEntry n = e.getInode();
          InodeEntry before = store.get(n.getId());
          if (before != null && sameView(before, n)
              || discovered && before == null && inUnloadedDirectory(n)) {
            continue;
          }
          if (n.getId() == InodeStore.ROOT_ID) {
            out.add(new PathChange(i, PathNames.ROOT, false));
            continue;
          }
          String path = childPath(n.getParentId(), n.getName(), paths);
          if (path != null && n.getDirectory()) {
            paths.put(n.getId(), path);
          }
          // Every name a file has before or after the change shows it: its hard links share
          // the inode, and a name added or removed changes its folder's listing.
          for (String name : namePaths(before, n, paths)) {
            out.add(new PathChange(i, name, false));
          }
        }
        case DELETE_INODE -> {
          long id = e.getDeleteInode().getId();
          InodeEntry n = store.get(id);
          String path = n == null ? null : pathOf(id, paths);
          if (path != null) {
            out.add(new PathChange(i, path, n.getDirectory() && store.hasChildren(id)));
          }
        }
        case RENAME -> {
          long id = e.getRename().getId();
          InodeEntry n = store.get(id);
          String from = n == null ? null : pathOf(id, paths);
          String to = childPath(e.getRename().getNewParentId(), e.getRename().getNewName(),
              paths);
          if (from != null) {
            out.add(new PathChange(i, from, n.getDirectory()));
          }
          if (to != null) {
            out.add(new PathChange(i, to, n != null && n.getDirectory()));
          }
        }
        case ADD_MOUNT -> out.add(new PathChange(i, e.getAddMount().getMount().getPath(), true));
        case DELETE_MOUNT -> {
          String path = mounts.pathOf(e.getDeleteMount().getMountId());
          if (path != null) {
            out.add(new PathChange(i, path, true));
          }
        }
        default -> { }
      }
    }
    return out;
  }

  /** Whether an inode's directory never had its children loaded. */
  private boolean inUnloadedDirectory(InodeEntry n) {
    InodeEntry parent = store.get(n.getParentId());
    return parent != null && parent.getDirectory() && !parent.getChildrenLoaded();
  }

  /**
   * Whether two versions of an inode look the same to clients: they differ at most in what
   * clients never see (a directory's children loaded, a sync time, a version being written).
   */
  private static boolean sameView(InodeEntry a, InodeEntry b) {
    return hidden(a).equals(hidden(b));
  }

  private static InodeEntry hidden(InodeEntry n) {
    return n.toBuilder().clearChildrenLoaded().clearUfsSyncTimeMs().clearWritingDataId().build();
  }

  /** The paths of every name of an inode before ({@code before}, null: new) and after a change. */
  private List<String> namePaths(InodeEntry before, InodeEntry after, Map<Long, String> paths) {
    List<String> out = new ArrayList<>(2);
    for (InodeEntry n : before == null ? List.of(after) : List.of(before, after)) {
      addPath(out, childPath(n.getParentId(), n.getName(), paths));
      for (io.strata.proto.journal.LinkName l : n.getLinksList()) {
        addPath(out, childPath(l.getParentId(), l.getName(), paths));
      }
    }
    return out;
  }

  private static void addPath(List<String> out, String path) {
    if (path != null && !out.contains(path)) {
      out.add(path);
    }
  }

  private String childPath(long parentId, String name, Map<Long, String> paths) {
    String parent = pathOf(parentId, paths);
    return parent == null ? null : PathNames.join(parent, name);
  }

  /** {@link #pathOf(long)}, remembering directories' paths for the rest of a batch. */
  private String pathOf(long id, Map<Long, String> paths) {
    String known = paths.get(id);
    if (known == null) {
      known = pathOf(id);
      if (known != null) {
        paths.put(id, known);
      }
    }
    return known;
  }

  private void noteTouched(List<JournalEntry.Builder> entries) {
    for (JournalEntry.Builder e : entries) {
      switch (e.getEntryCase()) {
        case INODE -> touch(e.getInode().getParentId(), e.getInode().getName());
        case DELETE_INODE -> {
          InodeEntry n = store.get(e.getDeleteInode().getId());
          if (n != null) {
            touch(n.getParentId(), n.getName());
          }
        }
        case RENAME -> {
          InodeEntry n = store.get(e.getRename().getId());
          if (n != null) {
            touch(n.getParentId(), n.getName());
          }
          touch(e.getRename().getNewParentId(), e.getRename().getNewName());
        }
        default -> { }
      }
    }
  }

  private void touch(long parentId, String name) {
    ListingSession s = sessions.get(parentId);
    if (s != null) {
      s.touched.add(name);
    }
  }

  public static JournalEntry.Builder inode(InodeEntry.Builder inode) {
    return JournalEntry.newBuilder().setInode(inode);
  }

  /** Starts remembering the names changed in a directory. Write lock held. */
  ListingSession openSession(long dirId) {
    ListingSession s = sessions.computeIfAbsent(dirId, k -> new ListingSession());
    s.users++;
    return s;
  }

  /** Ends what {@link #openSession} started. Write lock held. */
  void closeSession(long dirId) {
    ListingSession s = sessions.get(dirId);
    if (s != null && --s.users == 0) {
      sessions.remove(dirId);
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

  /**
   * Calls {@code consumer} with every file at or below an inode, once each: below {@code top},
   * a file is reached by its first name only, so another name (a hard link) of a file whose
   * first name is elsewhere is not visited. A lock is held.
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
      store.forEachChild(dirId, c -> {
        InodeEntry child = store.get(c.id());
        if (child != null && child.getParentId() == dirId && child.getName().equals(c.name())) {
          pending.push(child);
        }
      });
    }
  }

  // ---- directory listings ----

  /**
   * One page of a directory's children in name order after {@code startAfter}, with each
   * file's blocks when asked; empty when the directory is gone. Takes the read lock.
   */
  public Page page(long dirId, String startAfter, int limit, boolean withBlocks,
      boolean includeHidden) {
    lock.readLock().lock();
    try {
      String dirPath = pathOf(dirId);
      if (dirPath == null) {
        return new Page(List.of(), startAfter, true);
      }
      List<FileInfo> out = new ArrayList<>();
      List<InodeStore.Child> children = store.children(dirId, startAfter, limit);
      for (InodeStore.Child c : children) {
        if (!includeHidden && c.name().equals(PathNames.UPLOADS_FOLDER)) {
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

  /**
   * Whether a directory has a child other than the hidden uploads folder, in the namespace
   * and -- when its children were never loaded -- in its under store. Write lock held.
   */
  public boolean hasVisibleChildren(InodeEntry dir, String path) throws IOException {
    for (InodeStore.Child c : store.children(dir.getId(), "", 2)) {
      if (!c.name().equals(PathNames.UPLOADS_FOLDER)) {
        return true;
      }
    }
    if (dir.getChildrenLoaded()) {
      return false;
    }
    MountTable.Resolution r = mounts.resolve(path);
    try (UnderFileSystem.CloseableIterator<UfsStatus> it =
        loader.store(r.mount()).list(r.ufsUri())) {
      while (it.hasNext()) {
        String name = it.next().name();
        if (UfsMetadataLoader.validName(name) && !name.equals(PathNames.UPLOADS_FOLDER)) {
          return true;
        }
      }
      return false;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

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
   * Whether an id names an existing file. Takes no lock, so worker heartbeats never wait behind
   * a long namespace change.
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

  /** The FileInfo of an inode at a path. A lock is held. */
  public FileInfo info(InodeEntry n, String path) {
    return info(n, path, false);
  }

  /**
   * The FileInfo of an inode at a path; with {@code withBlocks}, a complete file's blocks and
   * the live workers that hold each ({@link FileInfo#getBlocksList}). A lock is held.
   */
  public FileInfo info(InodeEntry n, String path, boolean withBlocks) {
    MountTable.Resolution r = mounts.resolve(path);
    long dataId = dataId(n);
    // The name is the path's: a file with several names (hard links) has one inode.
    FileInfo.Builder b = FileInfo.newBuilder().setFileId(dataId).setPath(path)
        .setName(path.equals(PathNames.ROOT) ? n.getName() : PathNames.name(path))
        .setDirectory(n.getDirectory()).setLength(n.getLength())
        .setBlockSize(n.getBlockSize()).setModificationTimeMs(n.getModificationTimeMs())
        .setMode(n.getMode()).setOwner(n.getOwner()).setGroup(n.getGroup())
        .setComplete(n.getComplete()).setUfsPath(r.ufsUri()).setMountId(r.mount().getMountId())
        .setUfsFingerprint(n.getUfsFingerprint())
        .setSyncIntervalMs(policy.interval(r.mount()).millis())
        .putAllXattrs(n.getXattrsMap())
        .setTtlMs(n.getTtlMs()).setTtlAction(n.getTtlAction())
        .setFileType(n.getFileType()).setSymlinkTarget(n.getSymlinkTarget()).setRdev(n.getRdev())
        .setInodeNumber(n.getId()).setNamespaceOnly(n.getNamespaceOnly())
        .setLinkCount(n.getDirectory() ? (int) Math.min(Integer.MAX_VALUE,
            2 + store.subdirectoryCount(n.getId())) : 1 + n.getLinksCount())
        .setModificationTimeNs(InodeTimes.modificationNs(n))
        .setChangeTimeNs(InodeTimes.changeNs(n)).setAccessTimeNs(InodeTimes.accessNs(n));
    if (!n.getDirectory() && n.getBlockSize() > 0) {
      b.setBlockCount(BlockIds.blockCount(n.getLength(), n.getBlockSize()));
      b.setCachedBytes(workers.cachedBytes(dataId, n.getLength(), n.getBlockSize()));
      if (withBlocks && n.getComplete()) {
        b.addAllBlocks(blocks(n));
      }
    }
    return b.build();
  }

  /** Every block of a file with the live workers that hold it. A lock is held. */
  public List<BlockInfo> blocks(InodeEntry file) {
    long blockSize = file.getBlockSize();
    int count = BlockIds.blockCount(file.getLength(), blockSize);
    List<BlockInfo> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      long blockId = BlockIds.blockId(dataId(file), i);
      long offset = i * blockSize;
      out.add(BlockInfo.newBuilder().setBlockId(blockId).setOffset(offset)
          .setLength(Math.min(blockSize, file.getLength() - offset))
          .addAllLocations(workers.locations(blockId)).build());
    }
    return out;
  }
}
