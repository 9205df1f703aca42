package io.strata.master.load;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.common.rpc.VersionHeaders;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerServiceGrpc;
import java.io.Closeable;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** One gRPC channel per worker address, opened on first use and kept until close. */
public final class WorkerChannels implements Closeable {
  private final Map<String, ManagedChannel> channels = new HashMap<>();

  /** An asynchronous stub of the worker at {@code address}. */
  public WorkerServiceGrpc.WorkerServiceStub stub(WorkerAddress address) {
    return WorkerServiceGrpc.newStub(channel(address));
  }

  /** A blocking stub of the worker at {@code address}, for threads that may wait. */
  public WorkerServiceGrpc.WorkerServiceBlockingStub blockingStub(WorkerAddress address) {
    return WorkerServiceGrpc.newBlockingStub(channel(address));
  }

  private synchronized ManagedChannel channel(WorkerAddress address) {
    String key = address.getHost() + ":" + address.getRpcPort();
    return channels.computeIfAbsent(
        key,
        k ->
            NettyChannelBuilder.forAddress(address.getHost(), address.getRpcPort())
                .usePlaintext()
                .intercept(VersionHeaders.clientInterceptor())
                .build());
  }

  @Override
  public synchronized void close() {
    for (ManagedChannel c : channels.values()) {
      c.shutdownNow();
    }
    for (ManagedChannel c : channels.values()) {
      try {
        c.awaitTermination(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    channels.clear();
  }
}
