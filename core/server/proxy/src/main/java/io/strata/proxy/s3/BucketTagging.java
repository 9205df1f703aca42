package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.SetAttributeOptions;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.BucketTags;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;

/**
 * PutBucketTagging, GetBucketTagging and DeleteBucketTagging. A bucket's tags are an extended
 * attribute of its folder, {@code strata.s3.bucket-tagging}, holding the Tagging document as
 * GetBucketTagging answers it; so they are journaled with the namespace like an object's tags. Not
 * {@code strata.s3.tagging}: a bucket's folder may also be a folder object of another bucket (a
 * mapped bucket), whose tags are its own.
 */
final class BucketTagging {
  static final String XATTR = "strata.s3.bucket-tagging";

  private final ProxyContext ctx;

  BucketTagging(ProxyContext ctx) {
    this.ctx = ctx;
  }

  void get(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkRead(r.principal(), dir);
    ByteString document = dir.getXattrsMap().get(XATTR);
    if (document == null) {
      throw new S3Exception(
          S3ErrorCode.NO_SUCH_TAG_SET,
          "The TagSet does not exist: the bucket "
              + r.bucket()
              + " has no tags (PutBucketTagging sets them)");
    }
    r.xml(document.toByteArray());
  }

  /** Replaces the bucket's tags; an empty TagSet removes them. */
  void put(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_TAGGING_BYTES, true);
    BucketTags tags = S3XmlParser.bucketTagging(body);
    ctx.fs()
        .setAttribute(
            dir.getPath(),
            tags.isEmpty()
                ? SetAttributeOptions.defaults().removeXattr(XATTR)
                : SetAttributeOptions.defaults()
                    .xattr(XATTR, ByteString.copyFrom(S3XmlWriter.bucketTagging(tags))));
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  void delete(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    ctx.fs().setAttribute(dir.getPath(), SetAttributeOptions.defaults().removeXattr(XATTR));
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }
}
