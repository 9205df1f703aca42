package io.strata.proxy.s3;

import io.netty.handler.codec.http.HttpResponseStatus;
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
  private final BucketDocument document;

  BucketTagging(ProxyContext ctx) {
    this.ctx = ctx;
    this.document = new BucketDocument(ctx, XATTR);
  }

  void get(S3Request r) throws IOException {
    document.answer(
        r,
        () ->
            new S3Exception(
                S3ErrorCode.NO_SUCH_TAG_SET,
                "The TagSet does not exist: the bucket "
                    + r.bucket()
                    + " has no tags (PutBucketTagging sets them)"));
  }

  /** Replaces the bucket's tags; an empty TagSet removes them. */
  void put(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_TAGGING_BYTES, true);
    BucketTags tags = S3XmlParser.bucketTagging(body);
    if (tags.isEmpty()) {
      document.remove(dir);
    } else {
      document.store(dir, S3XmlWriter.bucketTagging(tags));
    }
    r.empty(HttpResponseStatus.NO_CONTENT, null);
  }

  void delete(S3Request r) throws IOException {
    document.delete(r);
  }
}
