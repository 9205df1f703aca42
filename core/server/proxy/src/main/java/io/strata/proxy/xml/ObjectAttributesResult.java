package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumValue;
import java.util.List;

/**
 * What GetObjectAttributes answers: each field is null when it was not asked for or the object has
 * none (a checksum it was not stored with, parts of an object not made by a multipart upload), and
 * is then left out of the document, as S3 does.
 */
public record ObjectAttributesResult(
    String etag, ChecksumValue checksum, Parts parts, String storageClass, Long objectSize) {

  /** One page of a multipart object's parts. */
  public record Parts(
      int totalPartsCount,
      int partNumberMarker,
      int nextPartNumberMarker,
      int maxParts,
      boolean truncated,
      List<Part> parts) {
    public Parts {
      parts = List.copyOf(parts);
    }
  }

  /** A part: its number and length in bytes. */
  public record Part(int partNumber, long size) {}
}
