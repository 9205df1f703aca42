package io.strata.proxy.xml;

import io.strata.proxy.s3.S3Exception;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The content of an S3 {@code <Error>} document: code and message always, the resource, request id
 * and host id when known, and the extra fields some errors carry, in order ({@code Key}, {@code
 * BucketName}, {@code UploadId}, {@code StringToSign}, {@code CanonicalRequest}, {@code
 * ArgumentName}, {@code ArgumentValue}, ...). Extra field names are plain XML names that do not
 * repeat the fixed ones.
 */
public record ErrorResponse(
    String code,
    String message,
    String resource,
    String requestId,
    String hostId,
    Map<String, String> details) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9]*");
  private static final Set<String> FIXED =
      Set.of("Code", "Message", "Resource", "RequestId", "HostId");

  public ErrorResponse {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(message, "message");
    var copy = new LinkedHashMap<String, String>();
    if (details != null) {
      details.forEach(
          (name, value) -> {
            if (!NAME.matcher(name).matches() || FIXED.contains(name)) {
              throw new IllegalArgumentException("Not an extra error field name: " + name);
            }
            copy.put(name, Objects.requireNonNull(value, name));
          });
    }
    details = Collections.unmodifiableMap(copy);
  }

  /** The error of an exception, with the extra fields it carries ({@link S3Exception#details}). */
  public static ErrorResponse of(S3Exception e, String resource, String requestId) {
    return new ErrorResponse(
        e.code().code(), e.getMessage(), resource, requestId, null, e.details());
  }

  /** The same error with one more extra field after the others. */
  public ErrorResponse with(String name, String value) {
    var more = new LinkedHashMap<>(details);
    more.put(name, value);
    return new ErrorResponse(code, message, resource, requestId, hostId, more);
  }
}
