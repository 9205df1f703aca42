package io.strata.proxy.s3;

import java.util.List;

/**
 * The S3 operations the proxy tells apart, by method, bucket, key and sub-resource; the name is the
 * one S3's API reference gives (and the {@code operation} tag of the proxy's metrics).
 */
public enum Operation {
  LIST_BUCKETS("ListBuckets"),
  CREATE_BUCKET("CreateBucket"),
  HEAD_BUCKET("HeadBucket"),
  DELETE_BUCKET("DeleteBucket"),
  GET_BUCKET_LOCATION("GetBucketLocation"),
  GET_BUCKET_VERSIONING("GetBucketVersioning"),
  PUT_BUCKET_VERSIONING("PutBucketVersioning"),
  GET_BUCKET_ACL("GetBucketAcl"),
  PUT_BUCKET_ACL("PutBucketAcl"),
  GET_BUCKET_POLICY("GetBucketPolicy"),
  PUT_BUCKET_POLICY("PutBucketPolicy"),
  DELETE_BUCKET_POLICY("DeleteBucketPolicy"),
  GET_BUCKET_TAGGING("GetBucketTagging"),
  PUT_BUCKET_TAGGING("PutBucketTagging"),
  DELETE_BUCKET_TAGGING("DeleteBucketTagging"),
  GET_BUCKET_CORS("GetBucketCors"),
  PUT_BUCKET_CORS("PutBucketCors"),
  DELETE_BUCKET_CORS("DeleteBucketCors"),
  GET_BUCKET_LIFECYCLE("GetBucketLifecycleConfiguration"),
  PUT_BUCKET_LIFECYCLE("PutBucketLifecycleConfiguration"),
  DELETE_BUCKET_LIFECYCLE("DeleteBucketLifecycle"),
  /**
   * A browser's CORS preflight, {@code OPTIONS}: unauthenticated, answered from the bucket's rules.
   */
  CORS_PREFLIGHT("OptionsObject"),
  LIST_OBJECTS("ListObjects"),
  LIST_OBJECTS_V2("ListObjectsV2"),
  LIST_OBJECT_VERSIONS("ListObjectVersions"),
  LIST_MULTIPART_UPLOADS("ListMultipartUploads"),
  DELETE_OBJECTS("DeleteObjects"),
  PUT_OBJECT("PutObject"),
  /** A browser's upload through an HTML form, {@code POST /bucket} ({@link PostObjects}). */
  POST_OBJECT("PostObject"),
  COPY_OBJECT("CopyObject"),
  GET_OBJECT("GetObject"),
  HEAD_OBJECT("HeadObject"),
  DELETE_OBJECT("DeleteObject"),
  GET_OBJECT_TAGGING("GetObjectTagging"),
  PUT_OBJECT_TAGGING("PutObjectTagging"),
  DELETE_OBJECT_TAGGING("DeleteObjectTagging"),
  GET_OBJECT_ACL("GetObjectAcl"),
  GET_OBJECT_ATTRIBUTES("GetObjectAttributes"),
  PUT_OBJECT_ACL("PutObjectAcl"),
  CREATE_MULTIPART_UPLOAD("CreateMultipartUpload"),
  UPLOAD_PART("UploadPart"),
  UPLOAD_PART_COPY("UploadPartCopy"),
  COMPLETE_MULTIPART_UPLOAD("CompleteMultipartUpload"),
  ABORT_MULTIPART_UPLOAD("AbortMultipartUpload"),
  LIST_PARTS("ListParts"),
  /** Anything else: answered NotImplemented or MethodNotAllowed. */
  UNSUPPORTED("Unsupported");

  /** Bucket sub-resources S3 has and Strata does not keep: asking for them is NotImplemented. */
  static final List<String> UNSUPPORTED_SUBRESOURCES =
      List.of(
          "website",
          "replication",
          "logging",
          "notification",
          "encryption",
          "object-lock",
          "legal-hold",
          "retention",
          "torrent",
          "requestPayment",
          "accelerate",
          "analytics",
          "inventory",
          "metrics",
          "intelligent-tiering",
          "ownershipControls",
          "publicAccessBlock",
          "policyStatus",
          "restore",
          "select",
          "session");

