package io.strata.underfs.s3;

import io.strata.underfs.UfsOutputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/**
 * A file being written to S3. Bytes are buffered up to {@code s3.multipart.threshold}; a file that
 * ends within it is sent with one PutObject on close. Past the threshold the stream starts a
 * multipart upload and sends each part as soon as {@code s3.multipart.part.size} bytes have filled,
 * in the writing thread, so memory stays at one part per stream however large the file. The object
 * appears only when {@link #close()} completes the upload; {@link #abort()} (or a failed close)
 * aborts it, so nothing appears and no upload is left in progress. One stream is written by one
 * thread at a time.
 */
final class S3OutputStream extends UfsOutputStream {
  private static final Logger LOG = LoggerFactory.getLogger(S3OutputStream.class);
  private static final int INITIAL_CAPACITY = 64 << 10;

  /** S3 numbers parts from 1 to 10,000. */
  private static final int MAX_PARTS = 10_000;

  private static final String CONTENT_TYPE = "application/octet-stream";

  private final S3Client s3;
  private final S3Errors errors;
  private final S3Location target;
  private final boolean overwrite;
  private final int partSize;
  private final int threshold;
  private final List<CompletedPart> parts = new ArrayList<>();
  private byte[] buffer;
  private int count;
  private String uploadId;
  private boolean closed;
  private String fingerprint = "";

  S3OutputStream(
      S3Client s3,
      S3Errors errors,
      S3Location target,
      boolean overwrite,
      long partSize,
      long threshold) {
    this.s3 = s3;
    this.errors = errors;
    this.target = target;
    this.overwrite = overwrite;
    this.partSize = Math.toIntExact(partSize);
    this.threshold = Math.toIntExact(threshold);
    this.buffer = new byte[Math.min(INITIAL_CAPACITY, this.threshold + 1)];
  }

  /** How many bytes the buffer may hold before it must be sent. */
  private int limit() {
    return uploadId == null ? threshold + 1 : partSize;
  }

  @Override
  public void write(int b) throws IOException {
    if (!closed && count < buffer.length && count < limit()) {
      buffer[count++] = (byte) b;
    } else {
      write(new byte[] {(byte) b}, 0, 1);
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    if (closed) {
      throw new IOException("Write to a closed or aborted S3 stream for " + target.uri());
    }
    while (len > 0) {
      int limit = limit();
      if (count >= limit) {
        if (uploadId == null) {
          startUpload();
        }
        sendFullParts();
        continue;
      }
      int n = Math.min(len, limit - count);
      ensureCapacity(count + n, limit);
      System.arraycopy(b, off, buffer, count, n);
      count += n;
      off += n;
      len -= n;
    }
  }

  private void ensureCapacity(int needed, int limit) {
    if (buffer.length < needed) {
      long doubled = Math.min((long) limit, 2L * buffer.length);
      byte[] grown = new byte[(int) Math.max(needed, doubled)];
      System.arraycopy(buffer, 0, grown, 0, count);
      buffer = grown;
    }
  }

  private void startUpload() throws IOException {
    try {
      uploadId =
          s3.createMultipartUpload(
                  b -> b.bucket(target.bucket()).key(target.key()).contentType(CONTENT_TYPE))
              .uploadId();
    } catch (SdkException e) {
      throw errors.translate("starting a multipart upload of", target.uri(), e);
    }
    LOG.debug("Started multipart upload {} of {}", uploadId, target);
  }

  /** Sends every whole part in the buffer and moves the rest to its start. */
  private void sendFullParts() throws IOException {
    int sent = 0;
    while (count - sent >= partSize) {
      sendPart(sent, partSize);
      sent += partSize;
    }
    if (sent > 0) {
      // A threshold above the part size leaves a buffer larger than any part needs.
      byte[] rest = buffer.length > partSize ? new byte[partSize] : buffer;
      System.arraycopy(buffer, sent, rest, 0, count - sent);
      buffer = rest;
      count -= sent;
    }
  }

  private void sendPart(int offset, int length) throws IOException {
    int number = parts.size() + 1;
    if (number > MAX_PARTS) {
      throw new IOException(
          "File "
              + target.uri()
              + " needs more than "
              + MAX_PARTS
              + " parts of "
              + partSize
              + " bytes: raise the mount option "
              + S3Options.PART_SIZE);
    }
    byte[] data = buffer;
    try {
      String etag =
          s3.uploadPart(
                  b ->
                      b.bucket(target.bucket())
                          .key(target.key())
                          .uploadId(uploadId)
                          .partNumber(number)
                          .contentLength((long) length),
                  RequestBody.fromContentProvider(
                      () -> new ByteArrayInputStream(data, offset, length), length, CONTENT_TYPE))
              .eTag();
      parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
    } catch (SdkException e) {
      throw errors.translate("uploading part " + number + " of", target.uri(), e);
    }
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (!overwrite) {
        refuseExisting();
      }
      if (uploadId == null && count <= threshold) {
        putWhole();
      } else {
        if (uploadId == null) {
          startUpload();
        }
        sendFullParts();
        if (count > 0 || parts.isEmpty()) {
          sendPart(0, count);
        }
        complete();
      }
    } catch (IOException | RuntimeException e) {
      abortUpload(e);
      throw e;
    } finally {
      buffer = null;
    }
  }

