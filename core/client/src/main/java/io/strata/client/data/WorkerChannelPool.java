package io.strata.client.data;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The open data channels to one worker. A channel carries one exchange at a time, so a caller takes
 * a channel for the length of a read and gives it back; a channel that failed or timed out is
 * closed, never pooled again. At most {@code maxIdle} channels are kept between reads; more are
 * opened when that many reads run at once and closed after use. Thread-safe.
 */
final class WorkerChannelPool {
  private final Bootstrap bootstrap;
  private final String host;
  private final int port;
  private final int maxIdle;
  private final long connectTimeoutMs;
  private final ConcurrentLinkedDeque<Channel> idle = new ConcurrentLinkedDeque<>();
  private final AtomicInteger idleCount = new AtomicInteger();
  private volatile boolean closed;

  WorkerChannelPool(
      Bootstrap bootstrap, String host, int port, int maxIdle, long connectTimeoutMs) {
    this.bootstrap = bootstrap;
    this.host = host;
    this.port = port;
    this.maxIdle = maxIdle;
    this.connectTimeoutMs = connectTimeoutMs;
  }

  String address() {
    return host + ":" + port;
  }

  /** A pooled channel that is still open, or null when there is none. */
  Channel pooled() {
    Channel ch;
    while ((ch = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      if (ch.isActive()) {
        return ch;
      }
      closeChannel(ch);
    }
    return null;
  }

  /** Opens a new channel to the worker. */
  Channel connect() throws DataTransferException {
    if (closed) {
      throw new DataTransferException("The client is closed", null, 0);
    }
    ChannelFuture f = bootstrap.connect(host, port);
    // The bootstrap's own connect timeout fires first; the extra second only guards against
    // a future that is never completed.
    if (!f.awaitUninterruptibly(connectTimeoutMs + 1000)) {
      closeChannel(f.channel());
      throw new DataTransferException(
          "Timed out connecting to the data port of worker "
              + address()
              + " (strata.client.data.connect.timeout)",
          null,
          0);
    }
    if (!f.isSuccess()) {
      throw new DataTransferException(
          "Cannot connect to the data port of worker " + address() + ": " + f.cause().getMessage(),
          f.cause(),
          0);
    }
    return f.channel();
  }

  /** Returns a channel after an exchange; unhealthy or surplus channels are closed. */
  void release(Channel ch, boolean healthy) {
    if (healthy && !closed && ch.isActive()) {
      if (idleCount.incrementAndGet() <= maxIdle) {
        idle.offerFirst(ch);
        if (closed && idle.remove(ch)) {
          // Raced with close(): do not leave a channel behind in a closed pool.
          idleCount.decrementAndGet();
          closeChannel(ch);
        }
        return;
      }
      idleCount.decrementAndGet();
    }
    closeChannel(ch);
  }

  void close() {
    closed = true;
    Channel ch;
    while ((ch = idle.pollFirst()) != null) {
      idleCount.decrementAndGet();
      closeChannel(ch);
    }
  }

  private static void closeChannel(Channel ch) {
    // Nothing more is sent on the channel and a failed close leaves nothing to do, so nothing
    // waits for it.
    var unused = ch.close();
  }
}
