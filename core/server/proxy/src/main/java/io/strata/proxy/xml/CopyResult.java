package io.strata.proxy.xml;

import io.strata.proxy.checksum.ChecksumValue;
import java.time.Instant;
import java.util.Objects;

/**
 * The result of CopyObject ({@code <CopyObjectResult>}) or UploadPartCopy ({@code
 * <CopyPartResult>}): the new ETag, written quoted, the modification time and the checksum when the
 * copy has one (with {@code <ChecksumType>} for an object copy only).
 */
public record CopyResult(String etag, Instant lastModified, ChecksumValue checksum) {
  public CopyResult {
    Objects.requireNonNull(etag, "etag");
    Objects.requireNonNull(lastModified, "lastModified");
  }
}
