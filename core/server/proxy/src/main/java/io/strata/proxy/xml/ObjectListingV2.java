package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;

/**
 * A page of ListObjectsV2, written as {@code <ListBucketResult>}. KeyCount is the number of keys
 * plus common prefixes on the page. Prefix is written even when empty; StartAfter,
 * ContinuationToken and NextContinuationToken when not null; the delimiter when not empty. Owners
 * are written only with {@code fetchOwner}, as S3 does.
 *
 * <p>With {@code urlEncoding} ({@code encoding-type=url}), Prefix, StartAfter, Delimiter, each Key
 * and each CommonPrefixes Prefix are URL-encoded (see {@link KeyEncoding}); the opaque continuation
 * tokens are not.
 */
public record ObjectListingV2(
    String bucket,
    String prefix,
    String startAfter,
    String continuationToken,
    String nextContinuationToken,
    int maxKeys,
    String delimiter,
    boolean truncated,
    boolean urlEncoding,
    boolean fetchOwner,
    List<ObjectEntry> contents,
    List<String> commonPrefixes) {
  public ObjectListingV2 {
    Objects.requireNonNull(bucket, "bucket");
    prefix = prefix == null ? "" : prefix;
    contents = List.copyOf(contents);
    commonPrefixes = List.copyOf(commonPrefixes);
  }

  /** The KeyCount S3 reports: keys and common prefixes on this page. */
  public int keyCount() {
    return contents.size() + commonPrefixes.size();
  }
}
