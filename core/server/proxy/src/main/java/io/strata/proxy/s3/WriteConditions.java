package io.strata.proxy.s3;

import io.strata.proto.FileInfo;

/**
 * The conditions of a write on what is at its key (If-None-Match, If-Match), checked against the
 * object there when the new object takes the key ({@link PendingObject}), under the key's lock, so
 * that of concurrent writers each sees the outcome of the ones placed before it: of two {@code
 * If-None-Match: *} writes of an empty key, exactly one succeeds.
 *
 * @param createOnly {@code If-None-Match: *}: only when nothing is at the key
 * @param ifMatch an If-Match value (ETags or '*'): only over an object with such an ETag; null for
 *     none
 * @param ifNoneMatch an If-None-Match value other than '*': not over an object with such an ETag;
 *     null for none
 */
record WriteConditions(boolean createOnly, String ifMatch, String ifNoneMatch) {
  /** No condition: the write replaces whatever object is at the key. */
  static final WriteConditions NONE = new WriteConditions(false, null, null);

  /** The conditions a PUT's headers give. */
  static WriteConditions of(S3Request r) {
    String ifNoneMatch = r.header("If-None-Match");
    boolean createOnly = ifNoneMatch != null && ifNoneMatch.trim().equals("*");
    return new WriteConditions(createOnly, r.header("If-Match"), createOnly ? null : ifNoneMatch);
  }

  /** True when the write may go to a key with nothing at it (If-Match needs an object there). */
  boolean allowEmptyKey() {
    return ifMatch == null;
  }

  /**
   * Fails unless the write may replace {@code current} (null when nothing is at the key):
   * PreconditionFailed for an If-None-Match that holds, or an If-Match naming another ETag;
   * NoSuchKey for an If-Match with nothing at the key, as S3 answers.
   */
  void check(FileInfo current, String key) {
    boolean present = current != null && !current.getDirectory() && current.getComplete();
    if (createOnly && current != null) {
      throw preconditionFailed("If-None-Match (the key exists)");
    }
    if (ifMatch != null) {
      if (!present) {
        throw ObjectReads.noSuchKey(key);
      }
      if (!Conditions.matches(ifMatch, ObjectMetadata.etag(current))) {
        throw preconditionFailed("If-Match");
      }
    }
    // An ETag rather than '*': as HTTP defines it for a write, the write fails when the object
    // there now has that ETag, and goes ahead otherwise.
    if (ifNoneMatch != null
        && present
        && Conditions.matches(ifNoneMatch, ObjectMetadata.etag(current))) {
      throw preconditionFailed("If-None-Match");
    }
  }

  static S3Exception preconditionFailed(String which) {
    return new S3Exception(
        S3ErrorCode.PRECONDITION_FAILED,
        "At least one of the pre-conditions you specified did not hold: " + which);
  }
}
