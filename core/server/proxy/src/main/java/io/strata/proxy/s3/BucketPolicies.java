package io.strata.proxy.s3;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.BucketPolicy;
import io.strata.proxy.access.Principal;
import io.strata.proxy.auth.UriDecoding;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;

/**
 * Bucket policies: PutBucketPolicy, GetBucketPolicy and DeleteBucketPolicy (the owner's alone, as
 * the policy may not lock its owner out of changing it), the policy kept as the bucket folder's
 * {@link #XATTR} attribute, and its verdict on each request before the request is served: a deny
 * refuses it whatever the modes and ACLs allow, an allow grants it whatever the modes say ({@link
 * Principal#grantedByPolicy}), and otherwise the modes and ACLs decide. Parsed policies are kept by
 * their text, so a request does not parse one.
 */
final class BucketPolicies {
  static final String XATTR = "strata.s3.policy";

  /** S3's bound on a bucket policy's size. */
  static final int MAX_POLICY_BYTES = 20 << 10;

  private final ProxyContext ctx;
  private final BucketDocument document;
  private final Cache<String, BucketPolicy> parsed =
      Caffeine.newBuilder().maximumSize(1_000).build();

  BucketPolicies(ProxyContext ctx) {
    this.ctx = ctx;
    this.document = new BucketDocument(ctx, XATTR);
  }

  void put(S3Request r) throws IOException {
    FileInfo bucket = ownBucket(r);
    byte[] body = UploadBody.document(r, MAX_POLICY_BYTES, true);
    String text = new String(body, StandardCharsets.UTF_8);
    BucketPolicy.parse(text, r.bucket());
    document.store(bucket, body);
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  void get(S3Request r) throws IOException {
    FileInfo bucket = ownBucket(r);
    byte[] text =
        document.stored(
            bucket,
            () ->
                new S3Exception(
                    S3ErrorCode.NO_SUCH_BUCKET_POLICY,
                    "The bucket policy does not exist: "
                        + r.bucket()
                        + " (PutBucketPolicy sets one)"));
    var h = r.baseHeaders();
    h.set("Content-Type", "application/json");
    r.exchange().respond(HttpResponseStatus.OK, h, text);
  }

  void delete(S3Request r) throws IOException {
    FileInfo bucket = ownBucket(r);
    document.remove(bucket);
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  private FileInfo ownBucket(S3Request r) throws StrataException {
    FileInfo bucket = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkOwnerOf(r.principal(), bucket);
    return bucket;
  }

  /**
   * The principal a request acts as once its bucket's policy is heard: the same, or one the policy
   * grants the request to. A copy is granted only when the source bucket's policy allows reading
   * the source too.
   *
   * @throws S3Exception AccessDenied naming the statement when the policy denies the request
   */
  Principal apply(
      Operation op,
      String bucket,
      String key,
      QueryParams q,
      String copySource,
      InetAddress client,
      boolean secureTransport,
      Principal p)
      throws StrataException {
    if (bucket == null || op == Operation.CREATE_BUCKET || op.managesPolicy()) {
      return p;
    }
    String prefix =
        op == Operation.LIST_OBJECTS
                || op == Operation.LIST_OBJECTS_V2
                || op == Operation.LIST_OBJECT_VERSIONS
            ? (q.get("prefix") == null ? "" : q.get("prefix"))
            : null;
    if (op == Operation.DELETE_OBJECTS) {
      refuseIfAnyDeleteIsDenied(bucket, client, secureTransport, p);
      return p;
    }
    BucketPolicy.Decision d =
        decide(bucket, key, op.policyAction(), prefix, client, secureTransport, p);
    if (copySource != null
        && (op == Operation.COPY_OBJECT || op == Operation.UPLOAD_PART_COPY)
        && d != BucketPolicy.Decision.DENY) {
      String[] source = copySourceOf(copySource);
      if (source != null) {
        BucketPolicy.Decision s =
            decide(source[0], source[1], "s3:GetObject", null, client, secureTransport, p);
        d = s == BucketPolicy.Decision.DENY ? s : (s == d ? d : BucketPolicy.Decision.NONE);
      }
    }
    return d == BucketPolicy.Decision.ALLOW ? p.withPolicyGrant() : p;
  }

  /**
   * DeleteObjects names its keys in its body, read only when it is served: it is refused whole when
   * the policy denies this requester s3:DeleteObject of any object, and is never granted by the
   * policy (the modes decide for each key).
   */
  private void refuseIfAnyDeleteIsDenied(
      String bucket, InetAddress client, boolean secureTransport, Principal p)
      throws StrataException {
    BucketPolicy policy = policyOf(bucket);
    if (policy == null) {
      return;
    }
    String sid =
        policy.mayDenySomewhere(
            new BucketPolicy.Request(
                p.signed() ? p.user() : null,
                "s3:DeleteObject",
                "arn:aws:s3:::" + bucket + "/",
                null,
                client,
                secureTransport));
    if (sid != null) {
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: the policy of bucket "
              + bucket
              + " denies s3:DeleteObject of some of its objects"
              + (sid.isEmpty() ? "" : " (statement " + sid + ")")
              + ", so DeleteObjects is refused whole; delete the keys one by one with"
              + " DeleteObject");
    }
  }

  private BucketPolicy.Decision decide(
      String bucket,
      String key,
      String action,
      String prefix,
      InetAddress client,
      boolean secureTransport,
      Principal p)
      throws StrataException {
    BucketPolicy policy = policyOf(bucket);
    if (policy == null) {
      return BucketPolicy.Decision.NONE;
    }
    String resource = "arn:aws:s3:::" + bucket + (key == null ? "" : "/" + key);
    BucketPolicy.Request req =
        new BucketPolicy.Request(
            p.signed() ? p.user() : null, action, resource, prefix, client, secureTransport);
    BucketPolicy.Decision d = policy.decide(req);
    if (d == BucketPolicy.Decision.DENY) {
      String sid = policy.denyingStatement(req);
      throw new S3Exception(
          S3ErrorCode.ACCESS_DENIED,
          "Access Denied: the policy of bucket "
              + bucket
              + " denies "
              + action
              + " on "
              + resource
              + (sid.isEmpty() ? "" : " (statement " + sid + ")")
              + " to "
              + (p.signed() ? "user " + p.user() : "unsigned requests"));
    }
    return d;
  }

  private BucketPolicy policyOf(String bucket) throws StrataException {
    FileInfo folder;
    try {
      folder = ctx.statuses().get(ctx.buckets().path(bucket));
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return null;
      }
      throw e;
    }
    ByteString text = folder == null ? null : folder.getXattrsMap().get(XATTR);
    if (text == null) {
      return null;
    }
    String json = text.toStringUtf8();
    return parsed.get(bucket + "\n" + json, k -> BucketPolicy.parse(json, bucket));
  }

  /** The bucket and key of an {@code x-amz-copy-source}, or null when it names none. */
  private static String[] copySourceOf(String header) {
    String s = header.startsWith("/") ? header.substring(1) : header;
    int version = s.indexOf("?versionId=");
    if (version >= 0) {
      s = s.substring(0, version);
    }
    int slash = s.indexOf('/');
    if (slash <= 0) {
      return null;
    }
    return new String[] {
      UriDecoding.path(s.substring(0, slash)), UriDecoding.path(s.substring(slash + 1))
    };
  }
}
