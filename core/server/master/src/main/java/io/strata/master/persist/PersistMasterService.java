package io.strata.master.persist;

import io.grpc.stub.StreamObserver;
import io.strata.common.PathNames;
import io.strata.common.error.StrataException;
import io.strata.master.file.Namespace;
import io.strata.proto.FileInfo;
import io.strata.proto.GetPersistStatusRequest;
import io.strata.proto.GetPersistStatusResponse;
import io.strata.proto.PersistFileRequest;
import io.strata.proto.PersistFileResponse;
import io.strata.proto.PersistMasterGrpc;
import io.strata.proto.PersistenceState;
import io.strata.server.common.RpcCalls;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The gRPC face of the {@link PersistScheduler}: persist one file now ({@code strata fs persist})
 * and the backlog ({@code strata fsadmin report}). Errors reach clients as RpcCalls maps them.
 */
public final class PersistMasterService extends PersistMasterGrpc.PersistMasterImplBase {
  private final Namespace namespace;
  private final Supplier<PersistScheduler> scheduler;
  private final RpcCalls calls;

  /**
   * @param scheduler the leader's scheduler (null on a master that does not lead)
   */
  public PersistMasterService(
      Namespace namespace, Supplier<PersistScheduler> scheduler, RpcCalls calls) {
    this.namespace = namespace;
    this.scheduler = scheduler;
    this.calls = calls;
  }

  private PersistScheduler scheduler() throws StrataException {
    PersistScheduler s = scheduler.get();
    if (s == null) {
      throw StrataException.unavailable(
          "This master does not lead; persists run on the leader", null);
    }
    return s;
  }

  /** Answers once the file is in its under store: at once when it was already. */
  @Override
  public void persistFile(
      PersistFileRequest request, StreamObserver<PersistFileResponse> observer) {
    calls.unaryAsync(
        "PersistFile",
        observer,
        () -> {
          String path = PathNames.normalize(request.getPath());
          PersistScheduler s = scheduler();
          return namespace
              .getStatus(path)
              .thenCompose(f -> persist(s, path, f))
              .thenApply(f -> PersistFileResponse.newBuilder().setFile(f).build());
        });
  }

  private static CompletableFuture<FileInfo> persist(PersistScheduler s, String path, FileInfo f) {
    if (f.getDirectory()) {
      return CompletableFuture.failedFuture(
          StrataException.invalidArgument(
              "Path is a" + " directory: " + path + " (persist its files one by one)"));
    }
    if (f.getPersistenceState() == PersistenceState.PERSISTENCE_PERSISTED) {
      return CompletableFuture.completedFuture(f);
    }
    if (!f.getComplete()) {
      return CompletableFuture.failedFuture(
          StrataException.failedPrecondition(
              "File is still"
                  + " being written: "
                  + path
                  + " (persist it once its writer closed it)"));
    }
    return s.persist(f.getInodeNumber() != 0 ? f.getInodeNumber() : f.getFileId(), true);
  }

  @Override
  public void getPersistStatus(
      GetPersistStatusRequest request, StreamObserver<GetPersistStatusResponse> observer) {
    calls.unary("GetPersistStatus", observer, () -> scheduler().status());
  }
}
