package io.strata.master.block;

import io.grpc.stub.StreamObserver;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.CommitBlockRequest;
import io.strata.proto.CommitBlockResponse;
import io.strata.proto.CommitBlocksRequest;
import io.strata.proto.CommitBlocksResponse;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.server.common.RpcCalls;

/**
 * The gRPC face of the {@link WorkerRegistry} for workers: registration with a full block report,
 * heartbeats (which carry block changes one way and removal orders the other), and single block
 * commits. Errors reach the worker as the status codes of {@code GrpcErrors}.
 */
public final class BlockMasterWorkerService
    extends BlockMasterWorkerGrpc.BlockMasterWorkerImplBase {
  private final WorkerRegistry registry;
  private final RpcCalls calls;

  public BlockMasterWorkerService(WorkerRegistry registry, RpcCalls calls) {
    this.registry = registry;
    this.calls = calls;
  }

  @Override
  public void registerWorker(
      RegisterWorkerRequest request, StreamObserver<RegisterWorkerResponse> observer) {
    calls.unary(
        "RegisterWorker",
        observer,
        () -> RegisterWorkerResponse.newBuilder().setWorkerId(registry.register(request)).build());
  }

  @Override
  public void heartbeat(HeartbeatRequest request, StreamObserver<HeartbeatResponse> observer) {
    calls.unary("Heartbeat", observer, () -> registry.heartbeat(request));
  }

  @Override
  public void commitBlock(
      CommitBlockRequest request, StreamObserver<CommitBlockResponse> observer) {
    calls.unary(
        "CommitBlock",
        observer,
        () -> {
          registry.commitBlock(request.getWorkerId(), request.getBlock());
          return CommitBlockResponse.getDefaultInstance();
        });
  }

  @Override
  public void commitBlocks(
      CommitBlocksRequest request, StreamObserver<CommitBlocksResponse> observer) {
    calls.unary(
        "CommitBlocks",
        observer,
        () -> {
          registry.commitBlocks(request.getWorkerId(), request.getBlocksList());
          return CommitBlocksResponse.getDefaultInstance();
        });
  }
}
