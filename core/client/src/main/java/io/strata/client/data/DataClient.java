package io.strata.client.data;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.WorkerAddress;
import java.io.Closeable;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client side of the data channel (data.proto): sends a ReadBlockRequest to a worker's data
 * port and receives the reply, copying the block bytes straight into the caller's array. Keeps a
 * pool of channels per worker (epoll when available, NIO otherwise) on daemon event-loop threads.
 * Thread-safe; any number of reads may run at once, each on its own channel.
 *
 * <p>The event loops start with the first read: most commands of the command line never read a
 * block, and starting Netty's threads and native transport costs them start-up time.
 */
public final class DataClient implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(DataClient.class);

  private final int threads;
  private EventLoopGroup group;

  /** Set once, by the first read; read without a lock by every read after it. */
  private volatile Bootstrap bootstrap;

  private final int maxIdle;
  private final long connectTimeoutMs;
  private final long readTimeoutNanos;
  private final Map<String, WorkerChannelPool> pools = new ConcurrentHashMap<>();
  private volatile boolean closed;

  public DataClient(StrataConfig conf) {
    int configured = conf.getInt(ClientKeys.DATA_THREADS);
    this.threads = configured > 0 ? configured : Runtime.getRuntime().availableProcessors();
    this.connectTimeoutMs = conf.getDuration(ClientKeys.DATA_CONNECT_TIMEOUT).toMillis();
    this.readTimeoutNanos = conf.getDuration(ClientKeys.DATA_READ_TIMEOUT).toNanos();
    this.maxIdle = conf.getInt(ClientKeys.DATA_POOL_MAX_IDLE);
  }

  /**
   * The bootstrap of new channels. Every read asks for it, so once the event loops run it is a
   * volatile read; only the first reads take the lock that starts them.
   */
  private Bootstrap bootstrap() throws DataTransferException {
    Bootstrap b = bootstrap;
    if (b != null && !closed) {
      return b;
    }
    return startBootstrap();
  }

  private synchronized Bootstrap startBootstrap() throws DataTransferException {
    if (closed) {
      throw new DataTransferException("The Strata client is closed", null, 0);
    }
    if (bootstrap == null) {
      boolean epoll = Epoll.isAvailable();
      IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
      group =
          new MultiThreadIoEventLoopGroup(
              threads, new DefaultThreadFactory("strata-client-data", true), io);
      bootstrap =
          new Bootstrap()
              .group(group)
              .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
              .option(
                  ChannelOption.CONNECT_TIMEOUT_MILLIS,
                  (int) Math.min(Integer.MAX_VALUE, connectTimeoutMs))
              .option(ChannelOption.TCP_NODELAY, true)
              .handler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      ch.pipeline().addLast(new ReadResponseHandler());
                    }
                  });
      LOG.debug("Data client uses {} with {} threads", epoll ? "epoll" : "NIO", threads);
    }
    return bootstrap;
  }

  /**
   * Reads one range of a block from a worker. When the reply is READ_OK and not short-circuit,
   * exactly {@code request.length} bytes have been copied to {@code dst} at {@code dstOffset}.
   * Replies with another status are returned for the caller to interpret.
   *
   * @throws DataTransferException when the worker cannot be reached, closes the connection, stays
   *     silent for strata.client.data.read.timeout, or breaks the protocol
   */
  public ReadBlockResponse read(
      WorkerAddress worker, ReadBlockRequest request, byte[] dst, int dstOffset)
      throws IOException {
    if (!request.getShortCircuit()
        && (dstOffset < 0 || dstOffset + request.getLength() > dst.length)) {
      throw new IndexOutOfBoundsException(
          "buffer too small for " + request.getLength() + " bytes at " + dstOffset);
    }
    WorkerChannelPool pool = pool(worker);
    Channel reused = pool.pooled();
    if (reused != null) {
      try {
        return exchange(pool, reused, request, dst, dstOffset);
      } catch (DataTransferException e) {
        boolean dropped =
            e.bytesReceived() == 0
                && e.getCause() instanceof IOException
                && !(e.getCause() instanceof ProtocolViolation);
        if (!dropped) {
          throw e;
        }
        // A pooled channel may have been closed by a worker that restarted since; that says
        // nothing about the worker now, so try once more on a new connection. (A silent
        // worker is not retried: that would double the wait.)
        LOG.debug("Pooled channel to {} failed ({}); reconnecting", pool.address(), e.getMessage());
      }
    }
    return exchange(pool, pool.connect(), request, dst, dstOffset);
  }

  private ReadBlockResponse exchange(
      WorkerChannelPool pool, Channel ch, ReadBlockRequest request, byte[] dst, int dstOffset)
      throws IOException {
    Transfer t = new Transfer(dst, dstOffset, request.getLength(), request.getShortCircuit());
    ch.pipeline().get(ReadResponseHandler.class).begin(t);
    boolean healthy = false;
    try {
      ch.writeAndFlush(encode(ch, request))
          .addListener(
              (ChannelFutureListener)
                  f -> {
                    if (!f.isSuccess()) {
                      t.fail(f.cause());
                    }
                  });
      ReadBlockResponse response = t.await(readTimeoutNanos, pool.address());
      healthy = true;
      return response;
    } finally {
      pool.release(ch, healthy);
    }
  }

  private static ByteBuf encode(Channel ch, ReadBlockRequest request) {
    byte[] body = request.toByteArray();
    ByteBuf out = ch.alloc().buffer(5 + body.length);
    int v = body.length;
    while ((v & ~0x7f) != 0) {
      out.writeByte((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    out.writeByte(v);
    out.writeBytes(body);
    return out;
  }

  private WorkerChannelPool pool(WorkerAddress worker) throws DataTransferException {
    Bootstrap b = bootstrap();
    String key = worker.getHost() + ":" + worker.getDataPort();
    return pools.computeIfAbsent(
        key,
        k ->
            new WorkerChannelPool(
                b, worker.getHost(), worker.getDataPort(), maxIdle, connectTimeoutMs));
  }

  @Override
  public void close() {
    EventLoopGroup started;
    synchronized (this) {
      closed = true;
      started = group;
    }
    for (WorkerChannelPool p : pools.values()) {
      p.close();
    }
    pools.clear();
    if (started != null) {
      started.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }

  /** Marks a failure caused by bytes that break the protocol (not a dropped connection). */
  static final class ProtocolViolation extends IOException {
    ProtocolViolation(String message) {
      super(message);
    }
  }
}
