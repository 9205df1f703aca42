package io.strata.underfs.s3;

/**
 * A parsed {@code s3://bucket/key} URI. The key is kept verbatim (spaces, '#', '%' are legal object
 * names) and never ends with '/': a trailing slash only says "directory", which the store decides
 * on its own.
 *
 * @param bucket the bucket name
 * @param key the object key, "" for the bucket root
 */
record S3Location(String bucket, String key) {
  static final String SCHEME_PREFIX = "s3://";

  /**
   * Parses an S3 URI.
   *
   * @throws IllegalArgumentException when it is not {@code s3://bucket[/key]}
   */
  static S3Location parse(String uri) {
    if (!uri.startsWith(SCHEME_PREFIX)) {
      throw new IllegalArgumentException(
          "Not an S3 URI: " + uri + " (expected s3://bucket/prefix/key)");
    }
    String rest = uri.substring(SCHEME_PREFIX.length());
    int slash = rest.indexOf('/');
    String bucket = slash < 0 ? rest : rest.substring(0, slash);
    if (bucket.isEmpty()) {
      throw new IllegalArgumentException(
          "S3 URI has no bucket: " + uri + " (expected s3://bucket/prefix/key)");
    }
    String key = slash < 0 ? "" : rest.substring(slash + 1);
    int end = key.length();
    while (end > 0 && key.charAt(end - 1) == '/') {
      end--;
    }
    return new S3Location(bucket, key.substring(0, end));
  }

  /** Whether this is the bucket itself. */
  boolean isRoot() {
    return key.isEmpty();
  }

  /** The prefix under which this location's children live: "key/", or "" at the bucket root. */
  String dirPrefix() {
    return key.isEmpty() ? "" : key + "/";
  }

  /** The key of this location's directory marker. */
  String markerKey() {
    return key + "/";
  }

  /** The last name of the key, "" for the bucket root. */
  String name() {
    return key.substring(key.lastIndexOf('/') + 1);
  }

  /** The parent location; the bucket root is its own parent. */
  S3Location parent() {
    int slash = key.lastIndexOf('/');
    return new S3Location(bucket, slash < 0 ? "" : key.substring(0, slash));
  }

  /** The same bucket with another key. */
  S3Location withKey(String otherKey) {
    return new S3Location(bucket, otherKey);
  }

  /** The URI of this location, as users and error messages see it. */
  String uri() {
    return key.isEmpty() ? SCHEME_PREFIX + bucket : SCHEME_PREFIX + bucket + "/" + key;
  }

  @Override
  public String toString() {
    return uri();
  }
}
