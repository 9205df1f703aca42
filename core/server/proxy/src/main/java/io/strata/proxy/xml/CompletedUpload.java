package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumValue;
import java.util.Objects;

/**
 * What CompleteMultipartUpload answers, {@code <CompleteMultipartUploadResult>}: the object's URL,
 * bucket, key, multipart ETag (written quoted) and, when the upload had one, its object checksum
 * with {@code <ChecksumType>}.
 */
public record CompletedUpload(
    String location, String bucket, String key, String etag, ChecksumValue checksum) {
  public CompletedUpload {
    Objects.requireNonNull(location, "location");
    Objects.requireNonNull(bucket, "bucket");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(etag, "etag");
  }
}
