package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A parsed {@code <Delete>} document of DeleteObjects: between 1 and 1000 objects, and whether the
 * answer should list only errors. Keys are exactly as sent (not trimmed, possibly empty: S3 answers
 * an empty key with a per-key error, not by refusing the document).
 */
public record DeleteRequest(boolean quiet, List<ObjectId> objects) {
  /** The most objects one request may name, as in S3. */
  public static final int MAX_OBJECTS = 1000;

  public DeleteRequest {
    objects = List.copyOf(objects);
  }

  /**
   * An object to delete, the version when one was named, and the ETag it must still have when one
   * was given (a conditional delete, as {@code If-Match} makes DeleteObject one).
   */
  public record ObjectId(String key, Optional<String> versionId, Optional<String> etag) {
    public ObjectId {
      Objects.requireNonNull(key, "key");
      versionId = versionId == null ? Optional.empty() : versionId;
      etag = etag == null ? Optional.empty() : etag;
    }

    /** An object with no condition on its ETag. */
    public ObjectId(String key, Optional<String> versionId) {
      this(key, versionId, Optional.empty());
    }
  }
}
