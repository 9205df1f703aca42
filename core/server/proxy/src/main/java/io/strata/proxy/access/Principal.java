package io.strata.proxy.access;

import java.util.Set;

/**
 * Who a request acts as: the Strata user its access key maps to, with the user's groups. The
 * namespace's owner, group and mode decide what the user may do, as for a process of that user in
 * the FUSE mount; {@code root} may do everything.
 *
 * @param user the Strata user (the owner of what it creates)
 * @param primaryGroup the group of what it creates
 * @param groups every group the user belongs to
 * @param signed whether the request was signed with an access key; an unsigned request acts as
 *     {@link #ANONYMOUS}
 * @param grantedByPolicy whether the bucket's policy allows the request, which the modes then do
 *     not refuse ({@link BucketPolicy})
 */
public record Principal(
    String user, String primaryGroup, Set<String> groups, boolean signed, boolean grantedByPolicy) {
  /**
   * The user of requests without a signature. The public ACLs let it read and write; the modes
   * apply to it as to any other user only when {@code strata.proxy.anonymous} is on.
   */
  public static final Principal ANONYMOUS =
      new Principal("nobody", "nogroup", Set.of(), false, false);

  public Principal {
    groups = Set.copyOf(groups);
  }

  /** A user whose request was signed with one of its access keys. */
  public Principal(String user, String primaryGroup, Set<String> groups) {
    this(user, primaryGroup, groups, true, false);
  }

  /** This principal, for a request that the bucket's policy allows. */
  public Principal withPolicyGrant() {
    return new Principal(user, primaryGroup, groups, signed, true);
  }

  public boolean superuser() {
    return user.equals("root");
  }
}
