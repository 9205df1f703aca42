package io.strata.underfs.s3;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * Copies one object to another key of the same bucket on the server side, without its bytes
 * passing through Strata. CopyObject takes objects of up to 5 GB; larger ones are copied with
 * a multipart upload of UploadPartCopy ranges, which is aborted if any part fails, so a failed
 * copy leaves neither a partial object nor an upload in progress.
 */
final class S3Copier {
  private static final Logger LOG = LoggerFactory.getLogger(S3Copier.class);
  private static final int MAX_PARTS = 10_000;

  private final S3Client s3;
  private final S3Errors errors;
  private final long partSize;
  private final long maxSingleCopy;

  /**
   * @param partSize the smallest range per UploadPartCopy (raised as needed to stay within
   *     10,000 parts)
   * @param maxSingleCopy objects larger than this are copied part by part
   */
  S3Copier(S3Client s3, S3Errors errors, long partSize, long maxSingleCopy) {
    this.s3 = s3;
    this.errors = errors;
    this.partSize = partSize;
    this.maxSingleCopy = maxSingleCopy;
  }

  /** Copies {@code from} (of {@code size} bytes) to {@code to}, replacing it. */
  void copy(S3Location from, S3Location to, long size) throws IOException {
    if (size <= maxSingleCopy) {
      try {
        s3.copyObject(b -> b.sourceBucket(from.bucket()).sourceKey(from.key())
            .destinationBucket(to.bucket()).destinationKey(to.key()));
      } catch (SdkException e) {
        throw errors.translate("copying " + from.uri() + " to", to.uri(), e);
      }
      return;
    }
    copyInParts(from, to, size);
  }

  private void copyInParts(S3Location from, S3Location to, long size) throws IOException {
    long part = Math.max(partSize, (size + MAX_PARTS - 1) / MAX_PARTS);
    String uploadId;
    try {
      uploadId = s3.createMultipartUpload(b -> b.bucket(to.bucket()).key(to.key())).uploadId();
    } catch (SdkException e) {
      throw errors.translate("starting a multipart copy of " + from.uri() + " to", to.uri(), e);
    }
    List<CompletedPart> parts = new ArrayList<>();
    try {
      for (long start = 0; start < size; start += part) {
        int number = parts.size() + 1;
        String range = "bytes=" + start + "-" + (Math.min(start + part, size) - 1);
        String etag = s3.uploadPartCopy(b -> b.sourceBucket(from.bucket())
            .sourceKey(from.key()).destinationBucket(to.bucket()).destinationKey(to.key())
            .uploadId(uploadId).partNumber(number).copySourceRange(range))
            .copyPartResult().eTag();
        parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
      }
      s3.completeMultipartUpload(b -> b.bucket(to.bucket()).key(to.key()).uploadId(uploadId)
          .multipartUpload(m -> m.parts(parts)));
    } catch (SdkException e) {
      IOException failure = errors.translate("copying " + from.uri() + " in parts to",
          to.uri(), e);
      try {
        s3.abortMultipartUpload(b -> b.bucket(to.bucket()).key(to.key()).uploadId(uploadId));
      } catch (SdkException abortFailure) {
        failure.addSuppressed(abortFailure);
      }
      throw failure;
    }
    LOG.debug("Copied {} to {} in {} parts", from, to, parts.size());
  }
}
