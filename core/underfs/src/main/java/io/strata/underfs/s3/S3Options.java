package io.strata.underfs.s3;

import io.strata.common.conf.ConfigType;
import java.net.URI;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The mount options of an S3 under store, each with its default and one sentence of docs, and their
 * parsed values. Parsing is strict: an unknown option or a value that does not parse fails with an
 * {@link IllegalArgumentException} that names it and lists every valid option, so a typo in {@code
 * strata fs mount --option} is caught at mount time, not at first read.
 */
public final class S3Options {
  /** One mount option: its name, its default ("" when unset) and what it does. */
  public record Option(String name, String defaultValue, String description) {}

  public static final String ENDPOINT = "s3.endpoint";
  public static final String REGION = "s3.region";
  public static final String PATH_STYLE = "s3.path.style";
  public static final String ACCESS_KEY = "s3.access.key";
  public static final String SECRET_KEY = "s3.secret.key";
  public static final String SESSION_TOKEN = "s3.session.token";
  public static final String INSTANCE_CREDENTIALS = "s3.instance.credentials";
  public static final String PART_SIZE = "s3.multipart.part.size";
  public static final String MULTIPART_THRESHOLD = "s3.multipart.threshold";
  public static final String CLEANUP_AGE = "s3.multipart.cleanup.age";
  public static final String MAX_CONNECTIONS = "s3.max.connections";
  public static final String RETRY_MAX_ATTEMPTS = "s3.retry.max.attempts";

  /** S3's smallest part, except the last one of an upload. */
  static final long MIN_PART_SIZE = 5L << 20;

  /** A part or a single PUT is buffered in one byte array, so it must fit in one. */
  static final long MAX_BUFFER_SIZE = 1L << 30;

  /** The region used when an endpoint is given without one; most S3-compatible servers take it. */
  static final String ENDPOINT_DEFAULT_REGION = "us-east-1";

  private static final Map<String, Option> ALL = new LinkedHashMap<>();

  static {
    add(ENDPOINT, "", "URL of an S3-compatible server (MinIO, Ceph, S3Proxy); empty means AWS S3.");
    add(
        REGION,
        "",
        "Signing region; empty means us-east-1 with an endpoint, else the AWS SDK's "
            + "region chain (AWS_REGION, profile, instance metadata).");
    add(
        PATH_STYLE,
        "false",
        "Address buckets as http://host/bucket instead of "
            + "http://bucket.host, as most self-hosted servers need.");
    add(
        ACCESS_KEY,
        "",
        "Access key id; empty means AWS_ACCESS_KEY_ID, then the AWS SDK's "
            + "credential sources (profile files, web identity, container).");
    add(SECRET_KEY, "", "Secret access key that goes with s3.access.key.");
    add(SESSION_TOKEN, "", "Session token of temporary credentials given with s3.access.key.");
    add(
        INSTANCE_CREDENTIALS,
        "auto",
        "Also ask the EC2 instance metadata service for "
            + "credentials (an instance role), after every other source: true, false, or auto "
            + "(only for AWS itself, that is when s3.endpoint is not set).");
    add(
        PART_SIZE,
        "64MB",
        "Size of each part of a multipart upload (at least 5MB, at most 1GB); "
            + "one part per writing stream is held in memory.");
    add(
        MULTIPART_THRESHOLD,
        "64MB",
        "Files of at most this size are written with one "
            + "PutObject; larger ones with a multipart upload (at most 1GB).");
    add(
        CLEANUP_AGE,
        "24h",
        "Multipart uploads under the mount older than this are aborted "
            + "once when the store is first opened; 0 turns the cleanup off.");
    add(MAX_CONNECTIONS, "64", "Largest number of HTTP connections the store keeps open.");
    add(
        RETRY_MAX_ATTEMPTS,
        "5",
        "Attempts per request, the first included, with the SDK's "
            + "standard back-off for throttling and transient failures.");
  }

  private static void add(String name, String defaultValue, String description) {
    ALL.put(name, new Option(name, defaultValue, description));
  }

  private final URI endpoint;
  private final String region;
  private final boolean pathStyle;
  private final String accessKey;
  private final String secretKey;
  private final String sessionToken;
  private final boolean instanceCredentials;
  private final long partSize;
  private final long multipartThreshold;
  private final Duration cleanupAge;
  private final int maxConnections;
  private final int retryMaxAttempts;

  private S3Options(Map<String, String> given) {
    String endpointText = value(given, ENDPOINT).trim();
    endpoint = endpointText.isEmpty() ? null : parseEndpoint(endpointText);
    region = value(given, REGION).trim();
    pathStyle = parseBoolean(given, PATH_STYLE);
    accessKey = value(given, ACCESS_KEY);
    secretKey = value(given, SECRET_KEY);
    sessionToken = value(given, SESSION_TOKEN);
    // An instance role exists only on AWS: a store at an endpoint of its own (MinIO, Ceph, a
    // proxy) would only wait for the metadata service's timeouts.
    String instance = value(given, INSTANCE_CREDENTIALS).trim();
    instanceCredentials =
        instance.equalsIgnoreCase("auto")
            ? endpoint == null
            : parseBoolean(given, INSTANCE_CREDENTIALS);
    if (accessKey.isEmpty() != secretKey.isEmpty()) {
      throw bad(
          accessKey.isEmpty() ? ACCESS_KEY : SECRET_KEY,
          "",
          "s3.access.key and s3.secret.key are given together or not at all");
    }
    if (!sessionToken.isEmpty() && accessKey.isEmpty()) {
      throw bad(SESSION_TOKEN, "<hidden>", "a session token needs s3.access.key and s3.secret.key");
    }
    partSize = parseSize(given, PART_SIZE, MIN_PART_SIZE);
    multipartThreshold = parseSize(given, MULTIPART_THRESHOLD, 0);
    cleanupAge = parseDuration(given, CLEANUP_AGE);
    maxConnections = parsePositiveInt(given, MAX_CONNECTIONS);
    retryMaxAttempts = parsePositiveInt(given, RETRY_MAX_ATTEMPTS);
  }

