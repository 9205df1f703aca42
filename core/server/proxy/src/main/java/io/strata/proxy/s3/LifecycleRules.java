package io.strata.proxy.s3;

import io.strata.proxy.xml.LifecycleConfiguration;
import io.strata.proxy.xml.LifecycleConfiguration.Rule;
import io.strata.proxy.xml.TagSet;
import java.time.Duration;

/**
 * When a bucket's lifecycle rules ({@link LifecycleConfiguration}) make an object, a noncurrent
 * version or an incomplete upload expire. Only enabled rules count; of several that select the same
 * thing, the earliest expiry wins, as in S3.
 *
 * <p>A day is {@code strata.proxy.lifecycle.day}, 24 hours unless a test shortens it. With 24-hour
 * days an expiry counted in days is rounded up to the next midnight UTC, as S3 rounds it; with
 * shorter days it is not rounded.
 */
final class LifecycleRules {
  private static final long REAL_DAY_MS = Duration.ofDays(1).toMillis();

  /** When something expires, and the ID of the rule that says so. */
  record Expiry(long atMs, String ruleId) {
    private Expiry earlier(Expiry other) {
      return other == null || atMs <= other.atMs ? this : other;
    }
  }

  private final LifecycleConfiguration config;
  private final long dayMs;

  LifecycleRules(LifecycleConfiguration config, Duration day) {
    this.config = config;
    this.dayMs = Math.max(1, day.toMillis());
  }

  LifecycleConfiguration configuration() {
    return config;
  }

  /**
   * When the current version of the object of {@code key} expires, written at {@code writtenMs};
   * null when no rule expires it.
   */
  Expiry current(String key, long size, TagSet tags, long writtenMs) {
    Expiry found = null;
    for (Rule r : config.rules()) {
      if (!r.enabled() || !r.filter().matches(key, size, tags)) {
        continue;
      }
      if (r.expirationDays() != null) {
        found = new Expiry(after(writtenMs, r.expirationDays()), r.id()).earlier(found);
      } else if (r.expirationDate() != null) {
        found = new Expiry(r.expirationDate().toEpochMilli(), r.id()).earlier(found);
      }
    }
    return found;
  }

  /**
   * When a noncurrent version of {@code key} expires that was replaced at {@code replacedMs} and
   * has {@code newerNoncurrent} noncurrent versions of the key newer than itself; null when no rule
   * expires it (none selects it, or it is among the versions a rule keeps).
   */
  Expiry noncurrent(String key, long size, TagSet tags, long replacedMs, int newerNoncurrent) {
    Expiry found = null;
    for (Rule r : config.rules()) {
      if (!r.enabled() || r.noncurrentDays() == null || !r.filter().matches(key, size, tags)) {
        continue;
      }
      Integer keep = r.newerNoncurrentVersions();
      if (keep != null && newerNoncurrent < keep) {
        continue;
      }
      found = new Expiry(after(replacedMs, r.noncurrentDays()), r.id()).earlier(found);
    }
    return found;
  }

  /** When an incomplete multipart upload of {@code key} started at {@code initiatedMs} expires. */
  Expiry upload(String key, long initiatedMs) {
    Expiry found = null;
    for (Rule r : config.rules()) {
      if (r.enabled() && r.abortDays() != null && key.startsWith(r.filter().prefix())) {
        found = new Expiry(after(initiatedMs, r.abortDays()), r.id()).earlier(found);
      }
    }
    return found;
  }

  /** Whether a delete marker of {@code key} that is the key's only version is to be removed. */
  boolean removesLoneDeleteMarker(String key) {
    for (Rule r : config.rules()) {
      if (r.enabled() && r.expiredObjectDeleteMarker() && key.startsWith(r.filter().prefix())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether rules expire the current versions of keys below the folder key {@code folderKey}
   * ("a/b/"), so that the folder, once expiry emptied it, is removed: S3 has no empty folders.
   */
  boolean expiresKeysBelow(String folderKey) {
    for (Rule r : config.rules()) {
      if (r.enabled()
          && (r.expirationDays() != null || r.expirationDate() != null)
          && folderKey.startsWith(r.filter().prefix())) {
        return true;
      }
    }
    return false;
  }

  /** Whether a rule expires noncurrent versions, which then each need a time to live. */
  boolean expiresNoncurrent() {
    for (Rule r : config.rules()) {
      if (r.enabled() && r.noncurrentDays() != null) {
        return true;
      }
    }
    return false;
  }

  private long after(long fromMs, int days) {
    long at = fromMs + days * dayMs;
    if (dayMs != REAL_DAY_MS) {
      return at;
    }
    return Math.floorDiv(at + REAL_DAY_MS - 1, REAL_DAY_MS) * REAL_DAY_MS;
  }
}
