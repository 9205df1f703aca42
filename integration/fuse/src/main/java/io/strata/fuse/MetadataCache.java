package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.client.CloseableIterator;
import io.strata.common.NameOrder;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The mount's cache of path statuses, found and missing, each file's with its blocks, so that the
 * upcalls of reading a file (lookup, getattr, open, read) cost no master call once its folder has
 * been listed.
 *
 * <p>Freshness. An answer is used
 *
 * <ul>
 *   <li>within {@code ttl} of being loaded, always (the bound that holds whatever else fails);
 *   <li>after that, while the master's change stream is in step ({@link #watchLive}), for as long
 *       as the master itself trusts the path without checking its under store -- the path's sync
 *       interval ({@link FileInfo#getSyncIntervalMs()}): for ever under {@code never}, the default.
 *       A change made through Strata arrives as a notice ({@link #changed}) and drops the entry, so
 *       an unchanged entry stays as long as memory allows, and a changed one goes within the
 *       stream's delay;
 *   <li>never past {@code ttl} for a missing path: a file can appear in an under store, which no
 *       notice reports.
 * </ul>
 *
 * <p>Listings. A folder listed through the mount (readdir), or by the first lookup of a name in a
 * folder not listed yet, puts every child's status and marks the folder listed, so that a lookup of
 * a name it does not hold answers NOT_FOUND without a call. The first lookup in an unlisted folder
 * starts one listing of the folder on a background thread and waits only until the listing has
 * passed its name; every lookup in that folder meanwhile waits for the same listing, so a loader
 * that reads names from an index costs one listing per folder, not a call per file. Such a listing
 * only lists what the master has loaded already (a folder it never listed is left to per-path
 * lookups, which find files added to the under store since), and it stops after {@code maxEntries /
 * 2} children (the folder is then not marked listed, and not listed again for a while), so one huge
 * folder cannot flush the cache.
 *
 * <p>Races: an answer loaded while a notice of its path arrived, or while the mount itself changed
 * it, is dropped right after it was put (see {@link RecentChanges}), and a folder is marked listed
 * only if no child changed and no entry was evicted while it was listed. Errors other than
 * NOT_FOUND are never cached. At most {@code maxEntries} paths are held; a folder loses its mark
 * when one of its children is evicted. With a TTL of zero the cache is off and every call goes to
 * the loader. Thread-safe.
 */
public final class MetadataCache {
  /** Loads the status of a namespace path (with a file's blocks); NOT_FOUND when missing. */
  @FunctionalInterface
  public interface StatusLoader {
    FileInfo load(String path) throws StrataException;
  }

  /** Lists a folder's children (with each file's blocks), page by page. */
  @FunctionalInterface
  public interface ListingLoader {
    CloseableIterator<FileInfo> list(String dir) throws StrataException;
  }

  /** A status, or the message of a missing path's NOT_FOUND, and when it was loaded. */
  private record Entry(FileInfo info, String missing, long loadedNanos) {}

  private static final int RECENT_NOTICES = 4096;
  private static final String[] NO_NAMES = new String[0];

  private final StatusLoader loader;
  private final ListingLoader lister;
  private final Executor listingExecutor;
  private final long ttlNanos;
  private final long maxEntries;
  private final Ticker ticker;
  private final Cache<String, Entry> entries;

  /**
   * Folders whose every child is in {@link #entries}, each with the names its listing held, sorted
   * (a reference per name: the strings are the children's own). A name a listing held is never
   * answered missing on the word of that listing, only by the master: the listing proves the name
   * was there, while the absence of its entry may have other causes (an entry dropped while the
   * mark stayed), and a wrong "missing" is worse than a call.
   */
  private final ConcurrentNavigableMap<String, String[]> listed = new ConcurrentSkipListMap<>();

  /**
   * Every path {@link #entries} holds, in order, so that a removed or renamed folder's subtree is
   * found in proportion to its size rather than by a scan of the whole cache (an rm -rf of a large
   * tree dropped each of its folders' subtrees in turn). Added and removed only inside the map's
   * own atomic step for that path (see {@link #store}, {@link #unstore} and the eviction listener),
   * so that it never lacks a path the cache holds.
   */
  private final ConcurrentSkipListSet<String> keys = new ConcurrentSkipListSet<>();

  /** Files this mount created that the master does not know yet; never evicted or reset. */
  private final PendingCreates pendingCreates = new PendingCreates();

  /** Folders a lookup's listing stopped in (too many children), not listed again for a while. */
  private final Cache<String, Boolean> tooLarge;

  /** Folders the master has not loaded (lookups must not make it), not tried again for a while. */
  private final Cache<String, Boolean> notLoaded;

  private final ConcurrentHashMap<String, DirectoryFill> fills = new ConcurrentHashMap<>();
  private final RecentChanges recent = new RecentChanges(RECENT_NOTICES);
  private final LongAdder evictions = new LongAdder();
  private final LongAdder hits = new LongAdder();
  private final LongAdder loads = new LongAdder();
  private final LongAdder listings = new LongAdder();
  private final LongAdder notices = new LongAdder();
  private volatile boolean live;

  /** A cache without listings on lookup or a change stream: answers live for {@code ttl}. */
  public MetadataCache(StatusLoader loader, Duration ttl, long maxEntries) {
    this(loader, null, Runnable::run, ttl, maxEntries, Ticker.systemTicker());
  }

  /**
   * @param loader where statuses come from (normally the master)
   * @param lister lists a folder for a lookup in it; null to load each path on its own
   * @param listingExecutor runs those listings
   * @param ttl how long an answer is used at least, and at most while the stream is not in step;
   *     zero turns the cache off
   * @param maxEntries most paths held
   */
  public MetadataCache(
      StatusLoader loader,
      ListingLoader lister,
      Executor listingExecutor,
      Duration ttl,
      long maxEntries) {
    this(loader, lister, listingExecutor, ttl, maxEntries, Ticker.systemTicker());
  }

  MetadataCache(
      StatusLoader loader,
      ListingLoader lister,
      Executor listingExecutor,
      Duration ttl,
      long maxEntries,
      Ticker ticker) {
    this.loader = loader;
    this.lister = lister;
    this.listingExecutor = listingExecutor;
    this.ttlNanos = ttl.toNanos();
    this.maxEntries = maxEntries;
    this.ticker = ticker;
    this.entries =
        ttl.isZero() || ttl.isNegative() || maxEntries <= 0
            ? null
            : Caffeine.newBuilder()
                .maximumSize(maxEntries)
                // Called within the eviction, before the entry is gone: the folder stops answering
                // for its children before one of them is missing from the cache.
                .evictionListener(
                    (String path, Entry e, RemovalCause cause) -> {
                      evictions.increment();
                      keys.remove(path);
                      String parent = path == null ? null : PathNames.parent(path);
                      if (parent != null) {
                        listed.remove(parent);
                      }
                    })
                // Evictions run on the calling thread: they are small, and no pool thread is
                // needed.
                .executor(Runnable::run)
                .build();
    this.tooLarge =
        Caffeine.newBuilder()
            .maximumSize(1024)
            .expireAfterWrite(Duration.ofMinutes(10))
            .ticker(ticker)
            .build();
    this.notLoaded =
        Caffeine.newBuilder()
            .maximumSize(4096)
            .expireAfterWrite(Duration.ofSeconds(30))
            .ticker(ticker)
            .build();
  }

  /**
   * The status of {@code path}: a file this mount created and has not committed yet, else from the
   * cache while fresh.
   */
  public FileInfo get(String path) throws StrataException {
    FileInfo pending = pendingCreates.get(path);
    if (pending != null) {
      hits.increment();
      return pending;
    }
    if (entries == null) {
      loads.increment();
      return loader.load(path);
    }
    long now = ticker.read();
    long mark = recent.mark();
    Entry e = entries.getIfPresent(path);
    if (e != null && fresh(e, now)) {
      hits.increment();
      return answer(e);
    }
    String parent = PathNames.parent(path);
    if (e == null && parent != null) {
      if (listedNow(parent, now)) {
        Entry missing = putMissing(path, parent, now, mark);
        if (missing != null) {
          hits.increment();
          return answer(missing);
        }
      }
      if (lister != null
          && tooLarge.getIfPresent(parent) == null
          && notLoaded.getIfPresent(parent) == null) {
        FileInfo found = fromListing(parent, path);
        if (found != null) {
          return found;
        }
      }
    }
    return load(path);
  }

  /** Whether an answer loaded at {@code e.loadedNanos} may be used at {@code now}. */
  private boolean fresh(Entry e, long now) {
    long age = now - e.loadedNanos;
    if (age < ttlNanos) {
      return true;
    }
    if (e.info == null || !live) {
      return false;
    }
    long keepMs = e.info.getSyncIntervalMs();
    return keepMs < 0 || (keepMs > 0 && age < keepMs * 1_000_000L);
  }

  /** Whether a folder is listed and its own entry fresh, so its listing answers for it. */
  private boolean listedNow(String dir, long now) {
    if (!listed.containsKey(dir)) {
      return false;
    }
    Entry d = entries.getIfPresent(dir);
    return d != null && d.info != null && fresh(d, now);
  }

  private static FileInfo answer(Entry e) throws StrataException {
    if (e.missing != null) {
      // A fresh exception per call, so that callers never share a stack trace.
      throw new StrataException(ErrorCode.NOT_FOUND, e.missing);
    }
    return e.info;
  }

  /**
   * Records {@code path} as missing on the word of its folder's listing, and returns what the cache
   * holds for it then; null when the folder stopped answering for its children meanwhile (a change
   * of one of them came), so that the caller asks the master. Never overwrites a status put
   * meanwhile. Races with {@link #drop}, which removes the folder's mark before the entry: either
   * this sees the mark gone and takes its entry back, or the drop comes after and removes the entry
   * itself. A reset since {@code mark} (taken before the caller read the entry) takes it back too:
   * the folder may have been listed again since, by a listing that put the name after the caller
   * found it absent and the reset took it away.
   */
  private Entry putMissing(String path, String dir, long now, long mark) {
    Entry missing = new Entry(null, "Path does not exist: " + path, now);
    Entry present = storeIfAbsent(path, missing);
    if (present != null) {
      return present;
    }
    String[] names = listed.get(dir);
    if (names == null
        || Arrays.binarySearch(names, PathNames.name(path)) >= 0
        || recent.changedSince(path, mark, false)) {
      unstore(path, missing);
      return null;
    }
    return missing;
  }

  /**
   * Waits for a listing of {@code dir} (started now, or by another lookup) to pass the name of
   * {@code path}, and answers from what it put. Null when the listing cannot tell (it failed,
   * stopped early, or {@code dir} is not a folder): the caller loads the path on its own.
   */
  private FileInfo fromListing(String dir, String path) throws StrataException {
    DirectoryFill fill = fills.get(dir);
    if (fill == null) {
      DirectoryFill mine = new DirectoryFill(dir);
      fill = fills.putIfAbsent(dir, mine);
      if (fill == null) {
        fill = mine;
        try {
          listingExecutor.execute(mine);
        } catch (RejectedExecutionException e) {
          // The mount is shutting down.
          fills.remove(dir, mine);
          return null;
        }
      }
    }
    boolean over = fill.awaitPast(PathNames.name(path));
    long mark = recent.mark();
    Entry e = entries.getIfPresent(path);
    long now = ticker.read();
    if (e != null && fresh(e, now)) {
      hits.increment();
      return answer(e);
    }
    if (over && e == null && listedNow(dir, now)) {
      Entry missing = putMissing(path, dir, now, mark);
      if (missing != null) {
        hits.increment();
        return answer(missing);
      }
    }
    return null;
  }

  private FileInfo load(String path) throws StrataException {
    loads.increment();
    long mark = recent.mark();
    long now = ticker.read();
    Entry e;
    try {
      e = new Entry(loader.load(path), null, now);
    } catch (StrataException ex) {
      if (ex.code() != ErrorCode.NOT_FOUND) {
        throw ex;
      }
      e = new Entry(null, ex.getMessage(), now);
    }
    store(path, e);
    if (recent.changedSince(path, mark, false)) {
      unstore(path, e);
    }
    return answer(e);
  }

  /** A position to give {@link #put(String, FileInfo, long)}, taken before asking the master. */
  public long mark() {
    return recent.mark();
  }

  /**
   * Records a status learnt elsewhere (a listing, the answer to a change) as fresh; it is not kept
   * when a notice of the path arrived since {@code mark} was taken.
   */
  public void put(String path, FileInfo info, long mark) {
    if (entries != null) {
      Entry e = new Entry(info, null, ticker.read());
      store(path, e);
      if (recent.changedSince(path, mark, false)) {
        unstore(path, e);
      }
    }
  }

  /**
   * Records the status {@code path} has after a change this mount made to it (asked of the master
   * from {@code mark} on). The change is recorded like a notice, so that a listing or load that
   * began before it and ends after it cannot put the old status back; the master's own notice may
   * come later than that answer, or, for this mount's changes, be skipped.
   */
  public void putOwn(String path, FileInfo info, long mark) {
    recordOwn(path, info, mark);
  }

  /** {@link #putOwn}; the position after the change was recorded, or -1 when it was not kept. */
  private long recordOwn(String path, FileInfo info, long mark) {
    if (entries == null) {
      return -1;
    }
    boolean noticed = recent.changedSince(path, mark, false);
    recent.add(path, false);
    long recorded = recent.mark();
    if (noticed) {
      drop(path);
      return -1;
    }
    store(path, new Entry(info, null, ticker.read()));
    return recorded;
  }

  /**
   * Records a folder this mount just made: its status, and that it is listed (it has no child), so
   * lookups of names in it answer from the cache.
   */
  public void putNewFolder(String path, FileInfo info, long mark) {
    long recorded = recordOwn(path, info, mark);
    if (recorded < 0) {
      return;
    }
    listed.put(path, NO_NAMES);
    // A notice of the folder or of a name in it since the record: its listing is not known.
    if (recent.changedSince(path, recorded, true)) {
      listed.remove(path);
    }
  }

  /**
   * Records that this mount just removed {@code path}: the name is missing, and a listing of its
   * folder, if the cache holds one, stays complete.
   */
  public void removed(String path) {
    if (entries == null) {
      return;
    }
    // Recorded like a notice, so that a listing begun before cannot put the name back.
    recent.add(path, false);
    store(path, new Entry(null, "Path does not exist: " + path, ticker.read()));
  }

  /**
   * Records that this mount just removed the folder {@code path} (or moved it away): nothing below
   * it answers from the cache any more, and the name is missing; a listing of its parent stays
   * complete.
   */
  public void removedTree(String path) {
    if (entries == null) {
      return;
    }
    recent.add(path, true);
    listed.remove(path);
    dropBelow(path);
    removed(path);
  }

  /**
   * A name in folder {@code path} was added, removed or renamed by this mount at {@code nowNs}: the
   * folder's cached status takes the new modification and change times, in place, so its listing
   * stays usable (the master set the same change a few microseconds apart).
   */
  public void folderChanged(String path, long nowNs) {
    folderChanged(path, nowNs, 0);
  }

  /**
   * As {@link #folderChanged(String, long)}, the folder also gaining ({@code subfolders} > 0) or
   * losing subfolders, which its link count counts.
   */
  public void folderChanged(String path, long nowNs, int subfolders) {
    if (entries == null) {
      return;
    }
    entries
        .asMap()
        .computeIfPresent(
            path,
            (k, e) -> {
              if (e.info == null) {
                return e;
              }
              FileInfo.Builder b =
                  e.info.toBuilder()
                      .setModificationTimeMs(nowNs / 1_000_000L)
                      .setModificationTimeNs(nowNs)
                      .setChangeTimeNs(nowNs);
              if (subfolders != 0 && b.getLinkCount() > 0) {
                b.setLinkCount(Math.max(2, b.getLinkCount() + subfolders));
              }
              return new Entry(b.build(), null, e.loadedNanos);
            });
  }

  /** Starts a listing of {@code dir} whose children are put as they come (readdir). */
  public Listing startListing(String dir) {
    return new Listing(dir);
  }

  /** The children of one listing of a folder, put into the cache as they come. */
  public final class Listing {
    private final String dir;
    private final long mark = recent.mark();
    private final long evictionsAtStart = evictions.sum();

    /** The names put; only the thread listing adds them, and it finishes the listing. */
    private final List<String> names = new ArrayList<>();

    private Listing(String dir) {
      this.dir = dir;
      listings.increment();
    }

    /** Puts one child's status. */
    public void add(FileInfo child) {
      names.add(child.getName());
      put(PathNames.join(dir, child.getName()), child, mark);
    }

    /** How many children were put. */
    int count() {
      return names.size();
    }

    /**
     * Ends the listing; {@code whole} when every child was put, which marks the folder listed
     * unless a child changed or an entry was evicted meanwhile.
     */
    public void finish(boolean whole) {
      if (!whole || entries == null || outOfDate()) {
        return;
      }
      String[] sorted = names.toArray(NO_NAMES);
      // Listings come sorted already (in UTF-8 order, which differs from String's only rarely):
      // the sort is a pass that checks it.
      Arrays.sort(sorted);
      listed.put(dir, sorted);
      // Checked again after the mark is set: a notice or an eviction records itself before
      // it removes the mark, so one that came before is seen here and one that comes after
      // removes the mark itself. (The check before keeps the mark from showing at all for a
      // listing known to be out of date, such as one a reset overtook.)
      if (outOfDate()) {
        listed.remove(dir);
      }
    }

    private boolean outOfDate() {
      return evictions.sum() != evictionsAtStart || recent.changedSince(dir, mark, true);
    }
  }

  /** One listing of a folder started by a lookup, which lookups of its names wait for. */
  private final class DirectoryFill implements Runnable {
    private final String dir;

    /** The last name put, or null before the first. Guarded by this. */
    private String passed;

    private boolean done;

    DirectoryFill(String dir) {
      this.dir = dir;
    }

    @Override
    public void run() {
      Listing listing = startListing(dir);
      boolean whole = false;
      try (CloseableIterator<FileInfo> children = lister.list(dir)) {
        long limit = Math.max(1, maxEntries / 2);
        while (children.hasNext()) {
          FileInfo child = children.next();
          if (!child.getPath().equals(dir)) {
            listing.add(child);
          }
          advance(child.getName());
          if (listing.count() >= limit) {
            tooLarge.put(dir, Boolean.TRUE);
            break;
          }
        }
        whole = !children.hasNext();
      } catch (StrataException e) {
        if (e.code() == ErrorCode.FAILED_PRECONDITION) {
          // The master never loaded this folder: lookups in it load single paths, which is
          // what makes files added to the under store appear on first access.
          notLoaded.put(dir, Boolean.TRUE);
        }
      } catch (RuntimeException e) {
        // The lookups that wait load their paths one by one instead.
      } finally {
        listing.finish(whole && (listing.count() > 0 || isEmptyFolder()));
        synchronized (this) {
          done = true;
          notifyAll();
        }
        fills.remove(dir, this);
      }
    }

    /** Whether the folder (listed with no child) is a folder, as opposed to a missing path. */
    private boolean isEmptyFolder() {
      Entry d = entries.getIfPresent(dir);
      return d != null && d.info != null && d.info.getDirectory();
    }

    private synchronized void advance(String name) {
      passed = name;
      notifyAll();
    }

    /**
     * Waits until the listing has passed {@code name} (in the master's order: UTF-8 bytes) or
     * ended; true when it did either, false when it took too long.
     */
    synchronized boolean awaitPast(String name) {
      long deadline = System.nanoTime() + LISTING_WAIT_NANOS;
      while (!done && (passed == null || NameOrder.compare(passed, name) < 0)) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        try {
          wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
      return done;
    }
  }

  /** Longest a lookup waits for a folder's listing before it asks for its own path. */
  private static final long LISTING_WAIT_NANOS = Duration.ofSeconds(30).toNanos();

  /**
   * Forgets what is known of {@code path}, and that its folder is listed: the mount changed it. The
   * change is recorded like a notice, because the master's own notice may come later than a listing
   * or load that started before the change and ends after it; without the record, that answer (say,
   * "missing" for a folder just made) would be put back and kept.
   */
  public void invalidate(String path) {
    recent.add(path, false);
    drop(path);
  }

  /**
   * The folder's mark goes before the entry: a lookup that finds the entry gone then finds the
   * folder no longer answering for it too (see {@link #putMissing}).
   */
  private void drop(String path) {
    if (entries != null) {
      String parent = PathNames.parent(path);
      if (parent != null) {
        listed.remove(parent);
      }
      listed.remove(path);
      unstore(path);
    }
  }

  /**
   * Forgets {@code path} and everything below it: after a rename or removal of a directory, the old
   * paths of its descendants must not answer from the cache.
   */
  public void invalidateTree(String path) {
    recent.add(path, true);
    dropTree(path);
  }

  private void dropTree(String path) {
    if (entries != null) {
      drop(path);
      dropBelow(path);
    }
  }

  /** Forgets everything below {@code path} (not the path itself), listings first. */
  private void dropBelow(String path) {
    String prefix = path.endsWith("/") ? path : path + "/";
    // Names sort after their folder's "/" and before "/" followed by the highest char.
    String end = prefix + Character.MAX_VALUE;
    listed.subMap(prefix, end).clear();
    for (String k : keys.subSet(prefix, end)) {
      unstore(k);
    }
  }

  /** Puts {@code e} for {@code path}, indexed in {@link #keys} in the same atomic step. */
  private void store(String path, Entry e) {
    entries
        .asMap()
        .compute(
            path,
            (k, old) -> {
              keys.add(k);
              return e;
            });
  }

  /** Puts {@code e} unless the path holds an entry, which is returned then (else null). */
  private Entry storeIfAbsent(String path, Entry e) {
    Entry[] present = new Entry[1];
    entries
        .asMap()
        .compute(
            path,
            (k, old) -> {
              if (old != null) {
                present[0] = old;
                return old;
              }
              keys.add(k);
              return e;
            });
    return present[0];
  }

  /** Removes what the cache holds for {@code path}, and its index key. */
  private void unstore(String path) {
    entries
        .asMap()
        .computeIfPresent(
            path,
            (k, old) -> {
              keys.remove(k);
              return null;
            });
  }

  /** Removes {@code e} for {@code path} if it is still what the cache holds there. */
  // The very entry, not an equal one: a newer entry with the same content must stay.
  @SuppressWarnings("ReferenceEquality")
  private void unstore(String path, Entry e) {
    entries
        .asMap()
        .computeIfPresent(
            path,
            (k, old) -> {
              if (old != e) {
                return old;
              }
              keys.remove(k);
              return null;
            });
  }

  /**
   * Whether a change this mount made to {@code path} is in the cache already, so that the master's
   * notice of it can be passed over: the cache holds the path (as present or missing), and not as a
   * file with several names, whose other names the change reaches too and which this mount may not
   * all know.
   */
  public boolean holdsOwnChange(String path) {
    if (entries == null) {
      return false;
    }
    Entry e = entries.getIfPresent(path);
    return e != null && (e.info == null || e.info.getDirectory() || e.info.getLinkCount() <= 1);
  }

  /**
   * A notice from the master's change stream: {@code path} (and with {@code subtree}, all below)
   * changed.
   */
  public void changed(String path, boolean subtree) {
    notices.increment();
    recent.add(path, subtree);
    if (subtree) {
      dropTree(path);
    } else {
      drop(path);
    }
  }

  /** Files this mount created that the master does not know yet (see {@link #get}). */
  PendingCreates pendingCreates() {
    return pendingCreates;
  }

  /** Forgets every status: changes were missed. */
  public void reset() {
    recent.reset();
    if (entries != null) {
      // Marks first, as in drop(): entries are removed one by one, and a lookup
      // meanwhile must not find a folder still marked listed, its own entry not yet removed,
      // and a child's already gone -- it would answer that child missing.
      listed.clear();
      for (String k : keys) {
        unstore(k);
      }
      // Again after: a listing or lookup that began while entries were being removed counts as
      // out of date, as one that began before does.
      recent.reset();
    }
  }

  /**
   * Whether the change stream is in step: while it is, unchanged entries outlive the TTL; while it
   * is not, every entry is held to the TTL.
   */
  public void watchLive(boolean inStep) {
    this.live = inStep;
  }

  /** Whether the change stream is in step. */
  public boolean watchLive() {
    return live;
  }

  /** Whether answers are cached at all (false with a TTL of zero). */
  public boolean enabled() {
    return entries != null;
  }

  /** Answers given from the cache. */
  long hits() {
    return hits.sum();
  }

  /** Statuses loaded one path at a time (a master call each). */
  long loads() {
    return loads.sum();
  }

  /** Folder listings put into the cache (readdir and lookups). */
  long listings() {
    return listings.sum();
  }

  /** Change notices received. */
  long notices() {
    return notices.sum();
  }

  /** How many paths are held now (approximate; for tests and status). */
  long size() {
    if (entries == null) {
      return 0;
    }
    entries.cleanUp();
    return entries.estimatedSize();
  }
}