  /** A file that appeared since create() must not be replaced when overwrite was refused. */
  private void refuseExisting() throws IOException {
    try {
      s3.headObject(b -> b.bucket(target.bucket()).key(target.key()));
    } catch (SdkException e) {
      if (S3Errors.isNotFound(e)) {
        return;
      }
      throw errors.translate("checking", target.uri(), e);
    }
    throw new FileAlreadyExistsException(target.uri());
  }

  private void putWhole() throws IOException {
    byte[] data = buffer;
    int length = count;
    try {
      String etag =
          s3.putObject(
                  PutObjectRequest.builder()
                      .bucket(target.bucket())
                      .key(target.key())
                      .contentLength((long) length)
                      .contentType(CONTENT_TYPE)
                      .build(),
                  RequestBody.fromContentProvider(
                      () -> new ByteArrayInputStream(data, 0, length), length, CONTENT_TYPE))
              .eTag();
      fingerprint = S3UnderFileSystem.stripQuotes(etag);
    } catch (SdkException e) {
      throw errors.translate("writing", target.uri(), e);
    }
  }

  private void complete() throws IOException {
    try {
      String etag =
          s3.completeMultipartUpload(
                  b ->
                      b.bucket(target.bucket())
                          .key(target.key())
                          .uploadId(uploadId)
                          .multipartUpload(m -> m.parts(parts)))
              .eTag();
      fingerprint = S3UnderFileSystem.stripQuotes(etag);
    } catch (SdkException e) {
      throw errors.translate("completing the multipart upload of", target.uri(), e);
    }
    LOG.debug("Completed multipart upload {} of {} in {} parts", uploadId, target, parts.size());
    uploadId = null;
  }

  @Override
  public void abort() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    buffer = null;
    if (uploadId != null) {
      String id = uploadId;
      uploadId = null;
      try {
        s3.abortMultipartUpload(b -> b.bucket(target.bucket()).key(target.key()).uploadId(id));
      } catch (SdkException e) {
        throw errors.translate("aborting the multipart upload of", target.uri(), e);
      }
      LOG.debug("Aborted multipart upload {} of {}", id, target);
    }
  }

  /** Aborts the upload after a failed close; the close's failure is the one reported. */
  private void abortUpload(Exception failure) {
    if (uploadId == null) {
      return;
    }
    String id = uploadId;
    uploadId = null;
    try {
      s3.abortMultipartUpload(b -> b.bucket(target.bucket()).key(target.key()).uploadId(id));
    } catch (SdkException e) {
      failure.addSuppressed(e);
      LOG.warn(
          "Could not abort multipart upload {} of {} after a failed close; the stale "
              + "upload cleanup ({}) will remove it",
          id,
          target,
          S3Options.CLEANUP_AGE,
          e);
    }
  }

  @Override
  public String fingerprint() {
    return fingerprint;
  }
}
