package io.strata.underfs.s3;

import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystemProvider;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.regions.providers.DefaultAwsRegionProviderChain;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/**
 * Provides {@link S3UnderFileSystem} for {@code s3://bucket/prefix} URIs. Options are validated
 * before anything else happens; a store is one SDK client (Apache HTTP, a bounded connection pool,
 * the standard retry strategy) for one bucket, and {@link io.strata.underfs.UnderStores} shares it
 * per bucket and options. Opening contacts no server: a wrong endpoint, bucket or key surfaces on
 * the first call, with a message that says which.
 */
public final class S3UnderFileSystemProvider implements UnderFileSystemProvider {
  private static final Logger LOG = LoggerFactory.getLogger(S3UnderFileSystemProvider.class);

  @Override
  public String scheme() {
    return "s3";
  }

  @Override
  public UnderFileSystem open(String uri, Map<String, String> options) {
    S3Location root = S3Location.parse(uri);
    S3Options parsed = S3Options.parse(options);
    S3UnderFileSystem store = openStore(root, parsed, S3UnderFileSystem.MAX_SINGLE_COPY);
    store.startStaleUploadCleanup();
    return store;
  }

  /** Opens a store without starting its cleanup; the copy limit is lowered by tests. */
  // The SDK deprecates its Apache 4 client in favour of an Apache 5 one; the 4 client is the
  // one this module compiles against, and it is still maintained and supported by the SDK.
  @SuppressWarnings("deprecation")
  static S3UnderFileSystem openStore(S3Location root, S3Options options, long maxSingleCopy) {
    S3ClientBuilder builder =
        S3Client.builder()
            .httpClientBuilder(ApacheHttpClient.builder().maxConnections(options.maxConnections()))
            .credentialsProvider(S3Credentials.of(options))
            .forcePathStyle(options.pathStyle())
            .overrideConfiguration(
                o ->
                    o.retryStrategy(
                        AwsRetryStrategy.standardRetryStrategy().toBuilder()
                            .maxAttempts(options.retryMaxAttempts())
                            .build()));
    String endpoint;
    if (options.endpoint() != null) {
      endpoint = options.endpoint().toString();
      builder
          .endpointOverride(options.endpoint())
          .region(
              Region.of(
                  options.region().isEmpty()
                      ? S3Options.ENDPOINT_DEFAULT_REGION
                      : options.region()))
          // S3-compatible servers differ in which of the newer flexible checksums they accept;
          // Content-MD5 where S3 requires a checksum is what they all take.
          .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
          .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
          .addPlugin(LegacyMd5Plugin.create());
    } else {
      Region region = awsRegion(options);
      endpoint = "https://s3." + region.id() + ".amazonaws.com";
      // Without a configured region, follow a bucket to whichever region holds it.
      builder.region(region).crossRegionAccessEnabled(options.region().isEmpty());
    }
    LOG.info("Opening S3 store for bucket '{}' at {} ({})", root.bucket(), endpoint, options);
    return new S3UnderFileSystem(
        builder.build(), options, new S3Errors(endpoint), root, maxSingleCopy);
  }

  private static Region awsRegion(S3Options options) {
    if (!options.region().isEmpty()) {
      return Region.of(options.region());
    }
    try {
      return new DefaultAwsRegionProviderChain().getRegion();
    } catch (SdkClientException e) {
      return Region.US_EAST_1;
    }
  }
}
