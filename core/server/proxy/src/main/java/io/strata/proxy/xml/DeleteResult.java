package io.strata.proxy.xml;

import java.util.List;
import java.util.Objects;

/**
 * What DeleteObjects answers, {@code <DeleteResult>}: a {@code <Deleted>} per key removed and an
 * {@code <Error>} per key that could not be. In quiet mode the deleted keys are left out and only
 * the errors are written, as S3 does.
 */
public record DeleteResult(boolean quiet, List<Deleted> deleted, List<Failure> errors) {
  public DeleteResult {
    deleted = List.copyOf(deleted);
    errors = List.copyOf(errors);
  }

  /**
   * A key deleted; the version id is written when not null. {@code deleteMarker} tells that the
   * deletion made a delete marker (then {@code deleteMarkerVersionId} is its id) or removed one.
   */
  public record Deleted(
      String key, String versionId, boolean deleteMarker, String deleteMarkerVersionId) {
    public Deleted {
      Objects.requireNonNull(key, "key");
    }

    /** A key deleted without a delete marker made or removed. */
    public Deleted(String key, String versionId) {
      this(key, versionId, false, null);
    }
  }

  /** A key not deleted, with the S3 error code and message; version id when not null. */
  public record Failure(String key, String versionId, String code, String message) {
    public Failure {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(code, "code");
      Objects.requireNonNull(message, "message");
    }
  }
}
