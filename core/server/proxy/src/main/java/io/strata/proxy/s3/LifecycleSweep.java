package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.strata.client.CloseableIterator;
import io.strata.common.DaemonThreads;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.metrics.MetricNames;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.Principal;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Walks the buckets that have lifecycle rules and does what a write cannot: puts the rules into
 * effect on what was there before they were put, on what the mount or the shell wrote (no proxy saw
 * those writes), and on uploads and versions whose times to live need counting again; removes the
 * times to live of rules that were removed; and takes the actions that need the proxy rather than
 * the master's TTL checker, as S3 takes them:
 *
 * <ul>
 *   <li>an expired current version in a versioned bucket becomes noncurrent behind a delete marker
 *       (a plain delete would lose it);
 *   <li>a delete marker that is its key's only version is removed ({@code
 *       ExpiredObjectDeleteMarker});
 *   <li>a folder that expiry emptied is removed, since S3 lists no empty folders (an object below
 *       it went with its time to live; folder markers, made by a PUT of "key/", stay).
 * </ul>
 *
 * <p>A bucket is swept soon after its rules are put or deleted, and every bucket with rules once
 * per {@code strata.proxy.lifecycle.sweep.interval}. Several proxies may sweep the same bucket:
 * each step is idempotent. One thread; a bucket's failure is logged and the walk goes on.
 */
