package io.strata.proxy.xml;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.util.List;

/**
 * A bucket's tags, in the order given. They follow the rules of object tags ({@link TagSet}) but a
 * bucket may have up to 50 of them, as in S3; breaking a rule is an {@code InvalidTag} error.
 */
public record BucketTags(List<TagSet.Tag> tags) {
  public static final int MAX_TAGS = 50;

  /**
   * @throws S3Exception InvalidTag (code {@link S3ErrorCode#INVALID_TAG}) when a rule is broken
   */
  public BucketTags {
    tags = List.copyOf(tags);
    TagSet.check(tags, MAX_TAGS, "Bucket");
  }

  public boolean isEmpty() {
    return tags.isEmpty();
  }
}