  /**
   * Sub-resources that make a bucket's POST something other than a form upload, none of which S3
   * takes by POST on a bucket: 405 MethodNotAllowed rather than a form parsed.
   */
  private static final List<String> POST_OBJECT_EXCLUDED =
      List.of(
          "uploads",
          "uploadId",
          "acl",
          "policy",
          "tagging",
          "cors",
          "lifecycle",
          "versioning",
          "versions",
          "location",
          "attributes",
          "partNumber");

  private final String s3Name;

  Operation(String s3Name) {
    this.s3Name = s3Name;
  }

  public String s3Name() {
    return s3Name;
  }

  /**
   * The action a bucket policy names this operation by: S3's, such as {@code s3:GetObject} for
   * GetObject and HeadObject or {@code s3:PutObject} for every step of an upload.
   */
  public String policyAction() {
    switch (this) {
      case HEAD_BUCKET, LIST_OBJECTS, LIST_OBJECTS_V2:
        return "s3:ListBucket";
      case LIST_OBJECT_VERSIONS:
        return "s3:ListBucketVersions";
      case LIST_MULTIPART_UPLOADS:
        return "s3:ListBucketMultipartUploads";
      case GET_OBJECT, HEAD_OBJECT:
        return "s3:GetObject";
      case PUT_OBJECT,
      POST_OBJECT,
      COPY_OBJECT,
      CREATE_MULTIPART_UPLOAD,
      UPLOAD_PART,
      UPLOAD_PART_COPY,
      COMPLETE_MULTIPART_UPLOAD:
        return "s3:PutObject";
      case DELETE_OBJECT, DELETE_OBJECTS:
        return "s3:DeleteObject";
      case ABORT_MULTIPART_UPLOAD:
        return "s3:AbortMultipartUpload";
      case LIST_PARTS:
        return "s3:ListMultipartUploadParts";
      case GET_BUCKET_LIFECYCLE:
        return "s3:GetLifecycleConfiguration";
      case PUT_BUCKET_LIFECYCLE, DELETE_BUCKET_LIFECYCLE:
        return "s3:PutLifecycleConfiguration";
      default:
        return "s3:" + s3Name;
    }
  }

  /** Whether the operation manages the bucket's policy, which only the owner may, policy or not. */
  boolean managesPolicy() {
    return this == GET_BUCKET_POLICY || this == PUT_BUCKET_POLICY || this == DELETE_BUCKET_POLICY;
  }

