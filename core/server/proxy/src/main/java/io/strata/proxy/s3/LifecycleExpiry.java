package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.strata.client.SetAttributeOptions;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.TtlAction;
import io.strata.proxy.xml.LifecycleConfiguration;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.TagSet;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts a bucket's lifecycle rules into effect on one key: each object, noncurrent version and
 * incomplete upload that a rule expires gets a time to live that ends when the rule says, with the
 * action delete, so that the master's TTL checker removes it then (from Strata and the under
 * store), whether a proxy runs at that moment or not. The rule's ID goes with it in the attribute
 * {@code strata.s3.lifecycle-rule}: that marks the times to live the rules set, which the rules
 * also remove when they no longer apply (one set by {@code strata fs setTtl} is left alone), and
 * gives GET and HEAD their {@code x-amz-expiration}.
 *
 * <p>The time to live runs from the file's modification time: an object's is when it was written; a
 * noncurrent version keeps the time it was written, so its time to live is counted to reach the
 * expiry that runs from when it was replaced. A current version in a versioned bucket gets none:
 * its expiry leaves a delete marker, which only the proxy can write ({@link LifecycleSweep}).
 *
 * <p>Applied after every write of an object, change of its tags or change of its versions, and by
 * the sweep. Costs nothing in a bucket without rules. A failure is logged and left to the next
 * sweep; the write it follows has succeeded.
 */
final class LifecycleExpiry {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleExpiry.class);

  /** The extended attribute of a bucket's folder that holds its lifecycle configuration. */
  static final String CONFIGURATION = "strata.s3.lifecycle";

  /** The extended attribute naming the rule whose time to live a file has. */
  static final String RULE = "strata.s3.lifecycle-rule";

  private final ProxyContext ctx;

  LifecycleExpiry(ProxyContext ctx) {
    this.ctx = ctx;
  }

  /** The rules the bucket folder {@code dir} keeps, or null when it has none. */
  LifecycleRules rules(FileInfo dir) {
    ByteString document = dir.getXattrsMap().get(CONFIGURATION);
    if (document == null) {
      return null;
    }
    LifecycleConfiguration c = S3XmlParser.lifecycleConfiguration(document.toByteArray());
    return new LifecycleRules(c, ctx.lifecycleDay());
  }

  /**
   * After the object of {@code key} was written, had its tags changed or its versions changed: sets
   * the times to live its bucket's rules give it and its noncurrent versions.
   */
  void keyChanged(String bucket, String key) {
    if (key.endsWith("/")) {
      return;
    }
    try {
      FileInfo dir = BucketOperations.bucketFolder(ctx, bucket);
      LifecycleRules rules = rules(dir);
      if (rules == null) {
        // Times to live left by rules since removed were removed with them (the sweep).
        return;
      }
      apply(rules, BucketVersioning.of(dir), bucket, key, false);
    } catch (StrataException | RuntimeException e) {
      LOG.warn(
          "Cannot put the lifecycle rules of bucket {} into effect on {}: {}; the next sweep"
              + " tries again",
          bucket,
          key,
          e.getMessage());
    }
  }

  /**
   * Sets the times to live of the current object of {@code key} and, when the bucket keeps
   * versions, of its noncurrent versions.
   *
   * @param rules the bucket's rules; null removes the times to live rules set earlier
   * @param everyVersion whether to look at the noncurrent versions even when no rule expires them
   *     (a sweep: they may hold times to live of earlier rules)
   * @return the current object, or null when there is none
   */
  FileInfo apply(
      LifecycleRules rules,
      BucketVersioning.State state,
      String bucket,
      String key,
      boolean everyVersion)
      throws StrataException {
    FileInfo current = BucketOperations.status(ctx, ctx.buckets().objectPath(bucket, key));
    if (current != null && (current.getDirectory() || !current.getComplete())) {
      current = null;
    }
    if (current != null) {
      LifecycleRules.Expiry e =
          rules == null || state != BucketVersioning.State.UNVERSIONED
              ? null
              : rules.current(key, current.getLength(), tags(current), writtenMs(current));
      setExpiry(current, e);
    }
    if (state != BucketVersioning.State.UNVERSIONED
        && (everyVersion || (rules != null && rules.expiresNoncurrent()))) {
      applyToVersions(rules, bucket, key, current);
    }
    return current;
  }

  /**
   * Sets the times to live of the key's noncurrent versions: each was replaced when the next newer
   * version (or the current object) was written. When no object is at the key, its newest version
   * is current (a delete marker) and has none.
   */
  private void applyToVersions(LifecycleRules rules, String bucket, String key, FileInfo current)
      throws StrataException {
    List<ObjectVersions.Version> versions = new ObjectVersions(ctx).noncurrent(bucket, key);
    long replacedMs = current == null ? -1 : writtenMs(current);
    int newerNoncurrent = 0;
    for (int i = 0; i < versions.size(); i++) {
      FileInfo f = versions.get(i).file();
      if (current == null && i == 0) {
        setExpiry(f, null);
      } else {
        setExpiry(
            f,
            rules == null
                ? null
                : rules.noncurrent(key, f.getLength(), tags(f), replacedMs, newerNoncurrent));
        newerNoncurrent++;
      }
      replacedMs = writtenMs(f);
    }
  }

  /**
   * The time to live an incomplete upload of {@code key}, started at {@code initiatedMs}, gets at
   * its start ({@code set} with it), or {@code set} unchanged when no rule aborts it.
   */
  SetAttributeOptions uploadExpiry(
      FileInfo bucketFolder, String key, long initiatedMs, SetAttributeOptions set) {
    LifecycleRules rules = rules(bucketFolder);
    LifecycleRules.Expiry e = rules == null ? null : rules.upload(key, initiatedMs);
    if (e == null) {
      return set;
    }
    return set.ttl(
            Duration.ofMillis(Math.max(1, e.atMs() - initiatedMs)), TtlAction.TTL_ACTION_DELETE)
        .xattr(RULE, ByteString.copyFromUtf8(String.valueOf(e.ruleId())));
  }

  /**
   * Gives {@code f} the time to live that ends at {@code e}, or removes the one rules gave it when
   * {@code e} is null; nothing when it already has what it should.
   */
  void setExpiry(FileInfo f, LifecycleRules.Expiry e) throws StrataException {
    ByteString rule = f.getXattrsMap().get(RULE);
    if (e == null) {
      if (rule != null) {
        ctx.fs()
            .setAttribute(f.getPath(), SetAttributeOptions.defaults().noTtl().removeXattr(RULE));
      }
      return;
    }
    long ttlMs = Math.max(1, e.atMs() - f.getModificationTimeMs());
    if (rule != null
        && rule.toStringUtf8().equals(String.valueOf(e.ruleId()))
        && f.getTtlMs() == ttlMs
        && f.getTtlAction() == TtlAction.TTL_ACTION_DELETE) {
      return;
    }
    ctx.fs()
        .setAttribute(
            f.getPath(),
            SetAttributeOptions.defaults()
                .ttl(Duration.ofMillis(ttlMs), TtlAction.TTL_ACTION_DELETE)
                .xattr(RULE, ByteString.copyFromUtf8(String.valueOf(e.ruleId()))));
  }

  static TagSet tags(FileInfo f) {
    String header = ObjectMetadata.tagging(f);
    return header.isEmpty() ? TagSet.empty() : TagSet.fromHeader(header);
  }

  private static long writtenMs(FileInfo f) {
    return f.getModificationTimeMs();
  }
}
