package io.strata.worker.grpc;

import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.strata.proto.RemoveBlocksRequest;
import io.strata.proto.RemoveBlocksResponse;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import io.strata.server.common.RpcCalls;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.ufs.MountedStores;

/**
 * The worker's gRPC service: writes files through to under stores, and drops blocks from the
 * block store when asked. Errors reach clients as the statuses {@link RpcCalls} assigns.
 */
public final class WorkerRpcService extends WorkerServiceGrpc.WorkerServiceImplBase {
  private final TieredBlockStore store;
  private final MountedStores stores;
  private final RpcCalls calls;
  private final Counter writeBytes;

  /** @param writeBytes counts bytes written to under stores (WORKER_WRITE_UFS_BYTES) */
  public WorkerRpcService(TieredBlockStore store, MountedStores stores, RpcCalls calls,
      Counter writeBytes) {
    this.store = store;
    this.stores = stores;
    this.calls = calls;
    this.writeBytes = writeBytes;
  }

  @Override
  public StreamObserver<WriteFileRequest> writeFile(
      StreamObserver<WriteFileResponse> responseObserver) {
    return new FileWriteStream(stores, responseObserver, writeBytes, calls.timer("WriteFile"));
  }

  @Override
  public void removeBlocks(RemoveBlocksRequest request,
      StreamObserver<RemoveBlocksResponse> responseObserver) {
    calls.unary("RemoveBlocks", responseObserver, () -> RemoveBlocksResponse.newBuilder()
        .setRemoved(store.remove(request.getBlockIdsList())).build());
  }
}
