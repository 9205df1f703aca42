package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.client.SetAttributeOptions;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.IOException;
import java.util.function.Supplier;

/**
 * A document a bucket keeps (its tags, CORS rules, lifecycle rules, policy) as one extended
 * attribute of its folder, so that it is journaled with the namespace and read through the status
 * cache. The operations that own a document check the requester's permission, or have {@link
 * #answer} and {@link #delete} check the usual one.
 */
final class BucketDocument {
  private final ProxyContext ctx;
  private final String xattr;

  BucketDocument(ProxyContext ctx, String xattr) {
    this.ctx = ctx;
    this.xattr = xattr;
  }

  /** The document the bucket folder {@code dir} holds, or {@code missing} thrown. */
  byte[] stored(FileInfo dir, Supplier<S3Exception> missing) {
    ByteString document = dir.getXattrsMap().get(xattr);
    if (document == null) {
      throw missing.get();
    }
    return document.toByteArray();
  }

  /**
   * Answers the request's bucket's document to a requester who may read the bucket folder, or
   * {@code missing} when it has none.
   */
  void answer(S3Request r, Supplier<S3Exception> missing) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkRead(r.principal(), dir);
    r.xml(stored(dir, missing));
  }

  /**
   * Removes the request's bucket's document for a requester who may write the bucket folder, and
   * answers 204.
   *
   * @return whether the bucket's status showed one
   */
  boolean delete(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    boolean had = dir.getXattrsMap().containsKey(xattr);
    remove(dir);
    r.empty(HttpResponseStatus.NO_CONTENT, null);
    return had;
  }

  /** Replaces the document of the bucket folder {@code dir}. */
  void store(FileInfo dir, byte[] document) throws StrataException {
    ctx.fs()
        .setAttribute(
            dir.getPath(),
            SetAttributeOptions.defaults().xattr(xattr, ByteString.copyFrom(document)));
  }

  /** Removes the document of the bucket folder {@code dir}, if it has one. */
  void remove(FileInfo dir) throws StrataException {
    ctx.fs().setAttribute(dir.getPath(), SetAttributeOptions.defaults().removeXattr(xattr));
  }
}
