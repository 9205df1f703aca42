package io.strata.proxy.s3;

import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.FileRegion;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.FileInStream;
import io.strata.client.LocalSegment;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proxy.checksum.ChecksumValue;
import io.strata.proxy.xml.CompleteMultipartUpload;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Map;

/**
 * GetObject and HeadObject: the object's status and metadata in one master call (with its blocks,
 * so the read needs no other), the conditional headers as S3 evaluates them, one byte range, and
 * the body streamed from the cluster a chunk at a time, never held whole: each chunk is read only
 * when the client has taken the ones before (the connection's write buffer), so a slow client slows
 * the reads rather than filling memory.
 */
final class ObjectReads {
  private static final Map<String, String> RESPONSE_OVERRIDES =
      Map.of(
          "response-content-type", "Content-Type",
          "response-content-language", "Content-Language",
          "response-expires", "Expires",
          "response-cache-control", "Cache-Control",
          "response-content-disposition", "Content-Disposition",
          "response-content-encoding", "Content-Encoding");

  private final ProxyContext ctx;

  ObjectReads(ProxyContext ctx) {
    this.ctx = ctx;
  }

  /**
   * The object a request's key names: a complete file, or -- for a key ending in '/' -- a folder
   * that is a marker or empty (listed as that key). NoSuchKey otherwise, NoSuchBucket when the
   * bucket's folder is missing.
   */
  static FileInfo object(ProxyContext ctx, S3Request r) throws StrataException {
    return object(ctx, r.bucket(), r.key(), false);
  }

