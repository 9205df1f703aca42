package io.strata.common.error;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/** The one place where exceptions become gRPC statuses and statuses become exceptions. */
public final class GrpcErrors {
  /** The trailer that carries a failure's {@link PosixError} by name. */
  static final Metadata.Key<String> POSIX_ERROR =
      Metadata.Key.of("strata-posix-error", Metadata.ASCII_STRING_MARSHALLER);

  private GrpcErrors() {}

  /** Server side: the status to return for a failure. */
  public static StatusRuntimeException toStatus(Throwable t) {
    if (t instanceof StatusRuntimeException) {
      return (StatusRuntimeException) t;
    }
    ErrorCode code;
    String message = t.getMessage();
    PosixError posix = null;
    if (t instanceof StrataException) {
      code = ((StrataException) t).code();
      posix = ((StrataException) t).posix();
    } else if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
      code = ErrorCode.NOT_FOUND;
      message = "Path does not exist in the under store: " + t.getMessage();
    } else if (t instanceof FileAlreadyExistsException) {
      code = ErrorCode.ALREADY_EXISTS;
      message = "Path already exists in the under store: " + t.getMessage();
    } else if (t instanceof DirectoryNotEmptyException) {
      code = ErrorCode.FAILED_PRECONDITION;
      posix = PosixError.ENOTEMPTY;
      message = "Directory is not empty in the under store: " + t.getMessage();
    } else if (t instanceof AccessDeniedException) {
      code = ErrorCode.PERMISSION_DENIED;
      message = "Permission denied by the under store: " + t.getMessage();
    } else if (t instanceof IllegalArgumentException) {
      code = ErrorCode.INVALID_ARGUMENT;
    } else {
      code = ErrorCode.INTERNAL;
      message = t.getClass().getSimpleName() + ": " + t.getMessage();
    }
    Metadata trailers = new Metadata();
    if (posix != null) {
      trailers.put(POSIX_ERROR, posix.name());
    }
    return Status.fromCode(code.grpcCode()).withDescription(message).withCause(t)
        .asRuntimeException(trailers);
  }

  /** Client side: the exception a failed call becomes. */
  public static StrataException fromStatus(StatusRuntimeException e) {
    Status status = e.getStatus();
    ErrorCode code = ErrorCode.fromGrpc(status.getCode());
    String message = status.getDescription() != null ? status.getDescription()
        : status.getCode().toString();
    Metadata trailers = e.getTrailers();
    PosixError posix = trailers == null ? null : PosixError.fromName(trailers.get(POSIX_ERROR));
    return new StrataException(code, posix, message, e);
  }
}
