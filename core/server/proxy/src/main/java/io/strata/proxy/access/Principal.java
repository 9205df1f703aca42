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
 */
public record Principal(String user, String primaryGroup, Set<String> groups) {
  /** The user of requests without a signature, when anonymous access is on. */
  public static final Principal ANONYMOUS = new Principal("nobody", "nogroup", Set.of());

  public Principal {
    groups = Set.copyOf(groups);
  }

  public boolean superuser() {
    return user.equals("root");
  }
}
