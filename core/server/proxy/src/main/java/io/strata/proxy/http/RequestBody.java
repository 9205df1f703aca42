package io.strata.proxy.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The body of one request as a blocking stream for the thread that serves it, fed by the
 * connection's event loop. The connection reads from its socket only when this stream is empty and
 * its reader wants more ({@link Feed#requestMore}), so a request never holds more than one socket
 * read of body in memory however fast the client sends: a slow consumer (an under store, a worker)
 * slows the client down through TCP, never fills the heap.
 */
final class RequestBody extends InputStream {
  /** What the stream needs from its connection; called from the reading thread. */
  interface Feed {
    /** Reads more from the socket (the event loop then calls {@link #offer} or ends). */
    void requestMore();

    /** Sends "100 Continue" when the client waits for it before sending the body. */
    void continueIfExpected();
  }

  private final Feed feed;
  private final long readTimeoutNanos;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition arrived = lock.newCondition();
  // Guarded by lock.
  private final ArrayDeque<ByteBuf> chunks = new ArrayDeque<>();
  private boolean ended;
  private IOException failure;
  private boolean requested;
  private boolean closed;
  private long received;

  RequestBody(Feed feed, long readTimeoutNanos) {
    this.feed = feed;
    this.readTimeoutNanos = readTimeoutNanos;
  }

  /** Event loop: a piece of the body arrived. Takes ownership of {@code content}. */
  void offer(HttpContent content) {
    ByteBuf data = content.content();
    boolean last = content instanceof LastHttpContent;
    lock.lock();
    try {
      requested = false;
      if (closed || failure != null) {
        data.release();
      } else if (data.isReadable()) {
        chunks.add(data);
        received += data.readableBytes();
      } else {
        data.release();
      }
      if (last) {
        ended = true;
      }
      arrived.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Event loop: the connection failed or closed before the body ended. */
  void fail(IOException cause) {
    lock.lock();
    try {
      if (!ended && failure == null) {
        failure = cause;
      }
      releaseAll();
      arrived.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Whether the body's end has arrived from the connection. */
  boolean ended() {
    lock.lock();
    try {
      return ended;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    lock.lock();
    try {
      ByteBuf head = awaitData();
      if (head == null) {
        return -1;
      }
      int n = Math.min(len, head.readableBytes());
      head.readBytes(b, off, n);
      if (!head.isReadable()) {
        chunks.poll().release();
      }
      return n;
    } finally {
      lock.unlock();
    }
  }

  /** The next readable chunk, or null at the end; asks the connection for more when empty. */
  private ByteBuf awaitData() throws IOException {
    long deadline = System.nanoTime() + readTimeoutNanos;
    boolean continued = false;
    while (true) {
      if (closed) {
        throw new IOException("request body closed");
      }
      if (!chunks.isEmpty()) {
        return chunks.peek();
      }
      if (failure != null) {
        throw failure;
      }
      if (ended) {
        return null;
      }
      if (!continued) {
        continued = true;
        lock.unlock();
        try {
          feed.continueIfExpected();
        } finally {
          lock.lock();
        }
        continue;
      }
      if (!requested) {
        requested = true;
        feed.requestMore();
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new IOException(
            "the client sent no body bytes for "
                + TimeUnit.NANOSECONDS.toSeconds(readTimeoutNanos)
                + " s");
      }
      try {
        arrived.awaitNanos(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while waiting for the request body");
      }
    }
  }

  /** Bytes of body received from the client so far. */
  long received() {
    lock.lock();
    try {
      return received;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      releaseAll();
    } finally {
      lock.unlock();
    }
  }

  private void releaseAll() {
    ByteBuf b;
    while ((b = chunks.poll()) != null) {
      b.release();
    }
  }
}
