package io.strata.proxy.s3;

import io.micrometer.core.instrument.MeterRegistry;
import io.strata.client.FileSystem;
import io.strata.proxy.access.AccessControl;
import io.strata.proxy.access.UserGroups;
import io.strata.proxy.auth.SignatureVerifier;
import java.time.Duration;

/** Builds the S3 operations over one cluster client, sharing their context. */
public final class S3Services implements AutoCloseable {
  private final ProxyContext ctx;
  private final MultipartUploads multipart;
  private final LifecycleSweep sweep;

  private S3Services(ProxyContext ctx) {
    this.ctx = ctx;
    this.multipart = new MultipartUploads(ctx);
    this.sweep = new LifecycleSweep(ctx);
  }

  /**
   * @param chunkSize bytes read from the cluster and sent to a client at a time
   * @param region the region the proxy reports
   * @param bucketMode the mode of a bucket created without an ACL
   * @param lifecycleDay how long a day of a lifecycle rule is
   */
  public static S3Services create(
      FileSystem fs,
      Buckets buckets,
      AccessControl access,
      UserGroups groups,
      int chunkSize,
      String region,
      int bucketMode,
      long statusCacheSize,
      Duration statusCacheTtl,
      Duration lifecycleDay) {
    return new S3Services(
        new ProxyContext(
            fs,
            new StatusCache(fs, statusCacheSize, statusCacheTtl, true),
            buckets,
            access,
            groups,
            new KeyLocks(4096),
            Math.max(4096, chunkSize),
            region,
            bucketMode,
            lifecycleDay));
  }

  /** Stops watching the namespace's changes and sweeping buckets. */
  @Override
  public void close() {
    sweep.close();
    ctx.statuses().close();
  }

  /** The lifecycle sweep, for the server to start. */
  public LifecycleSweep lifecycleSweep() {
    return sweep;
  }

  public MultipartUploads multipart() {
    return multipart;
  }

  /** The request handler of the S3 endpoint. */
  public S3Service service(SignatureVerifier verifier, String domain, MeterRegistry registry) {
    return new S3Service(ctx, verifier, domain, multipart, sweep, registry);
  }
}
