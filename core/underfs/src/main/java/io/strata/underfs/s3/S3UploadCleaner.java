package io.strata.underfs.s3;

import io.strata.common.DaemonThreads;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;

/**
 * Aborts multipart uploads left behind by writers that died before close or abort: S3 keeps (and
 * bills) their parts forever otherwise. It runs once per process for each server, bucket and
 * prefix, on a daemon thread started when a store is first opened there, and touches only uploads
 * under that prefix initiated longer ago than {@code s3.multipart.cleanup.age}, so that live writes
 * of other processes are spared as long as they finish within that age.
 */
final class S3UploadCleaner {
  private static final Logger LOG = LoggerFactory.getLogger(S3UploadCleaner.class);

  /** Server, bucket and prefix already cleaned (or being cleaned) by this process. */
  private static final Set<String> STARTED = ConcurrentHashMap.newKeySet();

  private final S3Client s3;
  private final S3Errors errors;
  private final S3Location root;
  private final Duration age;

  S3UploadCleaner(S3Client s3, S3Errors errors, S3Location root, Duration age) {
    this.s3 = s3;
    this.errors = errors;
    this.root = root;
    this.age = age;
  }

  /**
   * Starts the cleanup on a daemon thread unless it is off or already ran in this process for the
   * same server, bucket and prefix. The future gives the number of uploads aborted (0 when nothing
   * ran) and never fails: a failed cleanup is logged and retried by the next process.
   */
  CompletableFuture<Integer> startOnce() {
    if (age.isZero() || !STARTED.add(errors.endpoint() + " " + root.uri())) {
      return CompletableFuture.completedFuture(0);
    }
    CompletableFuture<Integer> done = new CompletableFuture<>();
    Thread thread =
        DaemonThreads.daemon(
            () -> done.complete(runQuietly()), "strata-s3-upload-cleanup-" + root.bucket());
    thread.start();
    return done;
  }

  private int runQuietly() {
    try {
      return abortStaleUploads();
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cleanup of stale multipart uploads under {} at {} failed; a later start will "
              + "try again: {}",
          root,
          errors.endpoint(),
          e.getMessage());
      return 0;
    }
  }

  /** Lists every upload under the prefix, page by page, and aborts the old ones. */
  int abortStaleUploads() throws IOException {
    Instant cutoff = Instant.now().minus(age);
    String prefix = root.dirPrefix();
    String keyMarker = null;
    String uploadIdMarker = null;
    int aborted = 0;
    while (true) {
      ListMultipartUploadsResponse page;
      String keys = keyMarker;
      String ids = uploadIdMarker;
      try {
        page =
            s3.listMultipartUploads(
                b -> b.bucket(root.bucket()).prefix(prefix).keyMarker(keys).uploadIdMarker(ids));
      } catch (SdkException e) {
        throw errors.translate("listing multipart uploads under", root.uri(), e);
      }
      for (MultipartUpload upload : page.uploads()) {
        if (upload.initiated() != null && upload.initiated().isBefore(cutoff)) {
          abort(upload);
          aborted++;
        }
      }
      if (!Boolean.TRUE.equals(page.isTruncated()) || page.nextKeyMarker() == null) {
        break;
      }
      keyMarker = page.nextKeyMarker();
      uploadIdMarker = page.nextUploadIdMarker();
    }
    if (aborted > 0) {
      LOG.info(
          "Aborted {} multipart uploads older than {} under {} at {}",
          aborted,
          age,
          root,
          errors.endpoint());
    }
    return aborted;
  }

  private void abort(MultipartUpload upload) throws IOException {
    String uri = root.withKey(upload.key()).uri();
    try {
      s3.abortMultipartUpload(
          b -> b.bucket(root.bucket()).key(upload.key()).uploadId(upload.uploadId()));
    } catch (SdkException e) {
      if (S3Errors.isNotFound(e)) {
        return; // finished or aborted by its writer meanwhile
      }
      throw errors.translate("aborting a stale multipart upload of", uri, e);
    }
    LOG.info(
        "Aborted stale multipart upload {} of {} started at {}",
        upload.uploadId(),
        uri,
        upload.initiated());
  }
}
