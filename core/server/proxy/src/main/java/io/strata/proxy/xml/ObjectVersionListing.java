package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;

/**
 * A page of ListObjectVersions, written as {@code <ListVersionsResult>}. Every object has one
 * version, the version S3 names {@code null} in a bucket whose versioning was never enabled, and it
 * is the latest; there are no delete markers.
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
    int maxKeys,
    String delimiter,
    boolean truncated,
    boolean urlEncoding,
    List<ObjectEntry> versions,
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
