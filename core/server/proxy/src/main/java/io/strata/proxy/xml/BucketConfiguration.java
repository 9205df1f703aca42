package io.strata.proxy.xml;

import java.util.Optional;

/**
 * A parsed {@code <CreateBucketConfiguration>}: the location constraint, absent when the body was
 * empty or named none.
 */
public record BucketConfiguration(Optional<String> locationConstraint) {
  public BucketConfiguration {
    locationConstraint = locationConstraint == null ? Optional.empty() : locationConstraint;
  }
}
