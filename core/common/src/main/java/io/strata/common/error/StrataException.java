package io.strata.common.error;

import java.io.IOException;

/**
 * The one exception type of Strata's APIs. Its message names the path or id involved and,
 * where there is one, what the user can do. It crosses gRPC through {@link GrpcErrors}.
 */
public class StrataException extends IOException {
  private final ErrorCode code;

  public StrataException(ErrorCode code, String message) {
    super(message);
    this.code = code;
  }

  public StrataException(ErrorCode code, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
  }

  public ErrorCode code() {
    return code;
  }

  public static StrataException notFound(String path) {
    return new StrataException(ErrorCode.NOT_FOUND, "Path does not exist: " + path);
  }

  public static StrataException alreadyExists(String path) {
    return new StrataException(ErrorCode.ALREADY_EXISTS, "Path already exists: " + path);
  }

  public static StrataException invalidArgument(String message) {
    return new StrataException(ErrorCode.INVALID_ARGUMENT, message);
  }

  public static StrataException failedPrecondition(String message) {
    return new StrataException(ErrorCode.FAILED_PRECONDITION, message);
  }

  public static StrataException unavailable(String message, Throwable cause) {
    return new StrataException(ErrorCode.UNAVAILABLE, message, cause);
  }

  public static StrataException internal(String message, Throwable cause) {
    return new StrataException(ErrorCode.INTERNAL, message, cause);
  }
}
