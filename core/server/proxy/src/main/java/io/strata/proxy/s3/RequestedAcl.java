package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.CannedAcl;
import io.strata.proxy.xml.AccessControlPolicy;
import io.strata.proxy.xml.AccessControlPolicy.Grant;
import io.strata.proxy.xml.Owner;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The ACL a request asks for (its {@code x-amz-acl} header, its {@code x-amz-grant-*} headers or a
 * Put*Acl body), as the canned ACL it amounts to, which is the form Strata keeps ({@link
 * CannedAcl}); and the ACL a file or folder has, as GetBucketAcl and GetObjectAcl describe it.
 *
 * <p>Grants are taken when a canned ACL says the same: the owner's own permissions, READ (and, on a
 * bucket, WRITE) to all users or to authenticated users, READ or FULL_CONTROL to the bucket's
 * owner. Any other grant (to another user, by e-mail, or another permission to a group) has no
 * place in owner, group and mode, so it is refused by name rather than dropped.
 */
final class RequestedAcl {
  static final String[] GRANT_HEADERS = {
    "x-amz-grant-read",
    "x-amz-grant-write",
    "x-amz-grant-read-acp",
    "x-amz-grant-write-acp",
    "x-amz-grant-full-control"
  };

  private RequestedAcl() {}

  /**
   * The mode and ACL attribute of an object that a write request makes.
   *
   * @param mode the object's mode
   * @param xattr the ACL attribute, or null when the mode says everything
   */
  record NewObjectAcl(int mode, ByteString xattr) {
    /** Adds the ACL attribute to an object's attributes. */
    void addTo(Map<String, ByteString> xattrs) {
      if (xattr != null) {
        xattrs.put(CannedAcl.XATTR, xattr);
      }
    }
  }

  /**
   * The ACL of an object written by {@code r} into {@code bucket}: what its headers ask for, or
   * without any, private as in S3 but for the group read bit of the bucket folder, so that a bucket
   * an operator opened to a group (mode 0750) gets objects that group may read (0640). Other users
   * never inherit: a bucket open to all does not make every object in it readable by all.
   */
  static NewObjectAcl forNewObject(S3Request r, FileInfo bucket) {
    CannedAcl acl = fromHeaders(r, r.principal().user(), bucket.getOwner());
    if (acl == null) {
      return new NewObjectAcl(0600 | (bucket.getMode() & 0040), null);
    }
    return new NewObjectAcl(acl.fileMode(), acl.xattrValue(bucket.getOwner()));
  }