public final class LifecycleSweep implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleSweep.class);

  private final ProxyContext ctx;
  private final LifecycleExpiry expiry;
  private final ObjectVersions versions;
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("lifecycle-sweep"));
  private volatile Counters counters = Counters.NONE;

  /** What sweeps did, by action (tag {@code action} of the proxy's lifecycle counter). */
  private record Counters(Counter currentExpired, Counter markersRemoved, Counter foldersRemoved) {
    static final Counters NONE = new Counters(null, null, null);

    static void add(Counter c) {
      if (c != null) {
        c.increment();
      }
    }
  }

  LifecycleSweep(ProxyContext ctx) {
    this.ctx = ctx;
    this.expiry = new LifecycleExpiry(ctx);
    this.versions = new ObjectVersions(ctx);
  }

  /** Sweeps every bucket with rules every {@code interval}, the first after one interval. */
  public void start(Duration interval, MeterRegistry registry) {
    counters =
        new Counters(
            counter(registry, "expire-current"),
            counter(registry, "remove-delete-marker"),
            counter(registry, "remove-folder"));
    long ms = Math.max(1, interval.toMillis());
    // Each sweep logs its own failures; the rounds run until close() shuts the thread down.
    var unused = thread.scheduleWithFixedDelay(this::sweepAll, ms, ms, TimeUnit.MILLISECONDS);
  }

  private static Counter counter(MeterRegistry registry, String action) {
    return Counter.builder(MetricNames.PROXY_LIFECYCLE_ACTIONS)
        .tag(MetricNames.TAG_ACTION, action)
        .description("What the S3 proxy's lifecycle sweeps did besides setting times to live")
        .register(registry);
  }

  /** Sweeps {@code bucket} soon, on the sweep's thread: after its rules were put or removed. */
  void sweepSoon(String bucket) {
    thread.execute(
        () -> {
          try {
            sweep(bucket, true);
          } catch (IOException | RuntimeException e) {
            LOG.warn("Lifecycle sweep of bucket {} failed: {}", bucket, e.toString());
          }
        });
  }

  /** Sweeps every bucket whose folder has rules. */
  void sweepAll() {
    List<String> buckets = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(PathNames.ROOT)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()
            && ctx.buckets().listable(f.getName())
            && !ctx.buckets().isMapped(f.getName())
            && f.getXattrsMap().containsKey(LifecycleExpiry.CONFIGURATION)) {
          buckets.add(f.getName());
        }
      }
    } catch (StrataException | RuntimeException e) {
      LOG.warn("Cannot list the buckets for the lifecycle sweep: {}", e.toString());
      return;
    }
    buckets.addAll(ctx.buckets().mapped().keySet());
    for (String bucket : buckets) {
      try {
        sweep(bucket, false);
      } catch (IOException | RuntimeException e) {
        LOG.warn("Lifecycle sweep of bucket {} failed: {}", bucket, e.toString());
      }
    }
  }

  /**
   * Sweeps one bucket: its objects, then its versions, then its uploads.
   *
   * @param withoutRules whether to sweep a bucket that has no rules (now): after its rules were
   *     removed, to remove the times to live they set
   */
  void sweep(String bucket, boolean withoutRules) throws IOException {
    String bucketPath = ctx.buckets().path(bucket);
    FileInfo dir = BucketOperations.status(ctx, bucketPath);
    if (dir == null || !dir.getDirectory()) {
      return;
    }
    LifecycleRules rules = expiry.rules(dir);
    if (rules == null && !withoutRules) {
      // The periodic sweep lists every mapped bucket; one without rules has nothing to do.
      return;
    }
    BucketVersioning.State state = BucketVersioning.of(dir);
    long now = System.currentTimeMillis();
    sweepObjects(bucket, bucketPath, rules, state, now);
    if (state != BucketVersioning.State.UNVERSIONED) {
      sweepVersions(bucket, rules, state);
    }
    sweepUploads(bucketPath, rules);
  }

  private void sweepObjects(
      String bucket,
      String bucketPath,
      LifecycleRules rules,
      BucketVersioning.State state,
      long now)
      throws IOException {
    Deque<String> folders = new ArrayDeque<>();
    folders.push(bucketPath);
    while (!folders.isEmpty()) {
      String folder = folders.pop();
      boolean top = folder.equals(bucketPath);
      int children = 0;
      try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(folder)) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          children++;
          if (top && PathNames.isHidden(f.getName())) {
            continue;
          }
          if (f.getDirectory()) {
            folders.push(f.getPath());
          } else if (f.getComplete()) {
            sweepObject(bucket, key(bucketPath, f.getPath()), f, rules, state, now);
          }
        }
      } catch (StrataException e) {
        if (e.code() == ErrorCode.NOT_FOUND) {
          continue;
        }
        throw e;
      }
      if (!top && children == 0 && rules != null) {
        FileInfo folderStatus = BucketOperations.status(ctx, folder);
        String folderKey = key(bucketPath, folder) + "/";
        if (folderStatus != null
            && folderStatus.getDirectory()
            && !folderStatus.getXattrsMap().containsKey(ObjectMetadata.MARKER)
            && rules.expiresKeysBelow(folderKey)) {
          removeEmptyFolder(bucketPath, folder, rules);
        }
      }
    }
  }

  private void sweepObject(
      String bucket,
      String key,
      FileInfo f,
      LifecycleRules rules,
      BucketVersioning.State state,
      long now)
      throws IOException {
    if (state == BucketVersioning.State.UNVERSIONED) {
      expiry.setExpiry(
          f,
          rules == null
              ? null
              : rules.current(
                  key, f.getLength(), LifecycleExpiry.tags(f), f.getModificationTimeMs()));
      return;
    }
    expiry.setExpiry(f, null);
    LifecycleRules.Expiry e =
        rules == null
            ? null
            : rules.current(key, f.getLength(), LifecycleExpiry.tags(f), f.getModificationTimeMs());
    if (e == null || e.atMs() > now) {
      return;
    }
    try (KeyLocks.Held held = ctx.locks().lock(f.getPath())) {
      FileInfo still = BucketOperations.status(ctx, f.getPath());
      if (still == null || still.getModificationTimeMs() != f.getModificationTimeMs()) {
        return;
      }
      versions.delete(owner(f), bucket, key, null);
    }
    Counters.add(counters.currentExpired());
    LOG.info(
        "Lifecycle rule {} of bucket {} expired the current version of {}: it is noncurrent now,"
            + " behind a delete marker",
        e.ruleId(),
        bucket,
        key);
  }

  /** Each key of the versions folder: the times to live of its versions; lone delete markers. */
  private void sweepVersions(String bucket, LifecycleRules rules, BucketVersioning.State state)
      throws IOException {
    String top = versions.versionsFolder(bucket);
    Deque<String> folders = new ArrayDeque<>();
    folders.push(top);
    while (!folders.isEmpty()) {
      String folder = folders.pop();
      boolean hasVersions = false;
      try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(folder)) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          if (f.getDirectory()) {
            folders.push(f.getPath());
          } else {
            hasVersions = true;
          }
        }
      } catch (StrataException e) {
        if (e.code() == ErrorCode.NOT_FOUND) {
          continue;
        }
        throw e;
      }
      if (!hasVersions || folder.equals(top)) {
        continue;
      }
      String key = key(top, folder);
      FileInfo current = expiry.apply(rules, state, bucket, key, true);
      if (current == null && rules != null && rules.removesLoneDeleteMarker(key)) {
        removeLoneDeleteMarker(bucket, key);
      }
    }
  }

  private void removeLoneDeleteMarker(String bucket, String key) throws IOException {
    String path = ctx.buckets().objectPath(bucket, key);
    try (KeyLocks.Held held = ctx.locks().lock(path)) {
      List<ObjectVersions.Version> all = versions.noncurrent(bucket, key);
      if (all.size() != 1
          || !all.get(0).deleteMarker()
          || BucketOperations.status(ctx, path) != null) {
        return;
      }
      versions.delete(owner(all.get(0).file()), bucket, key, all.get(0).id());
    }
    Counters.add(counters.markersRemoved());
    LOG.info(
        "Removed the delete marker of {} in bucket {}: it was the key's only version", key, bucket);
  }

  private void sweepUploads(String bucketPath, LifecycleRules rules) throws IOException {
    try (CloseableIterator<FileInfo> it =
        ctx.fs().listStatus(bucketPath + "/" + PathNames.UPLOADS_FOLDER)) {
      while (it.hasNext()) {
        FileInfo d = it.next();
        // Files there are objects being staged, not uploads.
        if (!d.getDirectory()) {
          continue;
        }
        ByteString key = d.getXattrsMap().get(MultipartUploads.KEY);
        LifecycleRules.Expiry e =
            rules == null || key == null
                ? null
                : rules.upload(key.toStringUtf8(), MultipartUploads.initiated(d));
        expiry.setExpiry(d, e);
      }
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
  }

  /**
   * Removes the empty folder {@code folder} and then each folder above it, below the bucket's, that
   * it leaves empty and that is no folder marker: folders are listed before what they hold, so one
   * sweep would otherwise remove one level of an emptied tree.
   */
  private void removeEmptyFolder(String bucketPath, String folder, LifecycleRules rules)
      throws StrataException {
    String dir = folder;
    while (!dir.equals(bucketPath) && PathNames.isUnder(dir, bucketPath)) {
      if (!dir.equals(folder)) {
        FileInfo f = BucketOperations.status(ctx, dir);
        if (f == null
            || f.getXattrsMap().containsKey(ObjectMetadata.MARKER)
            || !rules.expiresKeysBelow(key(bucketPath, dir) + "/")) {
          return;
        }
      }
      try {
        ctx.fs().deleteUnlessVisibleChildren(dir);
        Counters.add(counters.foldersRemoved());
      } catch (StrataException e) {
        // Something is in it (FAILED_PRECONDITION), or it went meanwhile.
        LOG.debug("Kept the folder {}: {}", dir, e.getMessage());
        return;
      }
      dir = PathNames.parent(dir);
    }
  }

  /** The key of {@code path} below {@code base}. */
  private static String key(String base, String path) {
    return path.substring(base.equals(PathNames.ROOT) ? 1 : base.length() + 1);
  }

  /** The owner of {@code f}, as whom the sweep writes the delete marker that hides it. */
  private static Principal owner(FileInfo f) {
    return new Principal(f.getOwner(), f.getGroup(), Set.of());
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
