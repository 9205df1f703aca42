package io.strata.client.master;

import io.grpc.ManagedChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.IoHandlerFactory;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.Closeable;
import java.util.concurrent.TimeUnit;

/**
 * The event loops of one client's gRPC channels, started with its first channel and stopped when it
 * closes. gRPC's shared loops outlive every channel by a second, and a JVM that exits while a
 * thread waits in native code (as an idle event loop does) waits 300 ms for it: a one-shot command
 * would spend that on every run. Epoll where available, as gRPC chooses. Thread-safe.
 */
public final class ChannelEventLoops implements Closeable {
  private final String name;
  private final int threads;
  private EventLoopGroup group;
  private boolean epoll;

  /**
   * @param name names the loops' threads
   * @param threads how many loops; a channel uses one, so more only serve more channels
   */
  public ChannelEventLoops(String name, int threads) {
    this.name = name;
    this.threads = threads;
  }

  /** A channel builder for {@code host:port} on these loops. */
  public synchronized ManagedChannelBuilder<?> forAddress(String host, int port) {
    if (group == null) {
      epoll = Epoll.isAvailable();
      IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
      group = new MultiThreadIoEventLoopGroup(threads, new DefaultThreadFactory(name, true), io);
    }
    return NettyChannelBuilder.forAddress(host, port)
        .eventLoopGroup(group)
        .channelType(epoll ? EpollSocketChannel.class : NioSocketChannel.class);
  }

  /** Stops the loops; call after the channels on them are shut down. */
  @Override
  public void close() {
    EventLoopGroup started;
    synchronized (this) {
      started = group;
    }
    if (started != null) {
      started.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
  }
}
