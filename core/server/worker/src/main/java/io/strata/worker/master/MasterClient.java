package io.strata.worker.master;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.FileSystemMasterGrpc;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The worker's gRPC connection to the master. Every stub it hands out carries the configured
 * deadline, so a master that hangs can delay the worker's calls but never block them forever.
 */
public final class MasterClient implements AutoCloseable {
  private final String address;
  private final ManagedChannel channel;
  private final long timeoutMs;

  public MasterClient(String host, int port, Duration timeout) {
    this.address = host + ":" + port;
    this.timeoutMs = timeout.toMillis();
    this.channel = ManagedChannelBuilder.forAddress(host, port).usePlaintext().build();
  }

  /** host:port of the master, for messages. */
  public String address() {
    return address;
  }

  public BlockMasterWorkerGrpc.BlockMasterWorkerBlockingStub blockMaster() {
    return BlockMasterWorkerGrpc.newBlockingStub(channel)
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public BlockMasterWorkerGrpc.BlockMasterWorkerStub blockMasterAsync() {
    return BlockMasterWorkerGrpc.newStub(channel)
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public FileSystemMasterGrpc.FileSystemMasterBlockingStub fileSystem() {
    return FileSystemMasterGrpc.newBlockingStub(channel)
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    channel.shutdownNow();
    channel.awaitTermination(5, TimeUnit.SECONDS);
  }
}
