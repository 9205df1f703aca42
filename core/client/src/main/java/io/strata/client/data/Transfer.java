package io.strata.client.data;

import io.netty.buffer.ByteBuf;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One request/response exchange on a data channel: the event loop delivers the reply's header and
 * raw bytes into the caller's array while the caller waits. Once the caller gives up ({@link
 * #cancel()}), no further byte is written into its array, so the count of delivered bytes it reads
 * afterwards is final.
 */
final class Transfer {
  private final byte[] dst;
  private final int dstOffset;
  private final long expected;
  private final boolean shortCircuit;
  private final CompletableFuture<ReadBlockResponse> done = new CompletableFuture<>();
  private volatile long lastProgressNanos = System.nanoTime();
  // Written by the event loop, read by the waiting caller after a failure.
  private volatile ReadBlockResponse header;
  private long remaining;
  // Guarded by this: delivery into dst and cancellation exclude each other.
  private long received;
  private boolean cancelled;

  Transfer(byte[] dst, int dstOffset, long expected, boolean shortCircuit) {
    this.dst = dst;
    this.dstOffset = dstOffset;
    this.expected = expected;
    this.shortCircuit = shortCircuit;
  }

  boolean hasHeader() {
    return header != null;
  }

  long remaining() {
    return remaining;
  }

  /**
   * Takes the reply header; returns false when it breaks the protocol (a length other than the one
   * asked for would overrun or underfill the caller's buffer).
   */
  boolean onHeader(ReadBlockResponse response) {
    lastProgressNanos = System.nanoTime();
    header = response;
    boolean bytesFollow = response.getStatus() == ReadStatus.READ_OK && !shortCircuit;
    if (bytesFollow && response.getLength() != expected) {
      return false;
    }
    remaining = bytesFollow ? response.getLength() : 0;
    return true;
  }

  /** Copies {@code n} bytes of reply data from the channel into the caller's array. */
  void deliver(ByteBuf in, int n) {
    synchronized (this) {
      if (cancelled) {
        in.skipBytes(n);
      } else {
        in.readBytes(dst, dstOffset + (int) received, n);
      }
      received += n;
    }
    remaining -= n;
    lastProgressNanos = System.nanoTime();
  }

  void complete() {
    done.complete(header);
  }

  void fail(Throwable cause) {
    done.completeExceptionally(cause);
  }

  /** Stops delivery into the caller's array; returns the bytes delivered before. */
  synchronized long cancel() {
    cancelled = true;
    return received;
  }

  /** Whether the worker answered at all before the exchange failed. */
  boolean headerReceived() {
    return header != null;
  }

  /**
   * Waits for the whole reply. Fails when the worker sends nothing for {@code idleNanos}; a slow
   * but moving transfer is never cut off.
   */
  ReadBlockResponse await(long idleNanos, String worker) throws IOException {
    while (true) {
      long idle = System.nanoTime() - lastProgressNanos;
      long wait = Math.max(1_000_000L, idleNanos - idle);
      try {
        return done.get(wait, TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        if (System.nanoTime() - lastProgressNanos >= idleNanos) {
          long got = cancel();
          throw new DataTransferException(
              "Worker "
                  + worker
                  + " sent nothing for "
                  + TimeUnit.NANOSECONDS.toMillis(idleNanos)
                  + " ms (strata.client.data.read.timeout)"
                  + " after "
                  + got
                  + " of "
                  + expected
                  + " bytes",
              null,
              got);
        }
      } catch (ExecutionException e) {
        long got = cancel();
        Throwable cause = e.getCause();
        throw new DataTransferException(
            "Read from worker "
                + worker
                + " failed after "
                + got
                + " of "
                + expected
                + " bytes: "
                + cause.getMessage(),
            cause,
            got);
      } catch (InterruptedException e) {
        cancel();
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("Interrupted while reading from worker " + worker);
      }
    }
  }
}
