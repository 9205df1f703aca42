package io.strata.proxy.s3;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.client.FileSystem;
import io.strata.client.NamespaceWatch;
import io.strata.client.SyncOption;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.NamespaceChange;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Objects' statuses (with their blocks) as GET and HEAD need them, kept until the namespace says
 * they changed, so that a read of a cached object costs no master call. The master's change stream
 * ({@link NamespaceWatch}) drops a path -- or a whole subtree -- within milliseconds of any change
 * made anywhere in Strata (another proxy, a mount, the command line). While this proxy changes a
 * path (or a subtree) itself, reads of it skip the cache until the change is done and dropped, so a
 * client always reads what it was told it wrote. While the stream is not in step every status lives
 * {@code ttl} at most, and a status under a mount that syncs with its store lives no longer than
 * that mount's interval, so the master still checks the store when it should. A status loaded while
 * a change was being announced is not kept. Absences are never kept. Thread-safe.
 */
final class StatusCache implements NamespaceWatch.Listener, AutoCloseable {
  private record Entry(FileInfo file, long loadedNanos) {}

  private final FileSystem fs;
  private final Cache<String, Entry> entries;
  private final long ttlNanos;
  private final AtomicLong changes = new AtomicLong();

  /** Paths and subtrees ("path/") this proxy is changing now, each with its writers' count. */
  private final ConcurrentHashMap<String, AtomicInteger> writing = new ConcurrentHashMap<>();

  private volatile boolean inStep;
  private final NamespaceWatch watch;

  /**
   * @param size most statuses kept
   * @param ttl how long a status lives while the change stream is not in step
   */
  StatusCache(FileSystem fs, long size, Duration ttl, boolean watchChanges) {
    this.fs = fs;
    this.ttlNanos = ttl.toNanos();
    this.entries = Caffeine.newBuilder().maximumSize(size).build();
    this.watch = watchChanges && size > 0 ? fs.watchChanges(this) : null;
  }

  /** The status of {@code path} with its blocks, from the cache when it is still current. */
  FileInfo get(String path) throws StrataException {
    boolean changing = beingWritten(path);
    Entry e = changing ? null : entries.getIfPresent(path);
    long now = System.nanoTime();
    if (e != null && fresh(e, now)) {
      return e.file();
    }
    long before = changes.get();
    FileInfo f = fs.getStatus(path, SyncOption.DEFAULT, true);
    if (changing || beingWritten(path)) {
      return f;
    }
    // A change announced while the status was loaded may be older or newer than it: keep
    // nothing then, the next read asks again.
    if (changes.get() == before && (f.getDirectory() || f.getComplete())) {
      entries.put(path, new Entry(f, now));
    }
    return f;
  }

  private boolean fresh(Entry e, long now) {
    long age = now - e.loadedNanos();
    long sync = e.file().getSyncIntervalMs();
    if (sync >= 0 && age > TimeUnit.MILLISECONDS.toNanos(sync)) {
      return false;
    }
    return inStep || age <= ttlNanos;
  }

  private boolean beingWritten(String path) {
    if (writing.isEmpty()) {
      return false;
    }
    for (String w : writing.keySet()) {
      if (w.equals(path) || (w.endsWith("/") && path.startsWith(w))) {
        return true;
      }
    }
    return false;
  }

  /**
   * Marks {@code target} -- a path, or a subtree when it ends in '/' -- as being changed by this
   * proxy until the result is closed, which drops what is cached of it. Reads of it skip the cache
   * meanwhile, so the answer to the change can be sent before it is closed.
   */
  Write writing(String target) {
    writing.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
    return () -> {
      changes.incrementAndGet();
      if (target.endsWith("/")) {
        entries.invalidate(target.substring(0, target.length() - 1));
        entries.asMap().keySet().removeIf(k -> k.startsWith(target));
      } else {
        entries.invalidate(target);
      }
      writing.computeIfPresent(target, (k, n) -> n.decrementAndGet() == 0 ? null : n);
    };
  }

  /** A change in progress ({@link #writing}). */
  interface Write extends AutoCloseable {
    @Override
    void close();
  }

  @Override
  public void connected(boolean reset) {
    if (reset) {
      changes.incrementAndGet();
      entries.invalidateAll();
    }
    inStep = true;
  }

  @Override
  public void changed(List<NamespaceChange> list) {
    changes.incrementAndGet();
    for (NamespaceChange c : list) {
      entries.invalidate(c.getPath());
      if (c.getSubtree()) {
        String below = c.getPath().endsWith("/") ? c.getPath() : c.getPath() + "/";
        entries.asMap().keySet().removeIf(k -> k.startsWith(below));
      }
    }
  }

  @Override
  public void disconnected(String reason) {
    inStep = false;
    changes.incrementAndGet();
  }

  @Override
  public void close() {
    if (watch != null) {
      watch.close();
    }
  }
}
