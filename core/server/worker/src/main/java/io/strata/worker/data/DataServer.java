package io.strata.worker.data;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.protobuf.ProtobufDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.strata.proto.ReadBlockRequest;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's data channel: a Netty server that answers {@code ReadBlockRequest}s with block bytes
 * (see data.proto for the wire contract). Uses epoll when the native transport loads and NIO
 * otherwise. Disk and under-store reads of misses run on the given executor, never on the event
 * loops; cached ranges go out with zero-copy file transfer.
 */
public final class DataServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DataServer.class);

  /**
   * How the data server runs.
   *
   * @param bindHost address to listen on
   * @param port port to listen on; 0 picks a free one
   * @param threads event-loop threads; 0 means twice the cores
   * @param chunkSize bytes read from an under store at a time for a miss
   * @param cacheOnMiss whether a miss caches the whole block
   * @param wholeBlockSize a miss of a block at most this long is served by copying the whole block,
   *     wherever the read starts (a longer one only when the read starts at its first byte)
   */
  public record Settings(
      String bindHost,
      int port,
      int threads,
      int chunkSize,
      boolean cacheOnMiss,
      long wholeBlockSize) {}

  private final Settings settings;
  private final TieredBlockStore store;
  private final MountedStores mountedStores;
  private final ExecutorService ufsExecutor;
  private final BlockCacher cacher;
  private final ReadMetrics metrics;
  private EventLoopGroup group;
  private Channel serverChannel;

  /** Channels with a request being answered; see {@link #awaitIdle}. */
  private final java.util.concurrent.atomic.AtomicInteger busyChannels =
      new java.util.concurrent.atomic.AtomicInteger();

  private volatile long lastRequestNanos = System.nanoTime();

  /**
   * @param ufsExecutor bounded executor for under-store reads of misses; owned by the caller
   */
  public DataServer(
      Settings settings,
      TieredBlockStore store,
      MountedStores mountedStores,
      ExecutorService ufsExecutor,
      BlockCacher cacher,
      ReadMetrics metrics) {
    this.settings = settings;
    this.store = store;
    this.mountedStores = mountedStores;
    this.ufsExecutor = ufsExecutor;
    this.cacher = cacher;
    this.metrics = metrics;
    cacher.countReadsIn(metrics);
  }

  /** Binds the port and starts serving. */
  public void start() throws InterruptedException {
    int threads =
        settings.threads() > 0
            ? settings.threads()
            : 2 * Runtime.getRuntime().availableProcessors();
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass =
        epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    group =
        new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory("data-server", true), io);
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(channelClass)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            // Room for two chunks of a miss, so reading one overlaps sending the other.
            .childOption(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(
                    settings.chunkSize(), 2 * settings.chunkSize() + 64 * 1024))
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    // Inbound only: responses are framed by hand because raw block bytes follow
                    // them.
                    ch.pipeline()
                        .addLast("frame", new RequestFrameDecoder())
                        .addLast(
                            "decode", new ProtobufDecoder(ReadBlockRequest.getDefaultInstance()))
                        .addLast("read", new ReadRequestHandler(DataServer.this));
                  }
                });
    serverChannel =
        bootstrap
            .bind(new InetSocketAddress(settings.bindHost(), settings.port()))
            .sync()
            .channel();
    LOG.info(
        "Data server listening on {} ({} transport, {} threads)",
        serverChannel.localAddress(),
        epoll ? "epoll" : "nio",
        threads);
  }

  /** The port bound, which differs from the configured one when that was 0. */
  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  TieredBlockStore store() {
    return store;
  }

  MountedStores mountedStores() {
    return mountedStores;
  }

  ExecutorService ufsExecutor() {
    return ufsExecutor;
  }

  BlockCacher cacher() {
    return cacher;
  }

  ReadMetrics metrics() {
    return metrics;
  }

  int chunkSize() {
    return settings.chunkSize();
  }

  boolean cacheOnMiss() {
    return settings.cacheOnMiss();
  }

  long wholeBlockSize() {
    return settings.wholeBlockSize();
  }

  /** A channel started answering a request (it was idle). */
  void requestStarted() {
    lastRequestNanos = System.nanoTime();
    busyChannels.incrementAndGet();
  }

  /** A channel answered every request it had. */
  void requestsDone() {
    busyChannels.decrementAndGet();
  }

  /**
   * Waits, while the worker drains before it stops, until no read is being answered and none has
   * come for {@code quiet}, and at least {@code atLeast} has passed (the time clients take to learn
   * the worker is draining); at most {@code timeout}. Returns whether it went idle.
   */
  public boolean awaitIdle(Duration atLeast, Duration quiet, Duration timeout)
      throws InterruptedException {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      long now = System.nanoTime();
      if (now - start >= atLeast.toNanos()
          && busyChannels.get() == 0
          && now - lastRequestNanos >= quiet.toNanos()) {
        return true;
      }
      Thread.sleep(50);
    }
    return busyChannels.get() == 0;
  }

  @Override
  public void close() {
    if (serverChannel != null) {
      serverChannel.close().syncUninterruptibly();
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }
}