  static FileInfo object(ProxyContext ctx, String bucket, String key, boolean withBlocks)
      throws StrataException {
    String path = ctx.buckets().objectPath(bucket, key);
    FileInfo f;
    try {
      f = ctx.statuses().get(path);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND || e.code() == ErrorCode.INVALID_ARGUMENT) {
        FileInfo bucketDir = BucketOperations.status(ctx, ctx.buckets().path(bucket));
        if (bucketDir == null || !bucketDir.getDirectory()) {
          throw BucketOperations.noSuchBucket(bucket);
        }
        throw noSuchKey(key);
      }
      throw e;
    }
    boolean folderKey = key.endsWith("/");
    if (f.getDirectory() != folderKey
        || (!f.getDirectory() && !f.getComplete())
        || f.getFileType() != FileType.FILE_TYPE_PLAIN) {
      // Symbolic links, FIFOs, sockets and devices made through a FUSE mount are no objects.
      throw noSuchKey(key);
    }
    if (folderKey
        && !f.getXattrsMap().containsKey(ObjectMetadata.MARKER)
        && KeyListing.hasVisibleChild(ctx, f.getPath())) {
      throw noSuchKey(key);
    }
    return f;
  }

  static S3Exception noSuchKey(String key) {
    return new S3Exception(S3ErrorCode.NO_SUCH_KEY, "The specified key does not exist: " + key);
  }

  void get(S3Request r, boolean head) throws IOException {
    // Versioning hook: a version named by id, or the key's delete marker named on a miss.
    String versionId = r.query().get("versionId");
    FileInfo f;
    ObjectVersions versions = new ObjectVersions(ctx);
    if (versionId != null) {
      f = versions.readable(r.bucket(), r.key(), versionId, !head);
    } else {
      try {
        f = object(ctx, r.bucket(), r.key(), !head);
      } catch (S3Exception e) {
        throw e.code() == S3ErrorCode.NO_SUCH_KEY
            ? versions.explainMissing(r.bucket(), r.key(), e)
            : e;
      }
    }
    ctx.access().checkRead(r.principal(), f);
    String etag = ObjectMetadata.etag(f);
    Conditions.checkRead(r, etag, f.getModificationTimeMs());
    long length = f.getDirectory() ? 0 : f.getLength();
    HttpHeaders h = r.baseHeaders();
    h.add(ObjectMetadata.responseHeaders(f));
    ObjectVersions.versionHeader(h, f, versionId);
    for (Map.Entry<String, String> o : RESPONSE_OVERRIDES.entrySet()) {
      String v = r.query().get(o.getKey());
      if (v != null) {
        if (r.auth().anonymous()) {
          throw new S3Exception(
              S3ErrorCode.INVALID_REQUEST,
              "Request specific response headers" + " cannot be used for anonymous GET requests.");
        }
        h.set(o.getValue(), v);
      }
    }
    ByteRange range =
        r.query().has("partNumber")
            ? part(r, f, length, h)
            : head && r.header("Range") == null ? null : ByteRange.parse(r.header("Range"), length);
    long start = 0;
    long count = length;
    HttpResponseStatus status = HttpResponseStatus.OK;
    if (range != null) {
      start = range.start();
      count = range.length();
      status = HttpResponseStatus.PARTIAL_CONTENT;
      h.set("Content-Range", "bytes " + range.start() + "-" + range.end() + "/" + length);
    } else if ("ENABLED".equalsIgnoreCase(r.header("x-amz-checksum-mode"))) {
      ChecksumValue c = ObjectMetadata.checksum(f);
      if (c != null) {
        h.set(c.algorithm().headerName(), c.value());
        h.set("x-amz-checksum-type", c.type().name());
      }
    }
    if (head) {
      h.set("Content-Length", Long.toString(count));
      r.exchange().respond(status, h, null);
      return;
    }
    if (count == 0) {
      r.exchange().respond(status, h, null);
      return;
    }
    try (FileInStream in = ctx.fs().openFile(f)) {
      stream(r, in, start, count, status, h);
    }
  }

  /**
   * The bytes of the part that partNumber names, as S3 serves it: a part of a multipart upload
   * (with the number of parts in x-amz-mp-parts-count), or part 1 of any other object, which is all
   * of it (null: the whole object).
   */
  private static ByteRange part(S3Request r, FileInfo f, long length, HttpHeaders h) {
    if (r.header("Range") != null) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Cannot specify both Range header and partNumber query parameter");
    }
    int number = r.query().getInt("partNumber", 1, 1, CompleteMultipartUpload.MAX_PART_NUMBER);
    long[] parts = ObjectMetadata.partLengths(f);
    if (parts == null) {
      if (number != 1) {
        throw new S3Exception(
            S3ErrorCode.INVALID_PART_NUMBER,
            "The requested partnumber is"
                + " not satisfiable: "
                + r.key()
                + " was not uploaded in parts, so it has part 1"
                + " only");
      }
      return null;
    }
    if (number > parts.length) {
      throw new S3Exception(
          S3ErrorCode.INVALID_PART_NUMBER,
          "The requested partnumber is not"
              + " satisfiable: "
              + r.key()
              + " has "
              + parts.length
              + " parts");
    }
    h.setInt("x-amz-mp-parts-count", parts.length);
    long start = 0;
    for (int i = 0; i < number - 1; i++) {
      start += parts[i];
    }
    if (parts[number - 1] == 0 || start + parts[number - 1] > length) {
      return null;
    }
    return new ByteRange(start, start + parts[number - 1] - 1);
  }

  /**
   * Sends {@code count} bytes of {@code in} from {@code start}. Bytes in a block file of a worker
   * on this machine go from that file to the socket by the kernel (sendfile, no copy in this
   * process); others are read a chunk at a time into pooled buffers.
   */
  private void stream(
      S3Request r,
      FileInStream in,
      long start,
      long count,
      HttpResponseStatus status,
      HttpHeaders h)
      throws IOException {
    // The first piece is read (or its file opened) before the headers go, so that a read
    // failure (a changed file, an unreachable cluster) is still an S3 error, not a cut
    // connection.
    Object first = next(r, in, start, start + count);
    r.exchange().startResponse(status, h, count);
    try {
      long pos = start + send(r, first);
      long end = start + count;
      while (pos < end) {
        pos += send(r, next(r, in, pos, end));
      }
      r.exchange().endResponse();
    } catch (IOException | RuntimeException e) {
      r.exchange().abort();
      throw e;
    }
  }

  /** The next piece from {@code pos}: a file region of a local block file, or a buffer. */
  private Object next(S3Request r, FileInStream in, long pos, long end) throws IOException {
    // Over TLS the bytes are encrypted in user space, so the kernel cannot send the file.
    LocalSegment segment = r.exchange().secure() ? null : in.localSegment(pos, end - pos);
    if (segment != null) {
      try {
        FileChannel ch = FileChannel.open(segment.blockFile(), StandardOpenOption.READ);
        if (ch.size() >= segment.offset() + segment.length()) {
          return new DefaultFileRegion(ch, segment.offset(), segment.length());
        }
        ch.close();
      } catch (IOException e) {
        // Evicted or moved since: read the range through the client instead.
      }
    }
    return read(r, in, pos, (int) Math.min(ctx.chunkSize(), end - pos));
  }

  private static long send(S3Request r, Object piece) throws IOException {
    if (piece instanceof FileRegion region) {
      long n = region.count();
      r.exchange().write(region);
      return n;
    }
    ByteBuf buf = (ByteBuf) piece;
    int n = buf.readableBytes();
    r.exchange().write(buf);
    return n;
  }

  private static ByteBuf read(S3Request r, FileInStream in, long pos, int len) throws IOException {
    ByteBuf buf = r.exchange().alloc().heapBuffer(len, len);
    try {
      in.readFully(pos, buf.array(), buf.arrayOffset(), len);
      buf.writerIndex(len);
      return buf;
    } catch (IOException | RuntimeException e) {
      buf.release();
      throw e;
    }
  }
}
