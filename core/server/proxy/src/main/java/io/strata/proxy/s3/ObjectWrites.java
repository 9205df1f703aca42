package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.FileInStream;
import io.strata.client.FileOutStream;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.Principal;
import io.strata.proxy.auth.UriDecoding;
import io.strata.proxy.checksum.BodyDigests;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumValue;
import io.strata.proxy.xml.CopyResult;
import io.strata.proxy.xml.DeleteRequest;
import io.strata.proxy.xml.DeleteResult;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.TagSet;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * PutObject, CopyObject, DeleteObject, DeleteObjects and the object tagging calls. A PUT streams
 * its body to a new file ({@link PendingObject}) that takes the key only when complete, with its
 * metadata in the same master call; a failed check discards it and leaves the key's object as it
 * was. Writers of one key do not wait on each other: the later one to complete wins, and the
 * conditions of a write (If-None-Match, If-Match) are decided when its object takes the key ({@link
 * WriteConditions}). A delete also removes the folders above the key that it leaves empty (up to
 * the bucket), unless they are folder markers, so that a bucket emptied through S3 holds nothing
 * and can be deleted.
 */
final class ObjectWrites {
  private static final String EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e";
  private static final int COPY_BUFFER = 256 << 10;

  /**
   * Bodies up to this size are held whole before they are written (they are checked first, and a
   * new key is committed in one master call); larger ones stream.
   */
  static final long SMALL_OBJECT_BYTES = 1 << 20;

  private final ProxyContext ctx;
  private final ObjectVersions versions;
  private final LifecycleExpiry lifecycle;

  ObjectWrites(ProxyContext ctx) {
    this.ctx = ctx;
    this.versions = new ObjectVersions(ctx);
    this.lifecycle = new LifecycleExpiry(ctx);
  }

