package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.time.Duration;

/**
 * The mount's cache of path statuses, found and missing, so that the several upcalls the kernel
 * makes for one file (lookup, getattr, open) cost one master call.
 *
 * <p>Guarantees: an answer is at most {@code ttl} old (counted from when it was loaded); a
 * missing path (NOT_FOUND) is remembered for the same time and answers the same error; other
 * errors are never cached. At most {@code maxEntries} paths are held. With a TTL of zero every
 * call goes to the loader. Safe for concurrent use; two threads missing the same path at once
 * may both load it.
 */
public final class MetadataCache {
  /** Loads the status of a namespace path; NOT_FOUND when it does not exist. */
  @FunctionalInterface
  public interface StatusLoader {
    FileInfo load(String path) throws StrataException;
  }

  /** A found status, or the NOT_FOUND error of a missing path. */
  private record Entry(FileInfo info, StrataException missing) {}

  private final StatusLoader loader;
  private final Cache<String, Entry> entries;

  /**
   * @param loader where statuses come from (normally the master)
   * @param ttl how long an answer is reused; zero turns the cache off
   * @param maxEntries most paths held
   */
  public MetadataCache(StatusLoader loader, Duration ttl, long maxEntries) {
    this(loader, ttl, maxEntries, Ticker.systemTicker());
  }

  MetadataCache(StatusLoader loader, Duration ttl, long maxEntries, Ticker ticker) {
    this.loader = loader;
    this.entries = ttl.isZero() || ttl.isNegative() || maxEntries <= 0 ? null
        : Caffeine.newBuilder().expireAfterWrite(ttl).maximumSize(maxEntries).ticker(ticker)
            // Evictions run on the calling thread: they are small, and no pool thread is needed.
            .executor(Runnable::run).build();
  }

  /** The status of {@code path}, from the cache while fresh. */
  public FileInfo get(String path) throws StrataException {
    if (entries == null) {
      return loader.load(path);
    }
    Entry e = entries.getIfPresent(path);
    if (e == null) {
      e = load(path);
    }
    if (e.missing != null) {
      // A fresh exception per call, so that callers never share a stack trace.
      throw new StrataException(ErrorCode.NOT_FOUND, e.missing.getMessage());
    }
    return e.info;
  }

  private Entry load(String path) throws StrataException {
    Entry e;
    try {
      e = new Entry(loader.load(path), null);
    } catch (StrataException ex) {
      if (ex.code() != ErrorCode.NOT_FOUND) {
        throw ex;
      }
      e = new Entry(null, ex);
    }
    entries.put(path, e);
    return e;
  }

  /** Records a status learnt elsewhere (e.g. from a directory listing) as fresh. */
  public void put(String path, FileInfo info) {
    if (entries != null) {
      entries.put(path, new Entry(info, null));
    }
  }

  /** Forgets what is known of {@code path}. */
  public void invalidate(String path) {
    if (entries != null) {
      entries.invalidate(path);
    }
  }

  /**
   * Forgets {@code path} and everything below it: after a rename or removal of a directory,
   * the old paths of its descendants must not answer from the cache.
   */
  public void invalidateTree(String path) {
    if (entries != null) {
      String prefix = path.endsWith("/") ? path : path + "/";
      entries.asMap().keySet().removeIf(k -> k.equals(path) || k.startsWith(prefix));
    }
  }

  /** Whether answers are cached at all (false with a TTL of zero). */
  public boolean enabled() {
    return entries != null;
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
