package io.strata.worker;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.CommitBlocksResponse;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.ListMountsResponse;
import io.strata.proto.MountInfo;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test double of the master: the real generated gRPC services on 127.0.0.1, recording what the
 * worker sends and answering heartbeats with queued responses.
 */
final class FakeMaster implements AutoCloseable {
  final List<RegisterWorkerRequest> registrations = new CopyOnWriteArrayList<>();
  final List<HeartbeatRequest> heartbeats = new CopyOnWriteArrayList<>();

  /** Every block committed, by CommitBlock or in a CommitBlocks batch. */
  final List<CommitBlockRequest> commits = new CopyOnWriteArrayList<>();

  final List<CommitBlocksRequest> commitBatches = new CopyOnWriteArrayList<>();

  /** CommitBlocks calls to fail with UNAVAILABLE before answering again. */
  final AtomicInteger failCommitBatches = new AtomicInteger();

  final List<MountInfo> mounts = new CopyOnWriteArrayList<>();
  final List<ListMountsRequest> mountRequests = new CopyOnWriteArrayList<>();
  final BlockingQueue<HeartbeatResponse> nextResponses = new LinkedBlockingQueue<>();

  /** Heartbeats to fail with UNAVAILABLE before answering again. */
  final AtomicInteger failHeartbeats = new AtomicInteger();

  /** Heartbeats failed so far. */
  final AtomicInteger refusedHeartbeats = new AtomicInteger();

  private final AtomicInteger nextWorkerId = new AtomicInteger(100);
  private final Server server;

  FakeMaster() throws IOException {
    this(0);
  }

  FakeMaster(int port) throws IOException {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
            .addService(
                new BlockMasterWorkerGrpc.BlockMasterWorkerImplBase() {
                  @Override
                  public void registerWorker(
                      RegisterWorkerRequest request,
                      StreamObserver<RegisterWorkerResponse> observer) {
                    registrations.add(request);
                    observer.onNext(
                        RegisterWorkerResponse.newBuilder()
                            .setWorkerId(nextWorkerId.getAndIncrement())
                            .build());
                    observer.onCompleted();
                  }

                  @Override
                  public void heartbeat(
                      HeartbeatRequest request, StreamObserver<HeartbeatResponse> observer) {
                    if (failHeartbeats.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                      refusedHeartbeats.incrementAndGet();
                      observer.onError(
                          Status.UNAVAILABLE.withDescription("test outage").asRuntimeException());
                      return;
                    }
                    heartbeats.add(request);
                    HeartbeatResponse response = nextResponses.poll();
                    observer.onNext(
                        response != null ? response : HeartbeatResponse.getDefaultInstance());
                    observer.onCompleted();
                  }

                  @Override
                  public void commitBlock(
                      CommitBlockRequest request, StreamObserver<CommitBlockResponse> observer) {
                    commits.add(request);
                    observer.onNext(CommitBlockResponse.getDefaultInstance());
                    observer.onCompleted();
                  }

                  @Override
                  public void commitBlocks(
                      CommitBlocksRequest request, StreamObserver<CommitBlocksResponse> observer) {
                    if (failCommitBatches.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                      observer.onError(
                          Status.UNAVAILABLE.withDescription("test outage").asRuntimeException());
                      return;
                    }
                    commitBatches.add(request);
                    request
                        .getBlocksList()
                        .forEach(
                            b ->
                                commits.add(
                                    CommitBlockRequest.newBuilder()
                                        .setWorkerId(request.getWorkerId())
                                        .setBlock(b)
                                        .build()));
                    observer.onNext(CommitBlocksResponse.getDefaultInstance());
                    observer.onCompleted();
                  }
                })
            .addService(
                new FileSystemMasterGrpc.FileSystemMasterImplBase() {
                  @Override
                  public void listMounts(
                      ListMountsRequest request, StreamObserver<ListMountsResponse> observer) {
                    mountRequests.add(request);
                    observer.onNext(ListMountsResponse.newBuilder().addAllMounts(mounts).build());
                    observer.onCompleted();
                  }
                })
            .build()
            .start();
  }

  int port() {
    return server.getPort();
  }

  /** The bound of the tests' waits on the worker and this master (with Awaitility). */
  static final Duration WAIT = Duration.ofSeconds(20);

  /** How often those waits look again. */
  static final Duration POLL = Duration.ofMillis(50);

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }
}
