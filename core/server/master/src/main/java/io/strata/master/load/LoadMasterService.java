package io.strata.master.load;

import io.grpc.stub.StreamObserver;
import io.strata.common.error.StrataException;
import io.strata.proto.GetLoadStatusRequest;
import io.strata.proto.GetLoadStatusResponse;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.StopLoadRequest;
import io.strata.proto.StopLoadResponse;
import io.strata.proto.SubmitLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import io.strata.server.common.RpcCalls;
import java.util.function.Supplier;

/** The gRPC face of the {@link LoadJobManager}; errors reach clients as RpcCalls maps them. */
public final class LoadMasterService extends LoadMasterGrpc.LoadMasterImplBase {
  private final Supplier<LoadJobManager> manager;
  private final RpcCalls calls;

  /**
   * @param manager the leader's job manager (null on a master that does not lead)
   */
  public LoadMasterService(Supplier<LoadJobManager> manager, RpcCalls calls) {
    this.manager = manager;
    this.calls = calls;
  }

  private LoadJobManager jobs() throws StrataException {
    LoadJobManager jobs = manager.get();
    if (jobs == null) {
      throw StrataException.unavailable(
          "This master does not lead; load jobs run on the leader", null);
    }
    return jobs;
  }

  @Override
  public void submitLoad(SubmitLoadRequest request, StreamObserver<SubmitLoadResponse> observer) {
    calls.unary(
        "SubmitLoad", observer, () -> jobs().submit(request.getPath(), request.getOptions()));
  }

  @Override
  public void getLoadStatus(
      GetLoadStatusRequest request, StreamObserver<GetLoadStatusResponse> observer) {
    calls.unary(
        "GetLoadStatus",
        observer,
        () ->
            GetLoadStatusResponse.newBuilder()
                .setJob(
                    jobs().status(request.getPath(), Math.min(10_000, request.getMaxFailures())))
                .build());
  }

  @Override
  public void stopLoad(StopLoadRequest request, StreamObserver<StopLoadResponse> observer) {
    calls.unary(
        "StopLoad",
        observer,
        () -> StopLoadResponse.newBuilder().setJob(jobs().stop(request.getPath())).build());
  }
}
