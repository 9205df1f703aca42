package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.strata.client.SetAttributeOptions;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.util.function.Supplier;

/**
 * A document a bucket keeps (its tags, CORS rules, policy) as one extended attribute of its folder,
 * so that it is journaled with the namespace and read through the status cache. The operations that
 * own a document check the requester's permission; this class only reads and writes it.
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
