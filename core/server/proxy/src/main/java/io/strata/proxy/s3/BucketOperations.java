package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.CloseableIterator;
import io.strata.client.SetAttributeOptions;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.CannedAcl;
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
 * staged uploads go with it), GetBucketLocation, and the ACLs of buckets and objects (kept as modes
 * and the grants modes cannot hold: {@link RequestedAcl}). Versioning is {@link
 * BucketVersioning}'s.
 */
final class BucketOperations {
  private final ProxyContext ctx;

  BucketOperations(ProxyContext ctx) {
    this.ctx = ctx;
  }

  /**
   * ListBuckets: the buckets the requester owns, as S3 lists an account's own; {@code root} is
   * shown every bucket.
   */
  void listBuckets(S3Request r) throws IOException {
    if (!r.principal().signed()) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: listing buckets needs a signed request; sign it with an access key from"
              + " the proxy's credentials file");
    }
    List<BucketListing.Bucket> buckets = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(PathNames.ROOT)) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()
            && ownedBy(r, f)
            && ctx.buckets().listable(f.getName())
            && !ctx.buckets().isMapped(f.getName())) {
          buckets.add(bucket(f.getName(), f));
        }
      }
    }
    for (Map.Entry<String, String> m : ctx.buckets().mapped().entrySet()) {
      try {
        FileInfo f = ctx.fs().getStatus(m.getValue());
        if (f.getDirectory() && ownedBy(r, f)) {
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

  private static boolean ownedBy(S3Request r, FileInfo f) {
    return r.principal().superuser() || f.getOwner().equals(r.principal().user());
  }

  private BucketListing.Bucket bucket(String name, FileInfo f) {
    return new BucketListing.Bucket(name, Instant.ofEpochMilli(f.getModificationTimeMs()), null);
  }

  static Owner owner(S3Request r) {
    return new Owner(r.principal().user(), r.principal().user());
  }

  void createBucket(S3Request r) throws IOException {
    if (!r.principal().signed()) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: creating a bucket needs a signed request; sign it with an access key"
              + " from the proxy's credentials file");
    }
    String bucket = r.bucket();
    if (!ctx.buckets().isMapped(bucket)) {
      Buckets.checkNewName(bucket);
    }
    CannedAcl acl = RequestedAcl.fromHeaders(r, r.principal().user(), r.principal().user());
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
              path,
              true,
              false,
              acl == null ? ctx.bucketMode() : acl.folderMode(),
              r.principal().user(),
              r.principal().primaryGroup());
      ByteString grants = acl == null ? null : acl.xattrValue(r.principal().user());
      if (grants != null) {
        ctx.fs().setAttribute(path, SetAttributeOptions.defaults().xattr(CannedAcl.XATTR, grants));
      }
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
    // Versioning hook: noncurrent versions keep a bucket from being deleted, as in S3.
    new ObjectVersions(ctx).checkNoneKept(r.bucket());
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

  void getAcl(S3Request r) throws IOException {
    FileInfo f = r.key() == null ? bucketFolder(ctx, r) : ObjectReads.object(ctx, r);
    ctx.access().checkOwnerOf(r.principal(), f);
    r.xml(S3XmlWriter.accessControlPolicy(RequestedAcl.describe(f)));
  }

  /**
   * PutBucketAcl and PutObjectAcl: a canned ACL, grants in headers, or an AccessControlPolicy body,
   * kept as the canned ACL they amount to: the mode it gives and its grants beyond the mode.
   */
  void putAcl(S3Request r) throws IOException {
    FileInfo bucket = bucketFolder(ctx, r);
    FileInfo f = r.key() == null ? bucket : ObjectReads.object(ctx, r);
    ctx.access().checkOwnerOf(r.principal(), f);
    CannedAcl acl = RequestedAcl.fromHeaders(r, f.getOwner(), bucket.getOwner());
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_ACCESS_CONTROL_POLICY_BYTES, true);
    if (acl != null && body.length > 0) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "This request does not support content: send the ACL in headers or in the body, not"
              + " both");
    }
    if (acl == null) {
      if (body.length == 0) {
        throw new S3Exception(
            S3ErrorCode.MISSING_SECURITY_HEADER,
            "Your request was missing a required header: send x-amz-acl, an x-amz-grant-*"
                + " header or an AccessControlPolicy body");
      }
      acl =
          RequestedAcl.fromGrants(
              S3XmlParser.accessControlPolicy(body).grants(), f.getOwner(), bucket.getOwner());
    }
    ByteString grants = acl.xattrValue(bucket.getOwner());
    SetAttributeOptions change =
        SetAttributeOptions.defaults().mode(f.getDirectory() ? acl.folderMode() : acl.fileMode());
    change =
        grants == null
            ? change.removeXattr(CannedAcl.XATTR)
            : change.xattr(CannedAcl.XATTR, grants);
    ctx.fs().setAttribute(f.getPath(), change);
    ctx.access().forget(f.getPath());
    r.empty(HttpResponseStatus.OK, null);
  }

  /**
   * The bucket's folder, or NoSuchBucket; from the status cache, which the change stream keeps
   * current, so that an object's PUT or GET does not ask the master for its bucket each time.
   */
  static FileInfo bucketFolder(ProxyContext ctx, S3Request r) throws StrataException {
    return bucketFolder(ctx, r.bucket());
  }

  /** The folder of the bucket named {@code bucket}; NoSuchBucket when it is missing. */
  static FileInfo bucketFolder(ProxyContext ctx, String bucket) throws StrataException {
    FileInfo f;
    try {
      f = ctx.statuses().get(ctx.buckets().path(bucket));
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
      f = null;
    }
    if (f == null || !f.getDirectory()) {
      throw noSuchBucket(bucket);
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
