package io.strata.proxy.s3;

import io.strata.common.PathNames;
import io.strata.common.error.StrataException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Where buckets and keys live in the namespace. A bucket is the top-level folder of its name unless
 * {@code strata.proxy.bucket.map} maps the name to a fixed folder; a key is a path below its
 * bucket's folder, '/' separating folders, and a key ending in '/' names the folder itself (an S3
 * folder marker). Keys that cannot be a path below the bucket -- an empty, "." or ".." segment, a
 * NUL, a segment over 255 bytes, the hidden uploads folder -- are refused with an S3 error, so no
 * key ever reaches a path outside its bucket. Immutable.
 */
public final class Buckets {
  /** S3's longest key, in UTF-8 bytes. */
  public static final int MAX_KEY_BYTES = 1024;

  /** The longest file name the namespace's under stores take. */
  public static final int MAX_SEGMENT_BYTES = 255;

  private static final Pattern NEW_BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
  private static final Pattern IP_ADDRESS = Pattern.compile("\\d+\\.\\d+\\.\\d+\\.\\d+");

  /** Names clients accept for existing buckets (botocore's own check is as loose). */
  private static final Pattern EXISTING_BUCKET = Pattern.compile("[A-Za-z0-9._-]{1,255}");

  private final Map<String, String> mapped;

  private Buckets(Map<String, String> mapped) {
    this.mapped = mapped;
  }

  /**
   * Parses {@code strata.proxy.bucket.map}: {@code name=/path,name=/path}.
   *
   * @throws IllegalArgumentException naming the bad entry and the expected form
   */
  public static Buckets parse(String map) {
    Map<String, String> mapped = new LinkedHashMap<>();
    if (map != null && !map.isBlank()) {
      for (String entry : map.split(",")) {
        String e = entry.trim();
        if (e.isEmpty()) {
          continue;
        }
        int eq = e.indexOf('=');
        if (eq <= 0 || eq == e.length() - 1) {
          throw new IllegalArgumentException(
              "Bad strata.proxy.bucket.map entry '"
                  + e
                  + "': give name=/namespace/path, entries separated by commas");
        }
        String name = e.substring(0, eq).trim();
        String path;
        try {
          path = PathNames.normalize(e.substring(eq + 1).trim());
        } catch (StrataException ex) {
          throw new IllegalArgumentException(
              "Bad path in strata.proxy.bucket.map entry '" + e + "': " + ex.getMessage());
        }
        if (!EXISTING_BUCKET.matcher(name).matches()) {
          throw new IllegalArgumentException(
              "Bad bucket name '"
                  + name
                  + "' in strata.proxy.bucket.map: use letters, digits, '.', '-' and '_'");
        }
        if (path.equals(PathNames.ROOT)) {
          throw new IllegalArgumentException(
              "strata.proxy.bucket.map entry '"
                  + e
                  + "' maps a bucket to /: give a folder below the root");
        }
        mapped.put(name, path);
      }
    }
    return new Buckets(Map.copyOf(mapped));
  }

  /** The buckets mapped to fixed paths, by name. */
  public Map<String, String> mapped() {
    return mapped;
  }

  public boolean isMapped(String bucket) {
    return mapped.containsKey(bucket);
  }

  /** The folder of a bucket; refuses names that cannot be a folder name. */
  public String path(String bucket) {
    String p = mapped.get(bucket);
    if (p != null) {
      return p;
    }
    if (!EXISTING_BUCKET.matcher(bucket).matches()
        || bucket.equals(".")
        || bucket.equals("..")
        || PathNames.isHidden(bucket)) {
      throw new S3Exception(
          S3ErrorCode.INVALID_BUCKET_NAME, "The specified bucket is not valid: " + bucket);
    }
    return "/" + bucket;
  }

  /** Whether a top-level folder can be listed as a bucket. */
  public boolean listable(String folderName) {
    return EXISTING_BUCKET.matcher(folderName).matches() && !PathNames.isHidden(folderName);
  }

  /** Checks S3's naming rules for a bucket being created. */
  public static void checkNewName(String bucket) {
    if (!NEW_BUCKET.matcher(bucket).matches()
        || bucket.contains("..")
        || IP_ADDRESS.matcher(bucket).matches()
        || bucket.startsWith("xn--")
        || bucket.endsWith("-s3alias")
        || bucket.contains(".-")
        || bucket.contains("-.")) {
      throw new S3Exception(
          S3ErrorCode.INVALID_BUCKET_NAME,
          "The specified bucket is not"
              + " valid: "
              + bucket
              + " (use 3 to 63 lower-case letters, digits, '.' and '-',"
              + " starting and ending with a letter or digit)");
    }
  }

  /** The namespace path of an object key in a bucket, checked as the class says. */
  public String objectPath(String bucket, String key) {
    checkKey(key);
    String base = path(bucket);
    String k = key.endsWith("/") ? key.substring(0, key.length() - 1) : key;
    return base + "/" + k;
  }

  /** Refuses a key that is not a path below its bucket, with the reason. */
  public static void checkKey(String key) {
    if (key.isEmpty()) {
      throw new S3Exception(S3ErrorCode.INVALID_ARGUMENT, "The object key is empty");
    }
    if (key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
      throw new S3Exception(
          S3ErrorCode.KEY_TOO_LONG,
          "Your key is too long: keys are at most " + MAX_KEY_BYTES + " bytes");
    }
    if (key.indexOf('\0') >= 0) {
      throw new S3Exception(S3ErrorCode.INVALID_ARGUMENT, "The object key contains a NUL");
    }
    String k = key.endsWith("/") ? key.substring(0, key.length() - 1) : key;
    if (k.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "The key '/' names no object: keys are paths below the bucket");
    }
    for (String segment : k.split("/", -1)) {
      if (segment.isEmpty()) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "The key '"
                + key
                + "' has an"
                + " empty segment ('//' or a leading '/'): Strata keys are paths, without empty"
                + " folder names");
      }
      if (segment.equals(".") || segment.equals("..")) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "The key '"
                + key
                + "' has a '"
                + segment
                + "' segment: Strata keys are paths and cannot name '.' or '..'");
      }
      if (PathNames.isHidden(segment)) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "The key '" + key + "' uses the" + " reserved name " + segment);
      }
      if (segment.getBytes(StandardCharsets.UTF_8).length > MAX_SEGMENT_BYTES) {
        throw new S3Exception(
            S3ErrorCode.KEY_TOO_LONG,
            "The key '"
                + key
                + "' has a segment"
                + " over "
                + MAX_SEGMENT_BYTES
                + " bytes, longer than a file name may be");
      }
    }
  }
}
