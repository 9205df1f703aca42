package io.strata.proxy.http;

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
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy's HTTP/1.1 server: Netty's HTTP codec on event-loop threads, and a bounded pool of
 * handler threads that serve one request each at a time with blocking calls to the cluster.
 * Requests beyond the pool wait in a bounded queue; past it they are refused at once ({@link
 * ExchangeHandler.Overload}), never queued without bound.
 */
public final class S3HttpServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(S3HttpServer.class);

  /**
   * What the server is given; sizes in bytes. A {@code tls} context makes the port serve HTTPS
   * only; null serves plain HTTP.
   */
  public record Settings(
      String bindHost,
      int port,
      int ioThreads,
      int handlerThreads,
      int handlerQueue,
      int maxHeaderSize,
      int writeBufferSize,
      Duration idleTimeout,
      SslContext tls) {}

  private final Settings settings;
  private final ExchangeHandler handler;
  private final ExchangeHandler.Overload overload;
  private EventLoopGroup group;
  private ThreadPoolExecutor handlers;
  private Channel serverChannel;

  public S3HttpServer(
      Settings settings, ExchangeHandler handler, ExchangeHandler.Overload overload) {
    this.settings = settings;
    this.handler = handler;
    this.overload = overload;
  }

  /** Binds the port and starts serving. */
  public void start() throws InterruptedException {
    int ioThreads =
        settings.ioThreads() > 0
            ? settings.ioThreads()
            : 2 * Runtime.getRuntime().availableProcessors();
    boolean epoll = Epoll.isAvailable();
    IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    Class<? extends ServerChannel> channelClass =
        epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    group = new MultiThreadIoEventLoopGroup(ioThreads, new DefaultThreadFactory("s3-io", true), io);
    handlers =
        new ThreadPoolExecutor(
            settings.handlerThreads(),
            settings.handlerThreads(),
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(Math.max(1, settings.handlerQueue())),
            new DefaultThreadFactory("s3-handler", true));
    handlers.allowCoreThreadTimeOut(true);
    long idleSeconds = Math.max(1, settings.idleTimeout().toSeconds());
    long bodyTimeoutNanos = settings.idleTimeout().toNanos();
    int writeBuffer = Math.max(64 << 10, settings.writeBufferSize());
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(group)
            .channel(channelClass)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(
                ChannelOption.WRITE_BUFFER_WATER_MARK,
                new WriteBufferWaterMark(writeBuffer / 2, writeBuffer))
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel ch) {
                    if (settings.tls() != null) {
                      ch.pipeline().addLast("tls", settings.tls().newHandler(ch.alloc()));
                    }
                    ch.pipeline()
                        .addLast("idle", new IdleStateHandler(0, 0, idleSeconds, TimeUnit.SECONDS))
                        .addLast(
                            "http",
                            new HttpServerCodec(
                                new HttpDecoderConfig()
                                    .setMaxInitialLineLength(
                                        Math.max(16 << 10, settings.maxHeaderSize()))
                                    .setMaxHeaderSize(settings.maxHeaderSize())
                                    .setMaxChunkSize(64 << 10)))
                        .addLast(
                            "s3",
                            new ConnectionHandler(
                                handlers, handler, overload, bodyTimeoutNanos, bodyTimeoutNanos));
                  }
                });
    serverChannel =
        bootstrap
            .bind(new InetSocketAddress(settings.bindHost(), settings.port()))
            .sync()
            .channel();
    LOG.info(
        "S3 endpoint listening on {} for {} ({} transport, {} I/O threads, {} handler threads)",
        serverChannel.localAddress(),
        settings.tls() != null ? "https" : "http",
        epoll ? "epoll" : "nio",
        ioThreads,
        settings.handlerThreads());
  }

  /** The port bound, which differs from the configured one when that was 0. */
  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  /** Requests being served or waiting for a handler thread. */
  public int activeRequests() {
    return handlers == null ? 0 : handlers.getActiveCount() + handlers.getQueue().size();
  }

  @Override
  public void close() {
    if (serverChannel != null) {
      serverChannel.close().syncUninterruptibly();
    }
    if (group != null) {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }
    if (handlers != null) {
      handlers.shutdownNow();
    }
  }

  ExecutorService handlers() {
    return handlers;
  }
}
