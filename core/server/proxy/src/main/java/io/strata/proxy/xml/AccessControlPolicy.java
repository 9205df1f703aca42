package io.strata.proxy.xml;

import java.util.List;

/**
 * An {@code <AccessControlPolicy>}: the grants of PutBucketAcl and PutObjectAcl bodies, or those
 * GetBucketAcl and GetObjectAcl answer with.
 */
public record AccessControlPolicy(Owner owner, List<Grant> grants) {
  /** The group of every requester, signed or not. */
  public static final String ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers";

  /** The group of every signed requester. */
  public static final String AUTHENTICATED_USERS =
      "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";

  public AccessControlPolicy {
    grants = List.copyOf(grants);
  }

  /**
   * One grant: a permission (READ, WRITE, READ_ACP, WRITE_ACP, FULL_CONTROL) to a grantee named by
   * exactly one of its canonical user id, group URI or e-mail address (the others empty).
   */
  public record Grant(String permission, String id, String uri, String email) {
    public static Grant toUser(String id, String permission) {
      return new Grant(permission, id, "", "");
    }

    public static Grant toGroup(String uri, String permission) {
      return new Grant(permission, "", uri, "");
    }

    /** The grantee as S3's grant headers write it: {@code id="..."}, {@code uri="..."}. */
    public String grantee() {
      if (!id.isEmpty()) {
        return "id=\"" + id + "\"";
      }
      return uri.isEmpty() ? "emailAddress=\"" + email + "\"" : "uri=\"" + uri + "\"";
    }
  }
}
