package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import io.strata.proxy.checksum.ChecksumValue;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A page of ListParts, {@code <ListPartsResult>}. NextPartNumberMarker is written when not null
 * (the last part number on a truncated page); the upload's checksum algorithm and type when the
 * upload has a checksum.
 */
public record PartListing(
    String bucket,
    String key,
    String uploadId,
    int partNumberMarker,
    Integer nextPartNumberMarker,
    int maxParts,
    boolean truncated,
    Owner initiator,
    Owner owner,
    String storageClass,
    ChecksumAlgorithm checksumAlgorithm,
    ChecksumType checksumType,
    List<Part> parts) {
  public PartListing {
    Objects.requireNonNull(bucket, "bucket");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(uploadId, "uploadId");
    Objects.requireNonNull(initiator, "initiator");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(storageClass, "storageClass");
    parts = List.copyOf(parts);
  }

  /** One uploaded part; the ETag is written quoted, the checksum when the part has one. */
  public record Part(
      int partNumber, Instant lastModified, String etag, long size, ChecksumValue checksum) {
    public Part {
      Objects.requireNonNull(lastModified, "lastModified");
      Objects.requireNonNull(etag, "etag");
    }
  }
}
