package io.strata.proxy.xml;

import java.util.Objects;

/** What CreateMultipartUpload answers, {@code <InitiateMultipartUploadResult>}. */
public record InitiatedUpload(String bucket, String key, String uploadId) {
  public InitiatedUpload {
    Objects.requireNonNull(bucket, "bucket");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(uploadId, "uploadId");
  }
}
