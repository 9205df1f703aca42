package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;

/**
 * A page of ListObjects (version 1), written as {@code <ListBucketResult>}. Prefix and marker are
 * written even when empty, as S3 does; the delimiter only when not empty.
 *
 * <p>{@code nextMarker} is written only when the page is truncated and a delimiter was given: S3
 * sends NextMarker only then, and without one clients continue from the last key listed. With
 * {@code urlEncoding} ({@code encoding-type=url}), Prefix, Marker, NextMarker, Delimiter, each Key
 * and each CommonPrefixes Prefix are URL-encoded (see {@link KeyEncoding}) and {@code
 * <EncodingType>url</EncodingType>} is added.
 */
public record ObjectListingV1(
    String bucket,
    String prefix,
    String marker,
    String nextMarker,
    int maxKeys,
    String delimiter,
    boolean truncated,
    boolean urlEncoding,
    List<ObjectEntry> contents,
    List<String> commonPrefixes) {
  public ObjectListingV1 {
    Objects.requireNonNull(bucket, "bucket");
    prefix = prefix == null ? "" : prefix;
    marker = marker == null ? "" : marker;
    contents = List.copyOf(contents);
    commonPrefixes = List.copyOf(commonPrefixes);
  }
}
