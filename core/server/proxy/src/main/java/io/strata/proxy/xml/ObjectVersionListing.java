package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;

/**
 * A page of ListObjectVersions, written as {@code <ListVersionsResult>}: versions and delete
 * markers in S3's order (key ascending, then newest first), interleaved as they come. In a bucket
 * whose versioning was never enabled every object has one version, the one S3 names {@code null}.
 *
 * <p>Prefix, KeyMarker and VersionIdMarker are written even when empty, as S3 does; the delimiter
 * only when not empty; NextKeyMarker and NextVersionIdMarker only on a truncated page. With {@code
 * urlEncoding} the prefix, the markers, the delimiter, each Key and each CommonPrefixes Prefix are
 * URL-encoded (see {@link KeyEncoding}).
 */
public record ObjectVersionListing(
    String bucket,
    String prefix,
    String keyMarker,
    String versionIdMarker,
    String nextKeyMarker,
    String nextVersionIdMarker,
    int maxKeys,
    String delimiter,
    boolean truncated,
    boolean urlEncoding,
    List<VersionEntry> versions,
    List<String> commonPrefixes) {
  /** The one version id of an object in a bucket without versioning. */
  public static final String NULL_VERSION = "null";

  public ObjectVersionListing {
    Objects.requireNonNull(bucket, "bucket");
    prefix = prefix == null ? "" : prefix;
    keyMarker = keyMarker == null ? "" : keyMarker;
    versionIdMarker = versionIdMarker == null ? "" : versionIdMarker;
    versions = List.copyOf(versions);
    commonPrefixes = List.copyOf(commonPrefixes);
  }
}
