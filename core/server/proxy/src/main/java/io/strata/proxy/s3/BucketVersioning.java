package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.SetAttributeOptions;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.VersioningConfiguration;
import java.io.IOException;

/**
 * A bucket's versioning state, kept as the extended attribute {@code strata.s3.versioning} of the
 * bucket's folder ({@code Enabled} or {@code Suspended}; absent while versioning was never
 * enabled), and the PutBucketVersioning and GetBucketVersioning calls that set and report it. As in
 * S3, a bucket whose versioning was enabled once never goes back to unversioned: it can only be
 * suspended. The state is read through the status cache, so a write pays no master call for it.
 */
final class BucketVersioning {
  /** The extended attribute of a bucket's folder that holds its versioning state. */
  static final String STATE = "strata.s3.versioning";

  /** What a bucket does with the object a write or delete replaces. */
  enum State {
    /** Versioning never enabled: the replaced object is gone, as before versioning existed. */
    UNVERSIONED,
    /** Every write makes a new version; the replaced one is kept as noncurrent. */
    ENABLED,
    /** Writes make the version {@code null}, replacing an earlier {@code null} version. */
    SUSPENDED
  }

  private final ProxyContext ctx;

  BucketVersioning(ProxyContext ctx) {
    this.ctx = ctx;
  }

  /** The versioning state of a bucket, from the status of its folder. */
  static State of(FileInfo bucketFolder) {
    ByteString v = bucketFolder.getXattrsMap().get(STATE);
    if (v == null) {
      return State.UNVERSIONED;
    }
    return v.toStringUtf8().equals("Enabled") ? State.ENABLED : State.SUSPENDED;
  }

  /** The versioning state of the bucket named {@code bucket}; NoSuchBucket when it is missing. */
  State of(String bucket) throws StrataException {
    return of(BucketOperations.bucketFolder(ctx, bucket));
  }

  void get(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkList(r.principal(), dir);
    State s = of(dir);
    r.xml(
        s == State.UNVERSIONED
            ? S3XmlWriter.versioningNeverEnabled()
            : S3XmlWriter.versioning(s == State.ENABLED ? "Enabled" : "Suspended"));
  }

  void put(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    byte[] document = UploadBody.document(r, S3XmlParser.MAX_VERSIONING_CONFIGURATION_BYTES, true);
    VersioningConfiguration c = S3XmlParser.versioningConfiguration(document);
    if (c.mfaDelete().equals("Enabled") || r.header("x-amz-mfa") != null) {
      throw new S3Exception(
          S3ErrorCode.NOT_IMPLEMENTED,
          "MFA delete is not implemented by Strata's S3 proxy: leave MfaDelete out (or set it to"
              + " Disabled) and send no x-amz-mfa header");
    }
    ctx.fs()
        .setAttribute(
            dir.getPath(),
            SetAttributeOptions.defaults().xattr(STATE, ByteString.copyFromUtf8(c.status())));
    r.empty(HttpResponseStatus.OK, null);
  }
}