  /**
   * The operation a request asks for.
   *
   * @param copySource whether the request has an {@code x-amz-copy-source} header, which makes a
   *     PUT of an object a CopyObject and a PUT of a part an UploadPartCopy
   */
  static Operation of(String method, String bucket, String key, QueryParams q, boolean copySource) {
    if (bucket == null) {
      return method.equals("GET") ? LIST_BUCKETS : UNSUPPORTED;
    }
    for (String sub : UNSUPPORTED_SUBRESOURCES) {
      if (q.has(sub)) {
        return UNSUPPORTED;
      }
    }
    if (method.equals("OPTIONS")) {
      return CORS_PREFLIGHT;
    }
    if (((q.has("cors") || q.has("lifecycle")) && key != null)
        || (q.has("attributes") && (key == null || !method.equals("GET")))) {
      // CORS belongs to a bucket and attributes to an object: a 405 names the mismatch.
      return UNSUPPORTED;
    }
    if (q.has("versions") && !(key == null && method.equals("GET"))) {
      // Only a bucket's GET lists versions; nothing else S3 has takes the sub-resource.
      return UNSUPPORTED;
    }
    if (key == null) {
      switch (method) {
        case "PUT":
          if (q.has("acl")) {
            return PUT_BUCKET_ACL;
          }
          if (q.has("policy")) {
            return PUT_BUCKET_POLICY;
          }
          if (q.has("tagging")) {
            return PUT_BUCKET_TAGGING;
          }
          if (q.has("cors")) {
            return PUT_BUCKET_CORS;
          }
          if (q.has("lifecycle")) {
            return PUT_BUCKET_LIFECYCLE;
          }
          if (q.has("versioning")) {
            return PUT_BUCKET_VERSIONING;
          }
          return CREATE_BUCKET;
        case "HEAD":
          return HEAD_BUCKET;
        case "DELETE":
          if (q.has("policy")) {
            return DELETE_BUCKET_POLICY;
          }
          if (q.has("tagging")) {
            return DELETE_BUCKET_TAGGING;
          }
          if (q.has("lifecycle")) {
            return DELETE_BUCKET_LIFECYCLE;
          }
          return q.has("cors") ? DELETE_BUCKET_CORS : DELETE_BUCKET;
        case "POST":
          if (q.has("delete")) {
            return DELETE_OBJECTS;
          }
          for (String sub : POST_OBJECT_EXCLUDED) {
            if (q.has(sub)) {
              return UNSUPPORTED;
            }
          }
          // An HTML form's upload: its key and everything else are in the body.
          return POST_OBJECT;
        case "GET":
          if (q.has("location")) {
            return GET_BUCKET_LOCATION;
          }
          if (q.has("versioning")) {
            return GET_BUCKET_VERSIONING;
          }
          if (q.has("acl")) {
            return GET_BUCKET_ACL;
          }
          if (q.has("policy")) {
            return GET_BUCKET_POLICY;
          }
          if (q.has("uploads")) {
            return LIST_MULTIPART_UPLOADS;
          }
          if (q.has("tagging")) {
            return GET_BUCKET_TAGGING;
          }
          if (q.has("cors")) {
            return GET_BUCKET_CORS;
          }
          if (q.has("lifecycle")) {
            return GET_BUCKET_LIFECYCLE;
          }
          if (q.has("versions")) {
            return LIST_OBJECT_VERSIONS;
          }
          return "2".equals(q.get("list-type")) ? LIST_OBJECTS_V2 : LIST_OBJECTS;
        default:
          return UNSUPPORTED;
      }
    }
    switch (method) {
      case "PUT":
        if (q.has("tagging")) {
          return PUT_OBJECT_TAGGING;
        }
        if (q.has("acl")) {
          return PUT_OBJECT_ACL;
        }
        if (q.has("uploadId") || q.has("partNumber")) {
          return requireBoth(q, copySource ? UPLOAD_PART_COPY : UPLOAD_PART);
        }
        return copySource ? COPY_OBJECT : PUT_OBJECT;
      case "GET":
        if (q.has("tagging")) {
          return GET_OBJECT_TAGGING;
        }
        if (q.has("acl")) {
          return GET_OBJECT_ACL;
        }
        if (q.has("uploadId")) {
          return LIST_PARTS;
        }
        return q.has("attributes") ? GET_OBJECT_ATTRIBUTES : GET_OBJECT;
      case "HEAD":
        return HEAD_OBJECT;
      case "DELETE":
        if (q.has("tagging")) {
          return DELETE_OBJECT_TAGGING;
        }
        if (q.has("uploadId")) {
          return ABORT_MULTIPART_UPLOAD;
        }
        return DELETE_OBJECT;
      case "POST":
        if (q.has("uploads")) {
          return CREATE_MULTIPART_UPLOAD;
        }
        if (q.has("uploadId")) {
          return COMPLETE_MULTIPART_UPLOAD;
        }
        return UNSUPPORTED;
      default:
        return UNSUPPORTED;
    }
  }

  private static Operation requireBoth(QueryParams q, Operation op) {
    if (!q.has("uploadId") || !q.has("partNumber")) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT, "An upload of a part names both uploadId and partNumber");
    }
    return op;
  }
}
