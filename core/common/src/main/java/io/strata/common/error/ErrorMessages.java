package io.strata.common.error;

import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The one line a command line prints for a failure ({@code strata: ...}, {@code strata journal:
 * ...}). A {@link StrataException}'s message is written for the user already (it names the path and
 * the fix); a failure of this machine's files, of a connection, or a gRPC failure that reached the
 * command line raw is described by its kind, never by a Java class name or a gRPC status dump. Only
 * a failure of no known kind (a bug) names its class, with the way to get the stack trace.
 */
public final class ErrorMessages {
  private ErrorMessages() {}

  /** The failure that says what happened, without the wrappers around it. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof UncheckedIOException
            || t instanceof ExecutionException
            || t instanceof CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** The message of {@code t}, unwrapped, for the user. */
  public static String describe(Throwable failure) {
    Throwable t = unwrap(failure);
    if (t instanceof StrataException) {
      return t.getMessage();
    }
    if (t instanceof StatusRuntimeException grpc) {
      return GrpcErrors.fromStatus(grpc).getMessage();
    }
    if (t instanceof FileSystemException fs) {
      return localFile(fs);
    }
    if (t instanceof FileNotFoundException) {
      return "cannot open " + t.getMessage();
    }
    if (t instanceof ConnectException
        || t instanceof NoRouteToHostException
        || t instanceof UnknownHostException
        || t instanceof SocketTimeoutException) {
      return "cannot connect"
          + (t.getMessage() == null ? "" : " (" + t.getMessage() + ")")
          + ": is the server running, and is its address right?";
    }
    if (t instanceof IOException && t.getMessage() != null) {
      return t.getMessage();
    }
    return "internal error: "
        + t.getClass().getSimpleName()
        + (t.getMessage() == null ? "" : ": " + t.getMessage())
        + " (STRATA_DEBUG=1 prints where)";
  }

  private static String localFile(FileSystemException e) {
    String what;
    if (e instanceof NoSuchFileException) {
      what = "no such file or directory";
    } else if (e instanceof AccessDeniedException) {
      what = "permission denied";
    } else if (e instanceof FileAlreadyExistsException) {
      what = "already exists";
    } else if (e instanceof DirectoryNotEmptyException) {
      what = "directory not empty";
    } else if (e instanceof NotDirectoryException) {
      what = "not a directory";
    } else {
      what = e.getReason() == null ? "cannot be used" : e.getReason();
    }
    String file = e.getFile() == null ? "local file" : e.getFile();
    return file + (e.getOtherFile() == null ? "" : " -> " + e.getOtherFile()) + ": " + what;
  }
}
