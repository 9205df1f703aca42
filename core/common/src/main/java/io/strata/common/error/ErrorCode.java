package io.strata.common.error;

import io.grpc.Status;

/** The kinds of failure a Strata call can report; each maps to exactly one gRPC status code. */
public enum ErrorCode {
  NOT_FOUND(Status.Code.NOT_FOUND),
  ALREADY_EXISTS(Status.Code.ALREADY_EXISTS),
  INVALID_ARGUMENT(Status.Code.INVALID_ARGUMENT),
  FAILED_PRECONDITION(Status.Code.FAILED_PRECONDITION),
  PERMISSION_DENIED(Status.Code.PERMISSION_DENIED),
  UNAVAILABLE(Status.Code.UNAVAILABLE),
  DEADLINE_EXCEEDED(Status.Code.DEADLINE_EXCEEDED),
  UNIMPLEMENTED(Status.Code.UNIMPLEMENTED),
  /** What was opened is no longer current (a file changed in its under store): open it again. */
  STALE(Status.Code.ABORTED),
  /** No room left (a worker's tier full of blocks it must hold): free some, then try again. */
  RESOURCE_EXHAUSTED(Status.Code.RESOURCE_EXHAUSTED),
  INTERNAL(Status.Code.INTERNAL);

  private final Status.Code grpcCode;

  ErrorCode(Status.Code grpcCode) {
    this.grpcCode = grpcCode;
  }

  public Status.Code grpcCode() {
    return grpcCode;
  }

  static ErrorCode fromGrpc(Status.Code code) {
    for (ErrorCode c : values()) {
      if (c.grpcCode == code) {
        return c;
      }
    }
    return INTERNAL;
  }
}
