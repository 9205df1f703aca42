package io.strata.common.error;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/** The one place where exceptions become gRPC statuses and statuses become exceptions. */
public final class GrpcErrors {
  private GrpcErrors() {}

  /** Server side: the status to return for a failure. */
  public static StatusRuntimeException toStatus(Throwable t) {
    if (t instanceof StatusRuntimeException) {
      return (StatusRuntimeException) t;
    }
    ErrorCode code;
    String message = t.getMessage();
    if (t instanceof StrataException) {
      code = ((StrataException) t).code();
    } else if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
      code = ErrorCode.NOT_FOUND;
      message = "Path does not exist in the under store: " + t.getMessage();
    } else if (t instanceof FileAlreadyExistsException) {
      code = ErrorCode.ALREADY_EXISTS;
      message = "Path already exists in the under store: " + t.getMessage();
    } else if (t instanceof DirectoryNotEmptyException) {
      code = ErrorCode.FAILED_PRECONDITION;
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
    return Status.fromCode(code.grpcCode()).withDescription(message).withCause(t)
        .asRuntimeException();
  }

  /** Client side: the exception a failed call becomes. */
  public static StrataException fromStatus(StatusRuntimeException e) {
    Status status = e.getStatus();
    ErrorCode code = ErrorCode.fromGrpc(status.getCode());
    String message = status.getDescription() != null ? status.getDescription()
        : status.getCode().toString();
    return new StrataException(code, message, e);
  }
}
