package io.strata.proxy.s3;

import io.netty.handler.codec.http.HttpResponseStatus;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.LifecycleConfiguration;
import io.strata.proxy.xml.S3XmlParser;
import io.strata.proxy.xml.S3XmlWriter;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * PutBucketLifecycleConfiguration (and the older PutBucketLifecycle, the same call with rules that
 * name a bare prefix), GetBucketLifecycleConfiguration and DeleteBucketLifecycle. The configuration
 * is an extended attribute of the bucket's folder, {@code strata.s3.lifecycle}, holding the
 * document GetBucketLifecycleConfiguration answers; a rule put without an ID gets one, as in S3.
 * Putting or removing it has the bucket swept at once ({@link LifecycleSweep}), so that what is
 * already there gets its times to live; afterwards every write applies the rules itself ({@link
 * LifecycleExpiry}).
 */
final class BucketLifecycle {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ProxyContext ctx;
  private final BucketDocument document;
  private final LifecycleSweep sweep;

  BucketLifecycle(ProxyContext ctx, LifecycleSweep sweep) {
    this.ctx = ctx;
    this.document = new BucketDocument(ctx, LifecycleExpiry.CONFIGURATION);
    this.sweep = sweep;
  }

  void get(S3Request r) throws IOException {
    document.answer(
        r,
        () ->
            new S3Exception(
                S3ErrorCode.NO_SUCH_LIFECYCLE_CONFIGURATION,
                "The lifecycle configuration does not exist: the bucket "
                    + r.bucket()
                    + " has none (PutBucketLifecycleConfiguration sets one)"));
  }

  void put(S3Request r) throws IOException {
    FileInfo dir = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkWriteOf(r.principal(), dir);
    byte[] body = UploadBody.document(r, S3XmlParser.MAX_LIFECYCLE_BYTES, true);
    LifecycleConfiguration c = withIds(S3XmlParser.lifecycleConfiguration(body));
    document.store(dir, S3XmlWriter.lifecycleConfiguration(c));
    sweep.sweepSoon(r.bucket());
    r.empty(HttpResponseStatus.OK, null);
  }

  void delete(S3Request r) throws IOException {
    if (document.delete(r)) {
      // The times to live the rules set go with them.
      sweep.sweepSoon(r.bucket());
    }
  }

  /** The configuration with an ID given to each rule that has none. */
  private static LifecycleConfiguration withIds(LifecycleConfiguration c) {
    List<LifecycleConfiguration.Rule> rules = new ArrayList<>();
    for (LifecycleConfiguration.Rule r : c.rules()) {
      rules.add(
          r.id() != null && !r.id().isEmpty()
              ? r
              : new LifecycleConfiguration.Rule(
                  newId(),
                  r.enabled(),
                  r.filter(),
                  r.expirationDays(),
                  r.expirationDate(),
                  r.expiredObjectDeleteMarker(),
                  r.noncurrentDays(),
                  r.newerNoncurrentVersions(),
                  r.abortDays()));
    }
    return new LifecycleConfiguration(rules);
  }

  private static String newId() {
    byte[] id = new byte[24];
    RANDOM.nextBytes(id);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(id);
  }
}
