package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class MetadataCacheTest {
  final AtomicLong nanos = new AtomicLong(1);
  final Ticker ticker = nanos::get;
  final Map<String, FileInfo> namespace = new HashMap<>();
  final Map<String, Integer> loads = new HashMap<>();
  final MetadataCache.StatusLoader loader =
      path -> {
        loads.merge(path, 1, Integer::sum);
        FileInfo info = namespace.get(path);
        if (info == null) {
          throw new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
        }
        return info;
      };

  static FileInfo file(long id, long length) {
    return FileInfo.newBuilder().setFileId(id).setLength(length).setName("f").build();
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  /** A cache over {@link #namespace} without listings on lookup. */
  MetadataCache cache(Duration ttl, long maxEntries) {
    return new MetadataCache(loader, null, Runnable::run, ttl, maxEntries, ticker);
  }

  /** A cache over {@link #namespace} whose change stream is in step, holding {@code dir}. */
  MetadataCache liveCacheHolding(String dir) throws StrataException {
    MetadataCache cache = cache(Duration.ofSeconds(1), 1000);
    cache.watchLive(true);
    cache.get(dir);
    return cache;
  }

  @Test
  void aStatusIsLoadedOnceWithinTheTtlAndAgainAfterIt() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    namespace.put("/a", file(1, 10));
    assertEquals(10, cache.get("/a").getLength());
    namespace.put("/a", file(1, 20));
    advance(Duration.ofMillis(900));
    assertEquals(10, cache.get("/a").getLength(), "fresh entry answered from the cache");
    assertEquals(1, loads.get("/a"));
    advance(Duration.ofMillis(200));
    assertEquals(20, cache.get("/a").getLength(), "expired entry loaded again");
    assertEquals(2, loads.get("/a"));
  }

  @Test
  void aMissingPathIsRememberedForTheTtl() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    for (int i = 0; i < 3; i++) {
      StrataException e = assertThrows(StrataException.class, () -> cache.get("/missing"));
      assertEquals(ErrorCode.NOT_FOUND, e.code());
      assertTrue(e.getMessage().contains("/missing"), e.getMessage());
    }
    assertEquals(1, loads.get("/missing"));
    namespace.put("/missing", file(2, 5));
    advance(Duration.ofSeconds(2));
    assertEquals(5, cache.get("/missing").getLength());
  }

  @Test
  void otherErrorsAreNotCached() {
    int[] calls = new int[1];
    MetadataCache cache =
        new MetadataCache(
            path -> {
              calls[0]++;
              throw new StrataException(ErrorCode.UNAVAILABLE, "master down");
            },
            null,
            Runnable::run,
            Duration.ofMinutes(1),
            100,
            ticker);
    assertThrows(StrataException.class, () -> cache.get("/a"));
    assertThrows(StrataException.class, () -> cache.get("/a"));
    assertEquals(2, calls[0]);
  }

  @Test
  void aZeroTtlTurnsTheCacheOff() throws Exception {
    MetadataCache cache = cache(Duration.ZERO, 100);
    namespace.put("/a", file(1, 10));
    cache.get("/a");
    cache.get("/a");
    cache.put("/a", file(1, 99), cache.mark());
    assertEquals(10, cache.get("/a").getLength());
    assertEquals(3, loads.get("/a"));
    assertFalse(cache.enabled());
  }

  @Test
  void entriesAreBoundedAndCanBeSetOrForgotten() throws Exception {
    MetadataCache cache = cache(Duration.ofMinutes(1), 10);
    for (int i = 0; i < 100; i++) {
      namespace.put("/f" + i, file(i, i));
      cache.get("/f" + i);
    }
    assertTrue(cache.size() <= 10, "entries " + cache.size());
    cache.put("/listed", file(7, 70), cache.mark());
    assertEquals(70, cache.get("/listed").getLength());
    assertEquals(null, loads.get("/listed"));
    cache.invalidate("/listed");
    assertThrows(StrataException.class, () -> cache.get("/listed"));
  }

  @Test
  void fileVersionsKeepTheKernelCacheOnlyForAnUnchangedFile() {
    FileVersions versions = new FileVersions(100);
    FileInfo v1 = file(1, 10).toBuilder().setModificationTimeMs(1000).build();
    assertFalse(versions.openedUnchanged("/a", v1), "first open");
    assertTrue(versions.openedUnchanged("/a", v1));
    assertFalse(versions.openedUnchanged("/a", v1.toBuilder().setLength(11).build()));
    assertFalse(
        versions.openedUnchanged(
            "/a", v1.toBuilder().setLength(11).setModificationTimeMs(2000).build()));
    assertFalse(
        versions.openedUnchanged(
            "/a", v1.toBuilder().setLength(11).setModificationTimeMs(2000).setFileId(2).build()));
    assertTrue(
        versions.openedUnchanged(
            "/a", v1.toBuilder().setLength(11).setModificationTimeMs(2000).setFileId(2).build()));
    assertFalse(versions.openedUnchanged("/b", v1), "another path");
  }

  // ---- the change stream -----------------------------------------------------------------

  static FileInfo file(long id, long length, long syncIntervalMs) {
    return file(id, length).toBuilder().setSyncIntervalMs(syncIntervalMs).build();
  }

  @Test
  void whileTheStreamIsInStepAnUnchangedEntryOutlivesTheTtlUntilANoticeDropsIt() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    cache.watchLive(true);
    namespace.put("/a", file(1, 10, -1));
    cache.get("/a");
    advance(Duration.ofHours(1));
    assertEquals(10, cache.get("/a").getLength(), "kept while nothing changed");
    assertEquals(1, loads.get("/a"));
    namespace.put("/a", file(1, 20, -1));
    cache.changed("/a", false);
    assertEquals(20, cache.get("/a").getLength(), "a notice drops it");
    assertEquals(2, loads.get("/a"));
  }

  @Test
  void withoutTheStreamEveryEntryIsHeldToTheTtl() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    namespace.put("/a", file(1, 10, -1));
    cache.get("/a");
    advance(Duration.ofMillis(1100));
    cache.get("/a");
    assertEquals(2, loads.get("/a"), "never in step");
    cache.watchLive(true);
    cache.watchLive(false);
    advance(Duration.ofMillis(1100));
    cache.get("/a");
    assertEquals(3, loads.get("/a"), "the stream broke: back to the TTL");
  }

  @Test
  void aPathTheMasterChecksAgainIsAskedForAgainAfterItsSyncInterval() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    cache.watchLive(true);
    namespace.put("/always", file(1, 1, 0));
    namespace.put("/minute", file(2, 2, 60_000));
    cache.get("/always");
    cache.get("/minute");
    advance(Duration.ofSeconds(30));
    cache.get("/always");
    cache.get("/minute");
    assertEquals(2, loads.get("/always"), "checked at every access: only the TTL holds");
    assertEquals(1, loads.get("/minute"));
    advance(Duration.ofSeconds(31));
    cache.get("/minute");
    assertEquals(2, loads.get("/minute"), "after the mount's sync interval");
  }

  @Test
  void aMissingPathIsHeldToTheTtlEvenWhileTheStreamIsInStep() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    cache.watchLive(true);
    assertThrows(StrataException.class, () -> cache.get("/new"));
    namespace.put("/new", file(3, 3, -1));
    advance(Duration.ofMillis(1100));
    assertEquals(3, cache.get("/new").getLength(), "it may have appeared in its under store");
  }

  @Test
  void aSubtreeNoticeDropsEveryPathBelowAndAResetDropsEverything() throws Exception {
    MetadataCache cache = cache(Duration.ofSeconds(1), 100);
    cache.watchLive(true);
    for (String p : new String[] {"/d", "/d/x", "/d/y/z", "/dd", "/e"}) {
      namespace.put(p, file(p.length(), 1, -1));
      cache.get(p);
    }
    cache.changed("/d", true);
    for (String p : new String[] {"/d", "/d/x", "/d/y/z", "/dd", "/e"}) {
      cache.get(p);
    }
    assertEquals(2, loads.get("/d/x"));
    assertEquals(2, loads.get("/d/y/z"));
    assertEquals(1, loads.get("/dd"), "a sibling that shares the prefix stays");
    cache.reset();
    cache.get("/e");
    assertEquals(2, loads.get("/e"));
  }

  @Test
  void aStatusLoadedWhileANoticeOfItArrivedIsNotKept() throws Exception {
    namespace.put("/a", file(1, 10, -1));
    MetadataCache[] holder = new MetadataCache[1];
    MetadataCache cache =
        new MetadataCache(
            path -> {
              FileInfo before = loader.load(path);
              // The change lands, and its notice arrives, while this answer is on its way.
              namespace.put(path, file(1, 20, -1));
              holder[0].changed(path, false);
              return before;
            },
            null,
            Runnable::run,
            Duration.ofSeconds(1),
            100,
            ticker);
    holder[0] = cache;
    cache.watchLive(true);
    assertEquals(10, cache.get("/a").getLength(), "this call sees what it loaded");
    advance(Duration.ofHours(1));
    assertEquals(20, cache.get("/a").getLength(), "but the old answer was not kept");
  }

  // ---- listings --------------------------------------------------------------------------

  /** A lister over {@link #namespace}: the children of a folder in name order. */
  final Map<String, Integer> listings = new HashMap<>();

  final MetadataCache.ListingLoader lister =
      dir -> {
        listings.merge(dir, 1, Integer::sum);
        String prefix = dir.equals("/") ? "/" : dir + "/";
        java.util.Iterator<FileInfo> it =
            new java.util.TreeMap<>(namespace)
                .entrySet().stream()
                    .filter(
                        e ->
                            e.getKey().startsWith(prefix)
                                && e.getKey().indexOf('/', prefix.length()) < 0)
                    .map(
                        e ->
                            e.getValue().toBuilder()
                                .setName(e.getKey().substring(prefix.length()))
                                .setPath(e.getKey())
                                .build())
                    .iterator();
        return new io.strata.client.CloseableIterator<>() {
          @Override
          public boolean hasNext() {
            return it.hasNext();
          }

          @Override
          public FileInfo next() {
            return it.next();
          }

          @Override
          public void close() {}
        };
      };

  @Test
  void lookupsInAFolderNotListedYetCostOneListingForTheWholeFolder() throws Exception {
    namespace.put("/d", FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).build());
    for (int i = 0; i < 50; i++) {
      namespace.put("/d/f" + i, file(i, i, -1));
    }
    MetadataCache cache =
        new MetadataCache(loader, lister, Runnable::run, Duration.ofSeconds(1), 1000, ticker);
    cache.watchLive(true);
    cache.get("/d");
    for (int i = 49; i >= 0; i--) {
      assertEquals(i, cache.get("/d/f" + i).getLength());
    }
    StrataException missing = assertThrows(StrataException.class, () -> cache.get("/d/nope"));
    assertEquals(ErrorCode.NOT_FOUND, missing.code());
    assertEquals(1, listings.get("/d"));
    assertEquals(1, listings.get("/"), "the folder itself came from its parent's listing");
    assertTrue(loads.isEmpty(), "no path was loaded on its own: " + loads);

    namespace.put("/d/new", file(99, 99, -1));
    cache.changed("/d/new", false);
    assertEquals(
        99,
        cache.get("/d/new").getLength(),
        "a notice of a new child ends the folder's listing's say");
  }

  /**
   * The mount's own changes keep a listed folder answering from the cache: a folder it made is
   * listed (empty) at once, a name it removed is missing without a listing, and the folder's times
   * and link count move in place.
   */
  @Test
  void theMountsOwnChangesKeepAFoldersListingInStep() throws Exception {
    namespace.put(
        "/d",
        FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).setLinkCount(2).build());
    namespace.put("/d/f", file(1, 1, -1));
    MetadataCache cache =
        new MetadataCache(loader, lister, Runnable::run, Duration.ofSeconds(1), 1000, ticker);
    cache.watchLive(true);
    cache.get("/d");
    cache.get("/d/f");
    assertEquals(1, listings.get("/d"));

    FileInfo made =
        FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).setLinkCount(2).build();
    long mark = cache.mark();
    namespace.put("/d/new", made);
    cache.putNewFolder("/d/new", made, mark);
    cache.folderChanged("/d", 5_000_000_123L, 1);
    assertEquals(
        ErrorCode.NOT_FOUND,
        assertThrows(StrataException.class, () -> cache.get("/d/new/x")).code(),
        "a new folder answers for its (missing) names");
    assertEquals(null, listings.get("/d/new"), "without a listing");
    FileInfo d = cache.get("/d");
    assertEquals(3, d.getLinkCount());
    assertEquals(5_000_000_123L, d.getModificationTimeNs());
    assertEquals(5_000_000_123L, d.getChangeTimeNs());

    namespace.remove("/d/f");
    cache.removed("/d/f");
    assertEquals(
        ErrorCode.NOT_FOUND, assertThrows(StrataException.class, () -> cache.get("/d/f")).code());
    cache.removedTree("/d/new");
    cache.folderChanged("/d", 6_000_000_000L, -1);
    assertEquals(
        ErrorCode.NOT_FOUND, assertThrows(StrataException.class, () -> cache.get("/d/new")).code());
    assertEquals(2, cache.get("/d").getLinkCount());
    assertEquals(1, listings.get("/d"), "the folder was never listed again");
    assertTrue(loads.isEmpty(), "nothing was loaded on its own: " + loads);
  }

  /**
   * A removed or renamed folder takes its whole subtree with it, and nothing else: not a sibling
   * whose name starts with the folder's ("/t/a" and "/t/ab"), not the folder's parent.
   */
  @Test
  void aDroppedTreeTakesItsSubtreeAndNothingElse() throws Exception {
    MetadataCache cache = cache(Duration.ofHours(1), 100_000);
    cache.watchLive(true);
    String[] below = {"/t/a/x", "/t/a/x/y", "/t/a/z", "/t/a/x/y/deep"};
    String[] kept = {"/t", "/t/ab", "/t/ab/x", "/t/a-b", "/t/a0", "/u/a/x"};
    for (String p : below) {
      namespace.put(p, file(p.length(), 1));
    }
    for (String p : kept) {
      namespace.put(p, file(p.length(), 2));
    }
    namespace.put("/t/a", FileInfo.newBuilder().setDirectory(true).build());
    for (int i = 0; i < 5_000; i++) {
      namespace.put("/t/ab/f" + i, file(i, 3));
      cache.get("/t/ab/f" + i);
    }
    cache.get("/t/a");
    for (String p : below) {
      cache.get(p);
    }
    for (String p : kept) {
      cache.get(p);
    }
    loads.clear();

    for (String p : below) {
      namespace.remove(p);
    }
    namespace.remove("/t/a");
    cache.removedTree("/t/a");
    for (String p : below) {
      assertEquals(
          ErrorCode.NOT_FOUND, assertThrows(StrataException.class, () -> cache.get(p)).code(), p);
    }
    assertEquals(
        ErrorCode.NOT_FOUND, assertThrows(StrataException.class, () -> cache.get("/t/a")).code());
    for (String p : kept) {
      assertEquals(2, cache.get(p).getLength(), p);
    }
    assertEquals(3, cache.get("/t/ab/f4999").getLength());
    for (String p : kept) {
      assertFalse(loads.containsKey(p), p + " was loaded again");
    }
    assertFalse(loads.containsKey("/t/ab/f4999"));
    assertTrue(loads.keySet().containsAll(List.of(below)), loads.toString());

    cache.invalidateTree("/t");
    loads.clear();
    cache.get("/t/ab/f7");
    cache.get("/u/a/x");
    assertEquals(Map.of("/t/ab/f7", 1), loads, "only the dropped tree is loaded again");
    assertEquals(2, cache.size(), "/t/ab/f7 and /u/a/x are held, nothing else");
  }

  @Test
  void aListingThatRacedAChangeOrAnEvictionDoesNotAnswerForMissingNames() throws Exception {
    namespace.put("/d", FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).build());
    namespace.put("/d/a", file(1, 1, -1));
    MetadataCache cache = liveCacheHolding("/d");
    MetadataCache.Listing listing = cache.startListing("/d");
    listing.add(namespace.get("/d/a").toBuilder().setName("a").build());
    namespace.put("/d/b", file(2, 2, -1));
    cache.changed("/d/b", false);
    listing.finish(true);
    assertEquals(2, cache.get("/d/b").getLength(), "the listing predates /d/b");

    MetadataCache small = cache(Duration.ofSeconds(1), 3);
    small.watchLive(true);
    small.get("/d");
    MetadataCache.Listing l2 = small.startListing("/d");
    l2.add(namespace.get("/d/a").toBuilder().setName("a").build());
    l2.add(namespace.get("/d/b").toBuilder().setName("b").build());
    for (int i = 0; i < 10; i++) {
      namespace.put("/other" + i, file(i, i, -1));
      small.get("/other" + i);
    }
    l2.finish(true);
    loads.clear();
    small.get("/d/a");
    small.get("/d/b");
    assertThrows(StrataException.class, () -> small.get("/d/c"));
    assertEquals(1, loads.get("/d/c"), "evictions meanwhile: the folder does not answer");
  }

  @Test
  void aListingThatEndsAfterTheMountsOwnChangeDoesNotPutTheOldStatusBack() throws Exception {
    namespace.put("/d", FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).build());
    namespace.put("/d/a", file(1, 1, -1));
    namespace.put("/d/gone", file(2, 2, -1));
    MetadataCache cache = liveCacheHolding("/d");
    // The listing read /d/a and /d/gone as they were; then the mount changed /d/a (a link, say)
    // and removed /d/gone, and only then do their old statuses reach the cache.
    MetadataCache.Listing listing = cache.startListing("/d");
    FileInfo oldA = namespace.get("/d/a").toBuilder().setName("a").build();
    FileInfo oldGone = namespace.get("/d/gone").toBuilder().setName("gone").build();
    long mark = cache.mark();
    namespace.put("/d/a", file(1, 10, -1));
    cache.putOwn("/d/a", namespace.get("/d/a"), mark);
    namespace.remove("/d/gone");
    cache.removed("/d/gone");
    listing.add(oldA);
    listing.add(oldGone);
    listing.finish(true);
    assertEquals(10, cache.get("/d/a").getLength(), "the mount's own status stands");
    assertThrows(StrataException.class, () -> cache.get("/d/gone"), "the removal stands");
  }

  @Test
  void aListingOrLoadThatRacedTheMountsOwnChangeDoesNotAnswerForIt() throws Exception {
    namespace.put("/d", FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).build());
    namespace.put("/d/a", file(1, 1, -1));
    MetadataCache cache = liveCacheHolding("/d");
    // A listing of /d is under way when the mount makes /d/new; the master's notice of it has
    // not come yet when the listing ends.
    MetadataCache.Listing listing = cache.startListing("/d");
    listing.add(namespace.get("/d/a").toBuilder().setName("a").build());
    namespace.put("/d/new", file(2, 2, -1));
    cache.invalidate("/d/new");
    listing.finish(true);
    assertEquals(2, cache.get("/d/new").getLength(), "the listing predates the mount's mkdir");

    // A load that read "missing" before the mount made the path is not kept either.
    MetadataCache[] holder = new MetadataCache[1];
    MetadataCache racing =
        new MetadataCache(
            path -> {
              FileInfo now = namespace.get(path);
              if (now != null) {
                return now;
              }
              // The answer "missing" is on its way when the mount makes the path.
              namespace.put(path, file(3, 3, -1));
              holder[0].invalidate(path);
              throw new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
            },
            null,
            Runnable::run,
            Duration.ofSeconds(1),
            100,
            ticker);
    holder[0] = racing;
    assertThrows(StrataException.class, () -> racing.get("/d/late"), "this call sees its answer");
    assertEquals(3, racing.get("/d/late").getLength(), "but the missing answer was not kept");
  }

  @Test
  void aLookupRacingAResetNeverAnswersMissingForAListedName() throws Exception {
    namespace.put("/d", FileInfo.newBuilder().setDirectory(true).setSyncIntervalMs(-1).build());
    for (int i = 0; i < 500; i++) {
      namespace.put("/d/f" + i, file(i, i, -1));
    }
    Map<String, FileInfo> snapshot = Map.copyOf(namespace);
    MetadataCache cache =
        new MetadataCache(
            path -> {
              FileInfo info = snapshot.get(path);
              if (info == null) {
                throw new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
              }
              return info;
            },
            null,
            Runnable::run,
            Duration.ofHours(1),
            10_000,
            Ticker.systemTicker());
    cache.watchLive(true);
    AtomicReference<String> wrong = new AtomicReference<>();
    AtomicBoolean stop = new AtomicBoolean();
    Thread reader =
        new Thread(
            () -> {
              for (int n = 0; !stop.get() && wrong.get() == null; n++) {
                try {
                  cache.get("/d");
                  cache.get("/d/f" + (n % 500));
                } catch (StrataException e) {
                  wrong.set("/d/f" + (n % 500) + ": " + e.getMessage());
                }
              }
            });
    reader.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
    while (System.nanoTime() < deadline && wrong.get() == null) {
      // The stream was reset (a new leader): everything goes, then the folder is listed again.
      MetadataCache.Listing listing = cache.startListing("/d");
      for (int i = 0; i < 500; i++) {
        listing.add(snapshot.get("/d/f" + i).toBuilder().setName("f" + i).build());
      }
      listing.finish(true);
      cache.reset();
    }
    stop.set(true);
    reader.join(10_000);
    assertEquals(null, wrong.get(), "a name the folder holds was answered missing");
  }
}