  /**
   * The canned ACL the headers of {@code r} ask for, or null when they ask for none.
   *
   * @param owner who will own the object or bucket
   * @param bucketOwner the owner of its bucket
   * @throws S3Exception InvalidRequest for both a canned ACL and grants, NotImplemented for a grant
   *     no canned ACL makes
   */
  static CannedAcl fromHeaders(S3Request r, String owner, String bucketOwner) {
    String canned = r.header("x-amz-acl");
    List<Grant> grants = new ArrayList<>();
    for (String header : GRANT_HEADERS) {
      String value = r.header(header);
      if (value != null) {
        grants.addAll(parseGrantHeader(header, value));
      }
    }
    if (canned != null && !grants.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Specifying both Canned ACLs and Header Grants is not allowed: send x-amz-acl or the"
              + " x-amz-grant-* headers");
    }
    if (canned != null) {
      return CannedAcl.parse(canned);
    }
    return grants.isEmpty() ? null : fromGrants(grants, owner, bucketOwner);
  }

  /**
   * The canned ACL a list of grants amounts to.
   *
   * @throws S3Exception NotImplemented naming the first grant no canned ACL makes
   */
  static CannedAcl fromGrants(List<Grant> grants, String owner, String bucketOwner) {
    boolean allRead = false;
    boolean allWrite = false;
    boolean authenticatedRead = false;
    boolean bucketOwnerRead = false;
    boolean bucketOwnerFull = false;
    for (Grant g : grants) {
      String perm = g.permission();
      if (!g.id().isEmpty() && g.id().equals(owner)) {
        continue;
      }
      if (g.uri().equals(AccessControlPolicy.ALL_USERS) && perm.equals("READ")) {
        allRead = true;
      } else if (g.uri().equals(AccessControlPolicy.ALL_USERS) && perm.equals("WRITE")) {
        allWrite = true;
      } else if (g.uri().equals(AccessControlPolicy.AUTHENTICATED_USERS) && perm.equals("READ")) {
        authenticatedRead = true;
      } else if (!g.id().isEmpty() && g.id().equals(bucketOwner) && perm.equals("READ")) {
        bucketOwnerRead = true;
      } else if (!g.id().isEmpty() && g.id().equals(bucketOwner) && perm.equals("FULL_CONTROL")) {
        bucketOwnerFull = true;
      } else {
        throw new S3Exception(
            S3ErrorCode.NOT_IMPLEMENTED,
            "The grant of "
                + perm
                + " to "
                + g.grantee()
                + " is not implemented: Strata keeps what the canned ACLs grant (READ to all"
                + " users or to authenticated users, WRITE on a bucket to all users, READ or"
                + " FULL_CONTROL to the bucket's owner); other access follows the namespace's"
                + " owner, group and mode");
      }
    }
    if (allWrite) {
      return CannedAcl.PUBLIC_READ_WRITE;
    }
    if (allRead) {
      return CannedAcl.PUBLIC_READ;
    }
    if (authenticatedRead) {
      return CannedAcl.AUTHENTICATED_READ;
    }
    if (bucketOwnerFull) {
      return CannedAcl.BUCKET_OWNER_FULL_CONTROL;
    }
    return bucketOwnerRead ? CannedAcl.BUCKET_OWNER_READ : CannedAcl.PRIVATE;
  }

  /**
   * The grants of one {@code x-amz-grant-*} header: {@code id="..."} or {@code uri="..."} pairs.
   */
  static List<Grant> parseGrantHeader(String header, String value) {
    String permission =
        header
            .substring("x-amz-grant-".length())
            .toUpperCase(java.util.Locale.ROOT)
            .replace('-', '_');
    List<Grant> out = new ArrayList<>();
    for (String part : value.split(",")) {
      String p = part.trim();
      int eq = p.indexOf('=');
      if (eq <= 0) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            header + " '" + value + "' is not a list of id=\"...\" or uri=\"...\" grantees");
      }
      String kind = p.substring(0, eq).trim().toLowerCase(java.util.Locale.ROOT);
      String v = p.substring(eq + 1).trim();
      if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
        v = v.substring(1, v.length() - 1);
      }
      switch (kind) {
        case "id" -> out.add(Grant.toUser(v, permission));
        case "uri" -> out.add(Grant.toGroup(v, permission));
        case "emailaddress" -> out.add(new Grant(permission, "", "", v));
        default ->
            throw new S3Exception(
                S3ErrorCode.INVALID_ARGUMENT,
                header + " names a grantee by '" + kind + "': use id=\"...\" or uri=\"...\"");
      }
    }
    return out;
  }

  /**
   * The ACL of a file or folder as GetBucketAcl and GetObjectAcl answer: FULL_CONTROL to its owner,
   * the grants of its ACL attribute, and READ (and, on a folder, WRITE) to authenticated users when
   * its mode gives them to every user.
   */
  static AccessControlPolicy describe(FileInfo f) {
    String owner = f.getOwner();
    List<Grant> grants = new ArrayList<>();
    grants.add(Grant.toUser(owner, "FULL_CONTROL"));
    CannedAcl.StoredAcl stored = CannedAcl.stored(f);
    if (stored.readableByAnyone()) {
      grants.add(Grant.toGroup(AccessControlPolicy.ALL_USERS, "READ"));
    } else if (stored.readableBySigned() || (f.getMode() & 4) != 0) {
      grants.add(Grant.toGroup(AccessControlPolicy.AUTHENTICATED_USERS, "READ"));
    }
    if (stored.writableByAnyone()) {
      grants.add(Grant.toGroup(AccessControlPolicy.ALL_USERS, "WRITE"));
    }
    if (stored.acl() != null
        && stored.acl().readableByBucketOwner()
        && !stored.bucketOwner().equals(owner)) {
      grants.add(
          Grant.toUser(
              stored.bucketOwner(),
              stored.acl() == CannedAcl.BUCKET_OWNER_FULL_CONTROL ? "FULL_CONTROL" : "READ"));
    }
    if (f.getDirectory() && !stored.writableByAnyone() && (f.getMode() & 3) == 3) {
      grants.add(Grant.toGroup(AccessControlPolicy.AUTHENTICATED_USERS, "WRITE"));
    }
    return new AccessControlPolicy(new Owner(owner, owner), grants);
  }
}
