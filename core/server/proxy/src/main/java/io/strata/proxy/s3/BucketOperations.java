package io.strata.proxy.s3;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.CloseableIterator;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.BucketConfiguration;
import io.strata.proxy.xml.BucketListing;
import io.strata.proxy.xml.Owner;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bucket operations: ListBuckets (the top-level folders and the mapped buckets), CreateBucket
 * (a folder, with S3's naming rules), HeadBucket, DeleteBucket (only when no visible entry is left;
 * staged uploads go with it), GetBucketLocation, and the answers for versioning and ACLs that
 * Strata does not keep (never enabled; the canned private ACL).
 */
final class BucketOperations {
  private final ProxyContext ctx;

  BucketOperations(ProxyContext ctx) {
    this.ctx = ctx;
  }

  void listBuckets(S3Request r) throws IOException {
    List<BucketListing.Bucket> buckets = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(PathNames.ROOT)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()
            && ctx.buckets().listable(f.getName())
            && !ctx.buckets().isMapped(f.getName())) {
          buckets.add(bucket(f.getName(), f));
        }
      }
    }
    for (Map.Entry<String, String> m : ctx.buckets().mapped().entrySet()) {
      try {
        FileInfo f = ctx.fs().getStatus(m.getValue());
        if (f.getDirectory()) {
          buckets.add(bucket(m.getKey(), f));
        }
      } catch (StrataException e) {
        if (e.code() != ErrorCode.NOT_FOUND) {
          throw e;
        }
      }
    }
    buckets.sort((a, b) -> a.name().compareTo(b.name()));
    r.xml(S3XmlWriter.listAllMyBuckets(new BucketListing(owner(r), buckets)));
  }

  private BucketListing.Bucket bucket(String name, FileInfo f) {
    return new BucketListing.Bucket(name, Instant.ofEpochMilli(f.getModificationTimeMs()), null);
  }

  static Owner owner(S3Request r) {
    return new Owner(r.principal().user(), r.principal().user());
  }

  void createBucket(S3Request r) throws IOException {
    String bucket = r.bucket();
    if (!ctx.buckets().isMapped(bucket)) {
      Buckets.checkNewName(bucket);
    }
    checkCannedAcl(r);
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_CREATE_BUCKET_CONFIGURATION_BYTES, true);
    if (body.length > 0) {
      BucketConfiguration c = S3XmlParser.createBucketConfiguration(body);
      String asked = c.locationConstraint().orElse("");
      if (!asked.isEmpty()
          && !asked.equals(ctx.region())
          && !(asked.equals("US") && ctx.region().equals("us-east-1"))) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "The location constraint '"
                + asked
                + "' is not this proxy's region, "
                + ctx.region()
                + " (strata.proxy.region)");
      }
    }
    String path = ctx.buckets().path(bucket);
    FileInfo existing = status(path);
    if (existing != null) {
      if (existing.getDirectory() && existing.getOwner().equals(r.principal().user())) {
        throw new S3Exception(
            S3ErrorCode.BUCKET_ALREADY_OWNED_BY_YOU,
            "Your previous request to create the named bucket succeeded and you already own"
                + " it: "
                + bucket);
      }
      throw new S3Exception(
          S3ErrorCode.BUCKET_ALREADY_EXISTS,
          "The requested bucket name is" + " not available: " + bucket + " exists at " + path);
    }
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(path));
    try {
      ctx.fs()
          .createDirectory(
              path, true, false, 0, r.principal().user(), r.principal().primaryGroup());
    } catch (StrataException e) {
      if (e.code() == ErrorCode.ALREADY_EXISTS) {
        throw new S3Exception(
            S3ErrorCode.BUCKET_ALREADY_OWNED_BY_YOU, "The bucket was created meanwhile: " + bucket);
      }
      throw e;
    }
    HttpHeaders h = new DefaultHttpHeaders();
    h.set("Location", "/" + bucket);
    r.empty(HttpResponseStatus.OK, h);
  }

  void headBucket(S3Request r) throws IOException {
    FileInfo dir = bucketFolder(ctx, r);
    ctx.access().checkList(r.principal(), dir);
    HttpHeaders h = new DefaultHttpHeaders();
    h.set("x-amz-bucket-region", ctx.region());
    r.empty(HttpResponseStatus.OK, h);
  }

  void deleteBucket(S3Request r) throws IOException {
    FileInfo dir = bucketFolder(ctx, r);
    if (ctx.buckets().isMapped(r.bucket())) {
      throw new S3Exception(
          S3ErrorCode.METHOD_NOT_ALLOWED,
          "The bucket "
              + r.bucket()
              + " is mapped to "
              + dir.getPath()
              + " by strata.proxy.bucket.map and cannot be"
              + " deleted through S3");
    }
    ctx.access().checkWriteIn(r.principal(), PathNames.parent(dir.getPath()));
    try {
      ctx.fs().deleteUnlessVisibleChildren(dir.getPath());
    } catch (StrataException e) {
      if (e.code() == ErrorCode.FAILED_PRECONDITION) {
        throw new S3Exception(
            S3ErrorCode.BUCKET_NOT_EMPTY,
            "The bucket you tried to delete is not empty: " + r.bucket());
      }
      if (e.code() == ErrorCode.NOT_FOUND) {
        throw noSuchBucket(r.bucket());
      }
      throw e;
    }
    ctx.access().forget(dir.getPath());
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  void location(S3Request r) throws IOException {
    bucketFolder(ctx, r);
    r.xml(S3XmlWriter.locationConstraint(ctx.region()));
  }

  void versioning(S3Request r) throws IOException {
    bucketFolder(ctx, r);
    r.xml(S3XmlWriter.versioningNeverEnabled());
  }

  void getAcl(S3Request r) throws IOException {
    FileInfo f = r.key() == null ? bucketFolder(ctx, r) : ObjectReads.object(ctx, r);
    r.xml(S3XmlWriter.privateAcl(new Owner(f.getOwner(), f.getOwner())));
  }

  /** PutBucketAcl and PutObjectAcl: only the canned private ACL, which is what Strata keeps. */
  void putAcl(S3Request r) throws IOException {
    if (r.key() == null) {
      bucketFolder(ctx, r);
    } else {
      ObjectReads.object(ctx, r);
    }
    checkCannedAcl(r);
    byte[] body = UploadBody.document(r, 64 << 10, true);
    if (body.length > 0 && r.header("x-amz-acl") == null) {
      throw new S3Exception(
          S3ErrorCode.NOT_IMPLEMENTED,
          "Access control lists other than the"
              + " canned 'private' are not implemented: access follows the namespace's owner,"
              + " group and mode");
    }
    r.empty(HttpResponseStatus.OK, null);
  }

  /** Accepts no canned ACL or "private"; any other is NotImplemented. */
  static void checkCannedAcl(S3Request r) {
    String acl = r.header("x-amz-acl");
    if (acl != null && !acl.equals("private")) {
      throw new S3Exception(
          S3ErrorCode.NOT_IMPLEMENTED,
          "The canned ACL '"
              + acl
              + "' is not"
              + " implemented: Strata keeps 'private' only; access follows the namespace's owner,"
              + " group and mode");
    }
    for (String grant :
        new String[] {
          "x-amz-grant-read",
          "x-amz-grant-write",
          "x-amz-grant-read-acp",
          "x-amz-grant-write-acp",
          "x-amz-grant-full-control"
        }) {
      if (r.header(grant) != null) {
        throw new S3Exception(
            S3ErrorCode.NOT_IMPLEMENTED,
            grant
                + " is not implemented:"
                + " access follows the namespace's owner, group and mode");
      }
    }
  }

  /**
   * The bucket's folder, or NoSuchBucket; from the status cache, which the change stream keeps
   * current, so that an object's PUT or GET does not ask the master for its bucket each time.
   */
  static FileInfo bucketFolder(ProxyContext ctx, S3Request r) throws StrataException {
    FileInfo f;
    try {
      f = ctx.statuses().get(ctx.buckets().path(r.bucket()));
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
      f = null;
    }
    if (f == null || !f.getDirectory()) {
      throw noSuchBucket(r.bucket());
    }
    return f;
  }

  static S3Exception noSuchBucket(String bucket) {
    return new S3Exception(
        S3ErrorCode.NO_SUCH_BUCKET, "The specified bucket does not exist: " + bucket);
  }

  private FileInfo status(String path) throws StrataException {
    return status(ctx, path);
  }

  /** The status at a path, or null when nothing is there. */
  static FileInfo status(ProxyContext ctx, String path) throws StrataException {
    try {
      return ctx.fs().getStatus(path);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return null;
      }
      throw e;
    }
  }

  /** Marks a folder as an S3 folder marker, so listings show it even when it has entries. */
  static void mark(ProxyContext ctx, String path) throws StrataException {
    ctx.fs()
        .setAttribute(
            path,
            SetAttributeOptions.defaults()
                .xattr(ObjectMetadata.MARKER, com.google.protobuf.ByteString.EMPTY));
  }
}
