package io.strata.common.error;

import java.io.IOException;

/**
 * The one exception type of Strata's APIs. Its message names the path or id involved and, where
 * there is one, what the user can do. It crosses gRPC through {@link GrpcErrors}.
 */
public class StrataException extends IOException {
  private final ErrorCode code;
  private final PosixError posix;

  public StrataException(ErrorCode code, String message) {
    this(code, null, message, null);
  }

  public StrataException(ErrorCode code, String message, Throwable cause) {
    this(code, null, message, cause);
  }

  /**
   * A failure that stands for a precise POSIX error as well as its code (see {@link PosixError}).
   */
  public StrataException(ErrorCode code, PosixError posix, String message) {
    this(code, posix, message, null);
  }

  public StrataException(ErrorCode code, PosixError posix, String message, Throwable cause) {
    super(message, cause);
    this.code = code;
    this.posix = posix;
  }

  public ErrorCode code() {
    return code;
  }

  /** The POSIX error this failure stands for, or null when its code says all. */
  public PosixError posix() {
    return posix;
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
