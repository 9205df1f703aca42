package io.strata.underfs.s3;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;

/**
 * Copies objects to another key of the same bucket on the server side, without their bytes passing
 * through Strata. CopyObject takes objects of up to 5 GB; larger ones, and the concatenation of
 * several, are copied with a multipart upload of UploadPartCopy ranges, which is aborted if any
 * part fails, so a failed copy leaves neither a partial object nor an upload in progress.
 */
final class S3Copier {
  private static final Logger LOG = LoggerFactory.getLogger(S3Copier.class);
  private static final int MAX_PARTS = 10_000;

  /** S3's smallest part of a multipart upload, but for the last. */
  static final long MIN_PART_SIZE = 5L << 20;

  private static final String CONTENT_TYPE = "application/octet-stream";

  private final S3Client s3;
  private final S3Errors errors;
  private final long partSize;
  private final long maxSingleCopy;

  /**
   * @param partSize the smallest range per UploadPartCopy (raised as needed to stay within 10,000
   *     parts)
   * @param maxSingleCopy objects larger than this are copied part by part, and no part copies more
   *     than this (S3's limit of one copy is 5 GB)
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
        s3.copyObject(
            b ->
                b.sourceBucket(from.bucket())
                    .sourceKey(from.key())
                    .destinationBucket(to.bucket())
                    .destinationKey(to.key()));
      } catch (SdkException e) {
        throw errors.translate("copying " + from.uri() + " to", to.uri(), e);
      }
      return;
    }
    copyInParts(from, to, size);
  }

  /**
   * Whether objects of these sizes can be joined by {@link #concat}: S3 wants every part of an
   * upload but the last to hold at least {@link #MIN_PART_SIZE} bytes, and 10,000 parts at most.
   * Empty objects add nothing and are skipped, so they never count.
   */
  boolean canJoin(List<Long> sizes) {
    int last = -1;
    for (int i = 0; i < sizes.size(); i++) {
      if (sizes.get(i) > 0) {
        last = i;
      }
    }
    if (last < 0) {
      return false;
    }
    long parts = 0;
    for (int i = 0; i <= last; i++) {
      long size = sizes.get(i);
      if (size > 0 && size < MIN_PART_SIZE && i < last) {
        return false;
      }
      parts += rangesOf(size);
    }
    return parts <= MAX_PARTS;
  }

  /** How many UploadPartCopy ranges an object of {@code size} bytes is copied in. */
  private long rangesOf(long size) {
    return (size + maxSingleCopy - 1) / maxSingleCopy;
  }

  /**
   * Writes {@code to} as the concatenation of {@code from} (objects of {@code sizes} bytes, as
   * {@link #canJoin} accepts them) with one multipart upload whose parts are UploadPartCopy ranges
   * of the sources, each source split evenly into ranges of at most the single-copy limit (so no
   * range but a source's last is under half of it). The object appears when the upload completes;
   * any failure aborts it.
   *
   * @param overwrite false: refuse an object that appeared at {@code to} meanwhile
   * @return the ETag S3 gave the object
   */
  String concat(List<S3Location> from, List<Long> sizes, S3Location to, boolean overwrite)
      throws IOException {
    String uploadId;
    try {
      uploadId =
          s3.createMultipartUpload(
                  b -> b.bucket(to.bucket()).key(to.key()).contentType(CONTENT_TYPE))
              .uploadId();
    } catch (SdkException e) {
      throw errors.translate(
          "starting a multipart copy of " + from.size() + " objects to", to.uri(), e);
    }
    List<CompletedPart> parts = new ArrayList<>();
    S3Location current = from.get(0);
    try {
      for (int i = 0; i < from.size(); i++) {
        current = from.get(i);
        long size = sizes.get(i);
        long ranges = rangesOf(size);
        long range = ranges == 0 ? 0 : (size + ranges - 1) / ranges;
        for (long start = 0; start < size; start += range) {
          S3Location source = current;
          int number = parts.size() + 1;
          String bytes = "bytes=" + start + "-" + (Math.min(start + range, size) - 1);
          String etag =
              s3.uploadPartCopy(
                      b ->
                          b.sourceBucket(source.bucket())
                              .sourceKey(source.key())
                              .destinationBucket(to.bucket())
                              .destinationKey(to.key())
                              .uploadId(uploadId)
                              .partNumber(number)
                              .copySourceRange(bytes))
                  .copyPartResult()
                  .eTag();
          parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
        }
      }
      if (!overwrite) {
        refuseExisting(to);
      }
      String etag =
          s3.completeMultipartUpload(
                  b ->
                      b.bucket(to.bucket())
                          .key(to.key())
                          .uploadId(uploadId)
                          .multipartUpload(m -> m.parts(parts)))
              .eTag();
      LOG.debug("Joined {} objects into {} with {} copied parts", from.size(), to, parts.size());
      return S3UnderFileSystem.stripQuotes(etag);
    } catch (IOException | RuntimeException e) {
      Exception failure =
          e instanceof SdkException sdk
              ? errors.translate(
                  "copying " + current.uri() + " into the multipart upload of", to.uri(), sdk)
              : e;
      try {
        s3.abortMultipartUpload(b -> b.bucket(to.bucket()).key(to.key()).uploadId(uploadId));
      } catch (SdkException abortFailure) {
        failure.addSuppressed(abortFailure);
      }
      if (failure instanceof IOException io) {
        throw io;
      }
      throw (RuntimeException) failure;
    }
  }

  /** Fails when an object is at {@code to}. */
  private void refuseExisting(S3Location to) throws IOException {
    try {
      s3.headObject(b -> b.bucket(to.bucket()).key(to.key()));
    } catch (SdkException e) {
      if (S3Errors.isNotFound(e)) {
        return;
      }
      throw errors.translate("checking", to.uri(), e);
    }
    throw new FileAlreadyExistsException(to.uri());
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
        String etag =
            s3.uploadPartCopy(
                    b ->
                        b.sourceBucket(from.bucket())
                            .sourceKey(from.key())
                            .destinationBucket(to.bucket())
                            .destinationKey(to.key())
                            .uploadId(uploadId)
                            .partNumber(number)
                            .copySourceRange(range))
                .copyPartResult()
                .eTag();
        parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
      }
      s3.completeMultipartUpload(
          b ->
              b.bucket(to.bucket())
                  .key(to.key())
                  .uploadId(uploadId)
                  .multipartUpload(m -> m.parts(parts)));
    } catch (SdkException e) {
      IOException failure = errors.translate("copying " + from.uri() + " in parts to", to.uri(), e);
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