  /**
   * Parses mount options; absent ones take their defaults.
   *
   * @throws IllegalArgumentException naming an unknown option or a bad value, and listing the valid
   *     options
   */
  public static S3Options parse(Map<String, String> options) {
    for (String name : options.keySet()) {
      if (!ALL.containsKey(name)) {
        throw new IllegalArgumentException(
            "Unknown S3 mount option '"
                + name
                + "'; valid options: "
                + String.join(", ", ALL.keySet()));
      }
    }
    return new S3Options(options);
  }

  /** Every option in documentation order. */
  public static Collection<Option> all() {
    return ALL.values();
  }

  private static String value(Map<String, String> given, String name) {
    String v = given.get(name);
    return v == null ? ALL.get(name).defaultValue() : v;
  }

  private static IllegalArgumentException bad(String name, String text, String expected) {
    return new IllegalArgumentException(
        "Bad value '"
            + text
            + "' for S3 mount option "
            + name
            + ": "
            + expected
            + "; valid options: "
            + String.join(", ", ALL.keySet()));
  }

  private static URI parseEndpoint(String text) {
    try {
      URI uri = new URI(text);
      String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
      if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
        return uri;
      }
    } catch (java.net.URISyntaxException e) {
      // Reported below with the expected form.
    }
    throw bad(ENDPOINT, text, "expected an http:// or https:// URL such as http://127.0.0.1:9000");
  }

  private static boolean parseBoolean(Map<String, String> given, String name) {
    String text = value(given, name).trim();
    if (text.equalsIgnoreCase("true")) {
      return true;
    }
    if (text.equalsIgnoreCase("false")) {
      return false;
    }
    throw bad(
        name,
        text,
        name.equals(INSTANCE_CREDENTIALS)
            ? "expected true, false or auto"
            : "expected true or false");
  }

  private static long parseSize(Map<String, String> given, String name, long min) {
    String text = value(given, name);
    long bytes;
    try {
      bytes = ConfigType.parseBytes(text);
    } catch (IllegalArgumentException e) {
      throw bad(name, text, "expected a size such as 64MB (" + e.getMessage() + ")");
    }
    if (bytes < min || bytes > MAX_BUFFER_SIZE) {
      throw bad(
          name, text, "expected a size from " + (min == 0 ? "0" : (min >> 20) + "MB") + " to 1GB");
    }
    return bytes;
  }

  private static Duration parseDuration(Map<String, String> given, String name) {
    String text = value(given, name);
    try {
      return ConfigType.parseDuration(text);
    } catch (IllegalArgumentException e) {
      throw bad(name, text, "expected a duration such as 24h, 30min or 0 (" + e.getMessage() + ")");
    }
  }

  private static int parsePositiveInt(Map<String, String> given, String name) {
    String text = value(given, name).trim();
    try {
      int n = Integer.parseInt(text);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Reported below with the expected form.
    }
    throw bad(name, text, "expected a whole number of at least 1");
  }

  /** The endpoint override, or null for AWS S3. */
  public URI endpoint() {
    return endpoint;
  }

  /** The configured region, or "" to use the default for the endpoint. */
  public String region() {
    return region;
  }

  public boolean pathStyle() {
    return pathStyle;
  }

  /** The access key id, or "" to use the environment and the SDK's chain. */
  public String accessKey() {
    return accessKey;
  }

  public String secretKey() {
    return secretKey;
  }

  /** The session token, or "" when the credentials are not temporary. */
  public String sessionToken() {
    return sessionToken;
  }

  /** Whether the instance metadata service is asked for credentials when nothing else has them. */
  public boolean instanceCredentials() {
    return instanceCredentials;
  }

  public long partSize() {
    return partSize;
  }

  public long multipartThreshold() {
    return multipartThreshold;
  }

  /** Age past which in-progress uploads are aborted; zero when cleanup is off. */
  public Duration cleanupAge() {
    return cleanupAge;
  }

  public int maxConnections() {
    return maxConnections;
  }

  public int retryMaxAttempts() {
    return retryMaxAttempts;
  }

  @Override
  public String toString() {
    // Never prints the secret key or the session token.
    return "S3Options{endpoint="
        + (endpoint == null ? "AWS" : endpoint)
        + ", region="
        + region
        + ", pathStyle="
        + pathStyle
        + ", accessKey="
        + accessKey
        + ", instanceCredentials="
        + instanceCredentials
        + ", partSize="
        + partSize
        + ", threshold="
        + multipartThreshold
        + ", cleanupAge="
        + cleanupAge
        + ", maxConnections="
        + maxConnections
        + ", retryMaxAttempts="
        + retryMaxAttempts
        + "}";
  }
}
