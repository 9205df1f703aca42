package io.strata.proxy.xml;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/** What ListBuckets answers: the owner and every bucket, in the order given (S3 sorts by name). */
public record BucketListing(Owner owner, List<Bucket> buckets) {
  public BucketListing {
    Objects.requireNonNull(owner, "owner");
    buckets = List.copyOf(buckets);
  }

  /** A bucket; the region is written as {@code <BucketRegion>} only when not null. */
  public record Bucket(String name, Instant creationDate, String region) {
    public Bucket {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(creationDate, "creationDate");
    }
  }
}
