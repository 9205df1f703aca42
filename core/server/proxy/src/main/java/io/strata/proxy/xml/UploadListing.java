package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * A page of ListMultipartUploads, {@code <ListMultipartUploadsResult>}. The markers and prefix are
 * written even when empty, as S3 does; the delimiter only when not empty. With {@code urlEncoding},
 * KeyMarker, NextKeyMarker, Prefix, Delimiter, each upload's Key and each CommonPrefixes Prefix are
 * URL-encoded (see {@link KeyEncoding}).
 */
public record UploadListing(
    String bucket,
    String keyMarker,
    String uploadIdMarker,
    String nextKeyMarker,
    String nextUploadIdMarker,
    String prefix,
    String delimiter,
    int maxUploads,
    boolean truncated,
    boolean urlEncoding,
    List<Upload> uploads,
    List<String> commonPrefixes) {
  public UploadListing {
    Objects.requireNonNull(bucket, "bucket");
    keyMarker = keyMarker == null ? "" : keyMarker;
    uploadIdMarker = uploadIdMarker == null ? "" : uploadIdMarker;
    nextKeyMarker = nextKeyMarker == null ? "" : nextKeyMarker;
    nextUploadIdMarker = nextUploadIdMarker == null ? "" : nextUploadIdMarker;
    prefix = prefix == null ? "" : prefix;
    uploads = List.copyOf(uploads);
    commonPrefixes = List.copyOf(commonPrefixes);
  }

  /** One upload in progress; the checksum fields are written when not null. */
  public record Upload(
      String key,
      String uploadId,
      Owner initiator,
      Owner owner,
      String storageClass,
      Instant initiated,
      ChecksumAlgorithm checksumAlgorithm,
      ChecksumType checksumType) {
    public Upload {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(uploadId, "uploadId");
      Objects.requireNonNull(initiator, "initiator");
      Objects.requireNonNull(owner, "owner");
      Objects.requireNonNull(storageClass, "storageClass");
      Objects.requireNonNull(initiated, "initiated");
    }
  }
}
