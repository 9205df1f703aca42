package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proto.FileInfo;
import io.strata.proxy.access.CannedAcl;
import io.strata.proxy.xml.AccessControlPolicy;
import io.strata.proxy.xml.AccessControlPolicy.Grant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestedAclTest {
  private static final String ALL = AccessControlPolicy.ALL_USERS;
  private static final String SIGNED = AccessControlPolicy.AUTHENTICATED_USERS;

  @Test
  void grantsAmountToTheCannedAclThatMakesThem() {
    assertEquals(
        CannedAcl.PRIVATE,
        RequestedAcl.fromGrants(List.of(Grant.toUser("ann", "FULL_CONTROL")), "ann", "ann"));
    assertEquals(
        CannedAcl.PUBLIC_READ,
        RequestedAcl.fromGrants(
            List.of(Grant.toUser("ann", "FULL_CONTROL"), Grant.toGroup(ALL, "READ")),
            "ann",
            "ann"));
    assertEquals(
        CannedAcl.PUBLIC_READ_WRITE,
        RequestedAcl.fromGrants(
            List.of(Grant.toGroup(ALL, "READ"), Grant.toGroup(ALL, "WRITE")), "ann", "ann"));
    assertEquals(
        CannedAcl.AUTHENTICATED_READ,
        RequestedAcl.fromGrants(List.of(Grant.toGroup(SIGNED, "READ")), "ann", "ann"));
    assertEquals(
        CannedAcl.BUCKET_OWNER_FULL_CONTROL,
        RequestedAcl.fromGrants(List.of(Grant.toUser("bo", "FULL_CONTROL")), "ann", "bo"));
  }

  @Test
  void aGrantNoCannedAclMakesIsRefusedByName() {
    S3Exception e =
        assertThrows(
            S3Exception.class,
            () -> RequestedAcl.fromGrants(List.of(Grant.toUser("cy", "READ")), "ann", "bo"));
    assertEquals(S3ErrorCode.NOT_IMPLEMENTED, e.code());
    assertTrue(e.getMessage().contains("id=\"cy\""), e.getMessage());
    assertThrows(
        S3Exception.class,
        () -> RequestedAcl.fromGrants(List.of(Grant.toGroup(SIGNED, "WRITE")), "ann", "bo"));
  }

  @Test
  void grantHeadersListGranteesByIdOrUri() {
    List<Grant> grants =
        RequestedAcl.parseGrantHeader("x-amz-grant-read", "uri=\"" + ALL + "\", id=\"ann\"");
    assertEquals(List.of(Grant.toGroup(ALL, "READ"), Grant.toUser("ann", "READ")), grants);
    assertEquals(
        "FULL_CONTROL",
        RequestedAcl.parseGrantHeader("x-amz-grant-full-control", "id=ann").get(0).permission());
    assertThrows(S3Exception.class, () -> RequestedAcl.parseGrantHeader("x-amz-grant-read", "ann"));
  }

  @Test
  void describedAclsNameTheGrantsTheModeAndAttributeHold() {
    FileInfo open =
        FileInfo.newBuilder()
            .setOwner("ann")
            .setMode(0644)
            .putXattrs(CannedAcl.XATTR, CannedAcl.PUBLIC_READ.xattrValue("ann"))
            .build();
    assertEquals(
        List.of(Grant.toUser("ann", "FULL_CONTROL"), Grant.toGroup(ALL, "READ")),
        RequestedAcl.describe(open).grants());
    // A chmod that took others' read away took the public grant with it.
    FileInfo closed = open.toBuilder().setMode(0600).build();
    assertEquals(
        List.of(Grant.toUser("ann", "FULL_CONTROL")), RequestedAcl.describe(closed).grants());
    FileInfo bucket =
        FileInfo.newBuilder().setOwner("ann").setDirectory(true).setMode(0777).build();
    assertEquals(
        List.of(
            Grant.toUser("ann", "FULL_CONTROL"),
            Grant.toGroup(SIGNED, "READ"),
            Grant.toGroup(SIGNED, "WRITE")),
        RequestedAcl.describe(bucket).grants());
  }
}
