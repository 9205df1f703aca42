package io.strata.client.data;

import java.io.IOException;

/**
 * A block read that failed because of the worker or the connection to it (refused, reset, timed
 * out, or a reply that breaks the data protocol), as opposed to a reply that reports a problem with
 * the data itself. The reader tries another worker. {@link #bytesReceived()} bytes of the range
 * were already copied into the caller's buffer and are final, so a retry asks only for the rest.
 */
public final class DataTransferException extends IOException {
  private final long bytesReceived;

  public DataTransferException(String message, Throwable cause, long bytesReceived) {
    super(message, cause);
    this.bytesReceived = bytesReceived;
  }

  /** Bytes of the requested range already delivered into the caller's buffer. */
  public long bytesReceived() {
    return bytesReceived;
  }
}
