package io.strata.common.error;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;

/** The one place where exceptions become gRPC statuses and statuses become exceptions. */
public final class GrpcErrors {
  /** The trailer that carries a failure's {@link PosixError} by name. */
  static final Metadata.Key<String> POSIX_ERROR =
      Metadata.Key.of("strata-posix-error", Metadata.ASCII_STRING_MARSHALLER);

  /**
   * The trailer by which a failure says a Strata server answered it, as opposed to gRPC failing to
   * reach one: an UNAVAILABLE that a master sends about an under store must be reported as the
   * master's own words, not as the master being down.
   */
  static final Metadata.Key<String> SERVED =
      Metadata.Key.of("strata-served", Metadata.ASCII_STRING_MARSHALLER);

  private GrpcErrors() {}

  /** Whether a failed call was answered by a Strata server (see {@link #SERVED}). */
  public static boolean served(StatusRuntimeException e) {
    Metadata trailers = e.getTrailers();
    return trailers != null && trailers.containsKey(SERVED);
  }

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
      // An under store's own I/O failure says what failed; its class name would say nothing
      // more to a user who reads it at the command line. Anything else is named by its class.
      if (!(t instanceof IOException && message != null)) {
        message = t.getClass().getSimpleName() + ": " + t.getMessage();
      }
    }
    Metadata trailers = new Metadata();
    trailers.put(SERVED, "1");
    if (posix != null) {
      trailers.put(POSIX_ERROR, posix.name());
    }
    return Status.fromCode(code.grpcCode())
        .withDescription(message)
        .withCause(t)
        .asRuntimeException(trailers);
  }

  /**
   * What went wrong, in words: a server's own description, or for a failure of the connection
   * (which gRPC describes as "io exception" and the like) what the connection's failure was, such
   * as "connection refused".
   */
  public static String reason(Status status) {
    Throwable cause = status.getCause();
    if (cause instanceof ConnectException) {
      // Netty's text here is the native call's ("finishConnect(..) failed with error(-111)"),
      // except for its connect timeout, a ConnectException too, which says it timed out.
      String text = cause.getMessage();
      return text != null && text.contains("timed out")
          ? "connection timed out"
          : "connection refused";
    }
    if (cause instanceof UnknownHostException) {
      return "unknown host " + cause.getMessage();
    }
    if (cause != null && cause.getMessage() != null) {
      return "connection failed (" + cause.getMessage() + ")";
    }
    return status.getDescription() != null ? status.getDescription() : status.getCode().toString();
  }

  /** Client side: the exception a failed call becomes. */
  public static StrataException fromStatus(StatusRuntimeException e) {
    Status status = e.getStatus();
    ErrorCode code = ErrorCode.fromGrpc(status.getCode());
    String message =
        served(e)
            ? (status.getDescription() != null
                ? status.getDescription()
                : status.getCode().toString())
            : reason(status);
    Metadata trailers = e.getTrailers();
    PosixError posix = trailers == null ? null : PosixError.fromName(trailers.get(POSIX_ERROR));
    return new StrataException(code, posix, message, e);
  }
}