  void put(S3Request r) throws IOException {
    RequestedAcl.NewObjectAcl acl =
        RequestedAcl.forNewObject(r, BucketOperations.bucketFolder(ctx, r));
    String key = r.key();
    String path = ctx.buckets().objectPath(r.bucket(), key);
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    Map<String, ByteString> xattrs = new LinkedHashMap<>(ObjectMetadata.fromRequest(r.headers()));
    String tagging = r.header("x-amz-tagging");
    if (tagging != null) {
      TagSet tags = TagSet.fromHeader(tagging);
      if (!tags.isEmpty()) {
        xattrs.put(ObjectMetadata.TAGGING, ByteString.copyFromUtf8(tags.toHeader()));
      }
    }
    acl.addTo(xattrs);
    UploadBody body = UploadBody.open(r, UploadBody.MAX_PUT_BYTES);
    if (key.endsWith("/")) {
      putFolderMarker(r, path, body, xattrs);
      return;
    }
    WriteConditions conditions = WriteConditions.of(r);
    // Checked now so that a write bound to fail does not upload first; checked again, and
    // decisively, when the object takes its key.
    conditions.check(BucketOperations.status(ctx, path), key);
    // Versioning hook: the new object's version id, kept with it.
    String versionId = versions.stamp(r.bucket(), key, xattrs);
    FileInfo done;
    long announced = body.expectedLength();
    if (announced >= 0 && announced <= SMALL_OBJECT_BYTES) {
      // Held whole and checked before anything is written: a new key then costs one master
      // call (PendingObject#putSmall).
      ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) announced);
      body.copyTo(bytes, new byte[(int) Math.max(1, Math.min(64 << 10, announced))]);
      body.verify();
      addDigests(xattrs, body);
      done =
          PendingObject.putSmall(
              ctx,
              r.bucket(),
              path,
              key,
              r.principal(),
              acl.mode(),
              conditions,
              bytes.toByteArray(),
              xattrs);
    } else {
      done = putStreamed(r, path, key, body, acl.mode(), conditions, xattrs);
    }
    // Versioning hook: a null version replaces the key's earlier one.
    versions.written(r.bucket(), key, versionId);
    HttpHeaders h = r.baseHeaders();
    h.set("ETag", "\"" + ObjectMetadata.etag(done) + "\"");
    if (versionId != null) {
      h.set("x-amz-version-id", versionId);
    }
    ChecksumValue c = body.checksum();
    if (c != null) {
      h.set(c.algorithm().headerName(), c.value());
      h.set("x-amz-checksum-type", c.type().name());
    }
    r.exchange().respond(HttpResponseStatus.OK, h, null);
  }

  /** A PUT body streamed to its file as it arrives (larger than {@link #SMALL_OBJECT_BYTES}). */
  private FileInfo putStreamed(
      S3Request r,
      String path,
      String key,
      UploadBody body,
      int mode,
      WriteConditions conditions,
      Map<String, ByteString> xattrs)
      throws IOException {
    PendingObject pending = PendingObject.create(ctx, r.bucket(), path, key, r.principal(), mode);
    try {
      body.copyTo(pending.out(), new byte[64 << 10]);
      body.verify();
    } catch (IOException | RuntimeException e) {
      pending.cancel();
      throw e;
    }
    addDigests(xattrs, body);
    return pending.complete(xattrs, conditions);
  }

  /** The object's ETag and flexible checksum, kept with it. */
  private static void addDigests(Map<String, ByteString> xattrs, UploadBody body) {
    xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(body.md5Hex()));
    ChecksumValue c = body.checksum();
    if (c != null) {
      xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(c));
    }
  }

  /** PUT of a key ending in '/': a folder, marked so that listings show it. */
  private void putFolderMarker(
      S3Request r, String path, UploadBody body, Map<String, ByteString> xattrs)
      throws IOException {
    body.copyTo(OutputStream.nullOutputStream(), new byte[8192]);
    body.verify();
    markFolder(r, path, body.length(), xattrs);
    HttpHeaders h = r.baseHeaders();
    h.set("ETag", "\"" + EMPTY_MD5 + "\"");
    r.exchange().respond(HttpResponseStatus.OK, h, null);
  }

  /**
   * Makes the folder of a key ending in '/', marked so that listings show it, with the object's
   * attributes.
   *
   * @param length the length of the body the request sent for it, which must be 0
   */
  private void markFolder(S3Request r, String path, long length, Map<String, ByteString> xattrs)
      throws IOException {
    if (length > 0) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The key "
              + r.key()
              + " ends in '/'"
              + " and names a folder, which holds no bytes: send an empty body");
    }
    Principal p = r.principal();
    try {
      FileInfo existing = BucketOperations.status(ctx, path);
      if (existing != null && !existing.getDirectory()) {
        throw new S3Exception(
            S3ErrorCode.KEY_CONFLICT,
            "Cannot store the folder key " + r.key() + ": a file is at " + path);
      }
      if (existing == null) {
        ctx.fs().createDirectory(path, true, true, 0, p.user(), p.primaryGroup());
      }
      SetAttributeOptions set =
          SetAttributeOptions.defaults().xattr(ObjectMetadata.MARKER, ByteString.EMPTY);
      for (Map.Entry<String, ByteString> e : xattrs.entrySet()) {
        set = set.xattr(e.getKey(), e.getValue());
      }
      ctx.fs().setAttribute(path, set);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.ALREADY_EXISTS || e.code() == ErrorCode.INVALID_ARGUMENT) {
        throw new S3Exception(
            S3ErrorCode.KEY_CONFLICT,
            "Cannot store the folder key " + r.key() + ": " + e.getMessage());
      }
      throw e;
    }
  }

  /**
   * POST Object: the upload of a browser's form, read and checked up to its file by {@link
   * PostObjects}; {@code r} stands for the PutObject it is (its key, and the headers the form's
   * fields give). The file is written as a PUT's body is: held whole and put in one master call
   * when the whole request is small, else streamed to a staged object; either takes the key only
   * once the file has ended within the policy's bounds and matched its Content-MD5 and checksum
   * fields, so a refused upload leaves nothing. A POST has no write conditions.
   */
  void post(S3Request r, PostObjects.Form form) throws IOException {
    RequestedAcl.NewObjectAcl acl =
        RequestedAcl.forNewObject(r, BucketOperations.bucketFolder(ctx, r));
    String key = r.key();
    String path = ctx.buckets().objectPath(r.bucket(), key);
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    Map<String, ByteString> xattrs = new LinkedHashMap<>(ObjectMetadata.fromRequest(r.headers()));
    String tagging = r.header("x-amz-tagging");
    if (tagging != null) {
      xattrs.put(ObjectMetadata.TAGGING, ByteString.copyFromUtf8(tagging));
    }
    acl.addTo(xattrs);
    ChecksumAlgorithm algorithm = PostObjects.checksumAlgorithm(r.headers());
    BodyDigests digests = BodyDigests.of(false, algorithm);
    if (key.endsWith("/")) {
      long length = PostObjects.copyFile(form, OutputStream.nullOutputStream(), digests);
      PostObjects.verify(form, digests, algorithm);
      markFolder(r, path, length, xattrs);
      PostObjects.respond(r, form, EMPTY_MD5, null);
      return;
    }
    // Versioning hook: the new object's version id, kept with it.
    String versionId = versions.stamp(r.bucket(), key, xattrs);
    FileInfo done;
    long requestLength = contentLength(r);
    if (requestLength >= 0 && requestLength <= SMALL_OBJECT_BYTES) {
      // The file is shorter than the whole request: held whole and checked before anything is
      // written, as a small PUT is.
      ByteArrayOutputStream bytes = new ByteArrayOutputStream((int) requestLength);
      PostObjects.copyFile(form, bytes, digests);
      PostObjects.verify(form, digests, algorithm);
      addDigests(xattrs, digests, algorithm);
      done =
          PendingObject.putSmall(
              ctx,
              r.bucket(),
              path,
              key,
              r.principal(),
              acl.mode(),
              WriteConditions.NONE,
              bytes.toByteArray(),
              xattrs);
    } else {
      PendingObject pending =
          PendingObject.create(ctx, r.bucket(), path, key, r.principal(), acl.mode());
      try {
        PostObjects.copyFile(form, pending.out(), digests);
        PostObjects.verify(form, digests, algorithm);
      } catch (IOException | RuntimeException e) {
        pending.cancel();
        throw e;
      }
      addDigests(xattrs, digests, algorithm);
      done = pending.complete(xattrs, WriteConditions.NONE);
    }
    // Versioning hook: a null version replaces the key's earlier one.
    versions.written(r.bucket(), key, versionId);
    PostObjects.respond(r, form, ObjectMetadata.etag(done), versionId);
  }

  /** The request's Content-Length; -1 when it has none or not a number. */
  private static long contentLength(S3Request r) {
    String v = r.exchange().headers().get("Content-Length");
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static void addDigests(
      Map<String, ByteString> xattrs, BodyDigests digests, ChecksumAlgorithm algorithm) {
    xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(digests.md5Hex()));
    if (algorithm != null) {
      xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(digests.checksum()));
    }
  }

  void delete(S3Request r) throws IOException {
    BucketOperations.bucketFolder(ctx, r);
    ObjectVersions.Deletion d =
        deleteKey(
            r.principal(), r.bucket(), r.key(), r.header("If-Match"), r.query().get("versionId"));
    HttpHeaders h = null;
    if (d != null) {
      h = new io.netty.handler.codec.http.DefaultHttpHeaders();
      h.set("x-amz-version-id", d.versionId());
      if (d.deleteMarker()) {
        h.set("x-amz-delete-marker", "true");
      }
    }
    r.empty(HttpResponseStatus.NO_CONTENT, h);
  }

  /**
   * Deletes one key (nothing when it is not there) and the empty folders it leaves.
   *
   * @param ifMatch the ETag the object must have to be deleted (a conditional delete); null for
   *     none
   * @param versionId the version to delete; null for the key (in a versioned bucket: a delete
   *     marker)
   * @return what a versioned deletion did; null for a plain one
   */
  private ObjectVersions.Deletion deleteKey(
      Principal p, String bucket, String key, String ifMatch, String versionId) throws IOException {
    String path = ctx.buckets().objectPath(bucket, key);
    ctx.access().checkWriteIn(p, PathNames.parent(path));
    ObjectVersions.Deletion versioned = null;
    try (KeyLocks.Held held = ctx.locks().lock(path)) {
      FileInfo f = BucketOperations.status(ctx, path);
      new WriteConditions(false, ifMatch, null).check(f, key);
      // Versioning hook: a delete in a versioned bucket, or of one version.
      if (versions.handlesDelete(bucket, key, versionId)) {
        versioned = versions.delete(p, bucket, key, versionId);
        f = null;
      }
      if (f == null) {
        if (versioned != null) {
          removeEmptyFolders(ctx.buckets().path(bucket), PathNames.parent(path));
        }
        return versioned;
      }
      if (key.endsWith("/")) {
        if (!f.getDirectory()) {
          return null;
        }
        try {
          ctx.fs().deleteUnlessVisibleChildren(path);
          ctx.access().forget(path);
        } catch (StrataException e) {
          if (e.code() != ErrorCode.FAILED_PRECONDITION) {
            throw e;
          }
          // The folder holds other keys: only its marker goes.
          if (f.getXattrsMap().containsKey(ObjectMetadata.MARKER)) {
            ctx.fs()
                .setAttribute(
                    path, SetAttributeOptions.defaults().removeXattr(ObjectMetadata.MARKER));
          }
          return null;
        }
      } else {
        if (f.getDirectory()) {
          return null;
        }
        try {
          ctx.fs().delete(path, false);
        } catch (StrataException e) {
          if (e.code() != ErrorCode.NOT_FOUND) {
            throw e;
          }
        }
      }
    }
    removeEmptyFolders(ctx.buckets().path(bucket), PathNames.parent(path));
    return null;
  }

  /** Deletes {@code dir} and the folders above it up to the bucket while empty and unmarked. */
  private void removeEmptyFolders(String bucketPath, String dir) throws StrataException {
    while (dir != null && !dir.equals(bucketPath) && PathNames.isUnder(dir, bucketPath)) {
      FileInfo f = BucketOperations.status(ctx, dir);
      if (f != null) {
        if (!f.getDirectory() || f.getXattrsMap().containsKey(ObjectMetadata.MARKER)) {
          return;
        }
        try {
          ctx.fs().deleteUnlessVisibleChildren(dir);
          ctx.access().forget(dir);
        } catch (StrataException e) {
          if (e.code() == ErrorCode.FAILED_PRECONDITION) {
            return;
          }
          if (e.code() != ErrorCode.NOT_FOUND) {
            throw e;
          }
        }
      }
      dir = PathNames.parent(dir);
    }
  }

  void deleteObjects(S3Request r) throws IOException {
    BucketOperations.bucketFolder(ctx, r);
    byte[] document = UploadBody.document(r, S3XmlParser.MAX_DELETE_BYTES, true);
    DeleteRequest request = S3XmlParser.deleteRequest(document);
    List<DeleteResult.Deleted> deleted = new ArrayList<>();
    List<DeleteResult.Failure> errors = new ArrayList<>();
    for (DeleteRequest.ObjectId id : request.objects()) {
      String version = id.versionId().orElse(null);
      try {
        ObjectVersions.Deletion d =
            deleteKey(r.principal(), r.bucket(), id.key(), id.etag().orElse(null), version);
        boolean marker = d != null && d.deleteMarker();
        deleted.add(
            new DeleteResult.Deleted(id.key(), version, marker, marker ? d.versionId() : null));
      } catch (S3Exception e) {
        errors.add(new DeleteResult.Failure(id.key(), version, e.code().code(), e.getMessage()));
      } catch (StrataException e) {
        S3Exception s3 = S3Service.translate(e, r, Operation.DELETE_OBJECT);
        errors.add(new DeleteResult.Failure(id.key(), version, s3.code().code(), s3.getMessage()));
      }
    }
    r.xml(S3XmlWriter.deleteResult(new DeleteResult(request.quiet(), deleted, errors)));
  }

  void copy(S3Request r) throws IOException {
    RequestedAcl.NewObjectAcl acl =
        RequestedAcl.forNewObject(r, BucketOperations.bucketFolder(ctx, r));
    if (r.header("x-amz-copy-source-range") != null) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "x-amz-copy-source-range is for"
              + " UploadPartCopy only; CopyObject copies whole objects");
    }
    String[] source = copySource(r);
    FileInfo src = copySourceObject(ctx, source);
    ctx.access().checkRead(r.principal(), src);
    Conditions.checkCopySource(r, ObjectMetadata.etag(src), src.getModificationTimeMs());
    boolean replace = directive(r, "x-amz-metadata-directive");
    boolean replaceTags = directive(r, "x-amz-tagging-directive");
    String dstPath = ctx.buckets().objectPath(r.bucket(), r.key());
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(dstPath));
    Map<String, ByteString> xattrs =
        new LinkedHashMap<>(
            replace ? ObjectMetadata.fromRequest(r.headers()) : ObjectMetadata.copyable(src));
    String tags =
        replaceTags
            ? (r.header("x-amz-tagging") == null
                ? ""
                : TagSet.fromHeader(r.header("x-amz-tagging")).toHeader())
            : ObjectMetadata.tagging(src);
    if (!tags.isEmpty()) {
      xattrs.put(ObjectMetadata.TAGGING, ByteString.copyFromUtf8(tags));
    }
    acl.addTo(xattrs);
    if (dstPath.equals(src.getPath()) && !src.getDirectory()) {
      if (!replace && !replaceTags) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "This copy request is illegal"
                + " because it is trying to copy an object to itself without changing the"
                + " object's metadata, storage class, website redirect location or encryption"
                + " attributes.");
      }
      copyOntoItself(r, src, acl.mode(), xattrs);
      return;
    }
    if (src.getDirectory() || r.key().endsWith("/")) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Folder keys (ending in '/') cannot"
              + " be copied: create the folder key with PutObject");
    }
    ChecksumAlgorithm algorithm = copyAlgorithm(r, src);
    BodyDigests digests = BodyDigests.of(false, algorithm);
    // Versioning hook: the copy's version id, kept with it.
    String versionId = versions.stamp(r.bucket(), r.key(), xattrs);
    FileInfo done;
    ChecksumValue c = null;
    try (FileInStream in = ctx.fs().openFile(src)) {
      PendingObject pending =
          PendingObject.create(ctx, r.bucket(), dstPath, r.key(), r.principal(), acl.mode());
      try {
        FileOutStream out = pending.out();
        byte[] buf = new byte[COPY_BUFFER];
        long pos = 0;
        while (pos < src.getLength()) {
          int n = (int) Math.min(buf.length, src.getLength() - pos);
          in.readFully(pos, buf, 0, n);
          digests.update(buf, 0, n);
          out.write(buf, 0, n);
          pos += n;
        }
      } catch (IOException | RuntimeException e) {
        pending.cancel();
        throw e;
      }
      xattrs.put(ObjectMetadata.ETAG, ByteString.copyFromUtf8(digests.md5Hex()));
      // A source without a flexible checksum, copied without one asked for, gets none.
      if (algorithm != null) {
        c = digests.checksum();
        xattrs.put(ObjectMetadata.CHECKSUM, ObjectMetadata.encodeChecksum(c));
      }
      done = pending.complete(xattrs, WriteConditions.NONE);
      // Versioning hook: a null version replaces the key's earlier one.
      versions.written(r.bucket(), r.key(), versionId);
    }
    HttpHeaders h = new io.netty.handler.codec.http.DefaultHttpHeaders();
    if (versionId != null) {
      h.set("x-amz-version-id", versionId);
    }
    if (source[2] != null) {
      h.set("x-amz-copy-source-version-id", source[2]);
    }
    r.xml(
        S3XmlWriter.copyObjectResult(
            new CopyResult(
                ObjectMetadata.etag(done), Instant.ofEpochMilli(done.getModificationTimeMs()), c)),
        h);
  }

  /**
   * The object a copy reads ({@link #copySource}): the key's current object, or the version the
   * source names.
   */
  static FileInfo copySourceObject(ProxyContext ctx, String[] source) throws StrataException {
    return source[2] == null
        ? ObjectReads.object(ctx, source[0], source[1], true)
        : new ObjectVersions(ctx).readable(source[0], source[1], source[2], true);
  }

  /**
   * A copy of an object onto itself that replaces its metadata and, as any copy, gives it the
   * request's ACL: no bytes move.
   */
  private void copyOntoItself(S3Request r, FileInfo src, int mode, Map<String, ByteString> xattrs)
      throws IOException {
    SetAttributeOptions set =
        SetAttributeOptions.defaults().modificationTimeMs(System.currentTimeMillis()).mode(mode);
    for (String old : src.getXattrsMap().keySet()) {
      if (!xattrs.containsKey(old)
          && !old.equals(ObjectMetadata.ETAG)
          && !old.equals(ObjectMetadata.CHECKSUM)
          && !old.equals(ObjectMetadata.PARTS)
          && !old.equals(ObjectVersions.VERSION_ID)) {
        set = set.removeXattr(old);
      }
    }
    for (Map.Entry<String, ByteString> e : xattrs.entrySet()) {
      set = set.xattr(e.getKey(), e.getValue());
    }
    FileInfo done;
    try (KeyLocks.Held held = ctx.locks().lock(src.getPath())) {
      done = ctx.fs().setAttribute(src.getPath(), set);
    }
    r.xml(
        S3XmlWriter.copyObjectResult(
            new CopyResult(
                ObjectMetadata.etag(done),
                Instant.ofEpochMilli(done.getModificationTimeMs()),
                ObjectMetadata.checksum(done))));
  }

  private static ChecksumAlgorithm copyAlgorithm(S3Request r, FileInfo src) {
    String named = r.header(ChecksumAlgorithm.ALGORITHM_HEADER);
    if (named == null) {
      named = r.header(ChecksumAlgorithm.SDK_ALGORITHM_HEADER);
    }
    if (named != null) {
      return ChecksumAlgorithm.fromValue(named);
    }
    ChecksumValue c = ObjectMetadata.checksum(src);
    return c == null ? null : c.algorithm();
  }

  private static boolean directive(S3Request r, String header) {
    String v = r.header(header);
    if (v == null || v.equalsIgnoreCase("COPY")) {
      return false;
    }
    if (v.equalsIgnoreCase("REPLACE")) {
      return true;
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT, "Unknown " + header + " '" + v + "': give COPY or REPLACE");
  }

  /**
   * The bucket, key and version id (null when not named) of x-amz-copy-source ("/bucket/key" or
   * "bucket/key", URL-encoded, with "?versionId=" to copy a version).
   */
  static String[] copySource(S3Request r) {
    String raw = r.header("x-amz-copy-source");
    if (raw == null || raw.isEmpty()) {
      throw new S3Exception(S3ErrorCode.INVALID_ARGUMENT, "x-amz-copy-source is missing");
    }
    int q = raw.indexOf("?versionId=");
    String version = null;
    if (q >= 0) {
      version = raw.substring(q + "?versionId=".length());
      raw = raw.substring(0, q);
    }
    String decoded = UriDecoding.query(raw, false);
    if (decoded.startsWith("/")) {
      decoded = decoded.substring(1);
    }
    int slash = decoded.indexOf('/');
    if (slash <= 0 || slash == decoded.length() - 1) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "x-amz-copy-source must be" + " bucket/key, not '" + raw + "'");
    }
    return new String[] {decoded.substring(0, slash), decoded.substring(slash + 1), version};
  }

  void getTagging(S3Request r) throws IOException {
    FileInfo f = ObjectReads.object(ctx, r);
    ctx.access().checkRead(r.principal(), f);
    String tags = ObjectMetadata.tagging(f);
    r.xml(S3XmlWriter.tagging(tags.isEmpty() ? TagSet.empty() : TagSet.fromHeader(tags)));
  }

  void putTagging(S3Request r) throws IOException {
    FileInfo f = ObjectReads.object(ctx, r);
    ctx.access().checkWriteOf(r.principal(), f);
    byte[] document = UploadBody.document(r, S3XmlParser.MAX_TAGGING_BYTES, true);
    TagSet tags = S3XmlParser.tagging(document);
    ctx.fs()
        .setAttribute(
            f.getPath(),
            tags.isEmpty()
                ? SetAttributeOptions.defaults().removeXattr(ObjectMetadata.TAGGING)
                : SetAttributeOptions.defaults()
                    .xattr(ObjectMetadata.TAGGING, ByteString.copyFromUtf8(tags.toHeader())));
    // Rules that filter by tag may select the object now, or no longer.
    lifecycle.keyChanged(r.bucket(), r.key());
    r.empty(HttpResponseStatus.OK, null);
  }

  void deleteTagging(S3Request r) throws IOException {
    FileInfo f = ObjectReads.object(ctx, r);
    ctx.access().checkWriteOf(r.principal(), f);
    ctx.fs()
        .setAttribute(
            f.getPath(), SetAttributeOptions.defaults().removeXattr(ObjectMetadata.TAGGING));
    lifecycle.keyChanged(r.bucket(), r.key());
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }
}
