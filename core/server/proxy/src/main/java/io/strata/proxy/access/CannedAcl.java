package io.strata.proxy.access;

import com.google.protobuf.ByteString;
import io.strata.proto.FileInfo;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;

/**
 * S3's canned ACLs and what each means in the namespace. An ACL has two halves:
 *
 * <ul>
 *   <li>the mode the file or folder gets, which is what Strata users (through S3, the mount or the
 *       shell) are checked against: the owner alone for {@code private}, every user for the read
 *       (and, on a bucket, write) that the ACL grants to all or to authenticated users;
 *   <li>grants the modes cannot express, kept in the {@link #XATTR} attribute: reads by every
 *       signed request whatever the folders above allow, by requests that carry no signature
 *       ({@code public-read}, {@code public-read-write}) and by the owner of the bucket ({@code
 *       bucket-owner-read}, {@code bucket-owner-full-control}). Only the S3 proxy honours them,
 *       since nothing else serves unsigned requests or knows buckets.
 * </ul>
 *
 * <p>{@code aws-exec-read} and {@code log-delivery-write} grant AWS services that Strata has not;
 * they are refused by name.
 */
public enum CannedAcl {
  PRIVATE("private", 0600, 0700),
  PUBLIC_READ("public-read", 0644, 0755),
  // WRITE means nothing on an object: others may read it, as with public-read.
  PUBLIC_READ_WRITE("public-read-write", 0644, 0777),
  AUTHENTICATED_READ("authenticated-read", 0644, 0755),
  BUCKET_OWNER_READ("bucket-owner-read", 0600, 0700),
  BUCKET_OWNER_FULL_CONTROL("bucket-owner-full-control", 0600, 0700);

  /**
   * The attribute that keeps an ACL's grants beyond the mode: the ACL's name, followed for the
   * bucket-owner ACLs by a space and the bucket's owner when the object was written.
   */
  public static final String XATTR = "strata.s3.acl";

  private final String s3Name;
  private final int fileMode;
  private final int folderMode;

  CannedAcl(String s3Name, int fileMode, int folderMode) {
    this.s3Name = s3Name;
    this.fileMode = fileMode;
    this.folderMode = folderMode;
  }

  /** The name in {@code x-amz-acl}. */
  public String s3Name() {
    return s3Name;
  }

  /** The mode of an object written with this ACL. */
  public int fileMode() {
    return fileMode;
  }

  /** The mode of a bucket created with this ACL. */
  public int folderMode() {
    return folderMode;
  }

  /** Whether requests without a signature may read (objects) or list (buckets). */
  public boolean readableByAnyone() {
    return this == PUBLIC_READ || this == PUBLIC_READ_WRITE;
  }

  /** Whether every signed request may read (objects) or list (buckets). */
  public boolean readableBySigned() {
    return readableByAnyone() || this == AUTHENTICATED_READ;
  }

  /** Whether requests without a signature may write in a bucket of this ACL. */
  public boolean writableByAnyone() {
    return this == PUBLIC_READ_WRITE;
  }

  /** Whether the bucket's owner may read an object of this ACL, whoever owns the object. */
  public boolean readableByBucketOwner() {
    return this == BUCKET_OWNER_READ || this == BUCKET_OWNER_FULL_CONTROL;
  }

  /**
   * The ACL an {@code x-amz-acl} header names.
   *
   * @throws S3Exception InvalidArgument for a name S3 does not have, NotImplemented for the ACLs
   *     that grant AWS services
   */
  public static CannedAcl parse(String header) {
    String name = header.trim();
    for (CannedAcl acl : values()) {
      if (acl.s3Name.equals(name)) {
        return acl;
      }
    }
    if (name.equals("aws-exec-read") || name.equals("log-delivery-write")) {
      throw new S3Exception(
          S3ErrorCode.NOT_IMPLEMENTED,
          "The canned ACL '"
              + name
              + "' grants an AWS service, which Strata has not: use private, public-read,"
              + " public-read-write, authenticated-read, bucket-owner-read or"
              + " bucket-owner-full-control");
    }
    throw new S3Exception(
        S3ErrorCode.INVALID_ARGUMENT,
        "x-amz-acl '"
            + name
            + "' is not a canned ACL: use private, public-read, public-read-write,"
            + " authenticated-read, bucket-owner-read or bucket-owner-full-control");
  }

  /**
   * The attribute value that keeps this ACL's grants beyond the mode, or null when the mode says
   * everything ({@code private}). Authenticated-read is kept too: its grant stands without the
   * folders above letting the reader in, as S3's does.
   *
   * @param bucketOwner the owner of the object's bucket, for the bucket-owner ACLs
   */
  public ByteString xattrValue(String bucketOwner) {
    switch (this) {
      case PUBLIC_READ, PUBLIC_READ_WRITE, AUTHENTICATED_READ:
        return ByteString.copyFromUtf8(s3Name);
      case BUCKET_OWNER_READ, BUCKET_OWNER_FULL_CONTROL:
        return ByteString.copyFromUtf8(s3Name + " " + bucketOwner);
      default:
        return null;
    }
  }

  /**
   * The grants beyond the mode that a file or folder carries: none when it has no attribute, and
   * none to others when its mode no longer lets others read.
   */
  public static StoredAcl stored(FileInfo f) {
    ByteString v = f.getXattrsMap().get(XATTR);
    if (v == null) {
      return StoredAcl.NONE;
    }
    String s = v.toStringUtf8();
    int space = s.indexOf(' ');
    String name = space < 0 ? s : s.substring(0, space);
    for (CannedAcl acl : values()) {
      if (acl.s3Name.equals(name)) {
        // A mode changed since (chmod in the mount) takes back what it no longer gives others.
        if (acl.readableBySigned() && (f.getMode() & 04) == 0) {
          return StoredAcl.NONE;
        }
        if (acl == PUBLIC_READ_WRITE && (f.getMode() & 02) == 0) {
          acl = PUBLIC_READ;
        }
        return new StoredAcl(acl, space < 0 ? "" : s.substring(space + 1));
      }
    }
    return StoredAcl.NONE;
  }

  /**
   * The grants beyond the mode of one file or folder.
   *
   * @param acl the ACL it was given, or null when none beyond the mode
   * @param bucketOwner for the bucket-owner ACLs, the bucket's owner when the ACL was given
   */
  public record StoredAcl(CannedAcl acl, String bucketOwner) {
    static final StoredAcl NONE = new StoredAcl(null, "");

    public boolean readableByAnyone() {
      return acl != null && acl.readableByAnyone();
    }

    public boolean readableBySigned() {
      return acl != null && acl.readableBySigned();
    }

    public boolean writableByAnyone() {
      return acl != null && acl.writableByAnyone();
    }

    /** Whether {@code user} may read as the owner of the bucket. */
    public boolean readableByBucketOwner(String user) {
      return acl != null && acl.readableByBucketOwner() && bucketOwner.equals(user);
    }
  }
}
