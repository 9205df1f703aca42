package io.strata.worker.grpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.strata.common.error.StrataException;
import io.strata.proto.ConcatFilesRequest;
import io.strata.proto.ConcatFilesResponse;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadBlocksRequest;
import io.strata.proto.LoadBlocksResponse;
import io.strata.proto.PersistBlocksRequest;
import io.strata.proto.PersistBlocksResponse;
import io.strata.proto.ReleaseBlocksRequest;
import io.strata.proto.ReleaseBlocksResponse;
import io.strata.proto.RemoveBlocksRequest;
import io.strata.proto.RemoveBlocksResponse;
import io.strata.proto.ReportLocalReadsRequest;
import io.strata.proto.ReportLocalReadsResponse;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteBlocksRequest;
import io.strata.proto.WriteBlocksResponse;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import io.strata.proto.WriteSmallFileRequest;
import io.strata.server.common.RpcCalls;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.block.BlockMeta;
import io.strata.worker.block.BlockVerifier;
import io.strata.worker.block.TieredBlockStore;
import io.strata.worker.data.ReadMetrics;
import io.strata.worker.load.LoadExecutor;
import io.strata.worker.master.MasterLink;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's gRPC service: writes files through to under stores (streamed, or joined from
 * others), writes files to the cache only as held blocks and later persists and releases them,
 * drops blocks from the block store when asked, and runs the load tasks of load jobs. Errors reach
 * clients as the statuses {@link RpcCalls} assigns; a load task's failure is an outcome in the
 * answer, not an error of the call.
 */
public final class WorkerRpcService extends WorkerServiceGrpc.WorkerServiceImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(WorkerRpcService.class);

  private final TieredBlockStore store;
  private final MountedStores stores;
  private final LoadExecutor loads;
  private final MasterLink master;
  private final RpcCalls calls;
  private final Counter writeBytes;
  private final ReadMetrics readMetrics;

  /**
   * @param loads runs the tasks of LoadBlocks
   * @param master told synchronously of the blocks WriteBlocks holds
   * @param writeBytes counts bytes written to under stores (WORKER_WRITE_UFS_BYTES)
   * @param readMetrics counts the reads clients report having made from block files directly
   */
  public WorkerRpcService(
      TieredBlockStore store,
      MountedStores stores,
      LoadExecutor loads,
      MasterLink master,
      RpcCalls calls,
      Counter writeBytes,
      ReadMetrics readMetrics) {
    this.store = store;
    this.stores = stores;
    this.loads = loads;
    this.master = master;
    this.calls = calls;
    this.writeBytes = writeBytes;
    this.readMetrics = readMetrics;
  }

  /** Marks blocks a client read from their files directly as recently used, and counts them. */
  @Override
  public void reportLocalReads(
      ReportLocalReadsRequest request, StreamObserver<ReportLocalReadsResponse> responseObserver) {
    calls.unary(
        "ReportLocalReads",
        responseObserver,
        () -> {
          int held = 0;
          for (long blockId : request.getBlockIdsList()) {
            if (store.touch(blockId) != null) {
              held++;
            }
          }
          readMetrics.localReads(held, request.getBytes());
          return ReportLocalReadsResponse.getDefaultInstance();
        });
  }

  @Override
  public StreamObserver<WriteFileRequest> writeFile(
      StreamObserver<WriteFileResponse> responseObserver) {
    return new FileWriteStream(stores, responseObserver, writeBytes, calls.timer("WriteFile"));
  }

  /** A whole file in one message: the stream's steps, run at once on this call's thread. */
  @Override
  public void writeSmallFile(
      WriteSmallFileRequest request, StreamObserver<WriteFileResponse> responseObserver) {
    FileWriteStream write =
        new FileWriteStream(stores, responseObserver, writeBytes, calls.timer("WriteSmallFile"));
    write.onNext(WriteFileRequest.newBuilder().setHeader(request.getHeader()).build());
    if (!request.getContent().isEmpty()) {
      write.onNext(WriteFileRequest.newBuilder().setChunk(request.getContent()).build());
    }
    write.onCompleted();
  }

  /**
   * Joins files of one mount where they are, with the store's {@link UnderFileSystem#concat}.
   * Blocks the call's thread as long as the store takes: a namenode call or a server-side copy
   * where the store joins in place, a copy of every byte where it cannot.
   */
  @Override
  public void concatFiles(
      ConcatFilesRequest request, StreamObserver<ConcatFilesResponse> responseObserver) {
    calls.unary(
        "ConcatFiles",
        responseObserver,
        () -> {
          String target = request.getUfsPath();
          if (target.isEmpty() || request.getSourceUfsPathsCount() == 0) {
            throw StrataException.invalidArgument(
                "ConcatFiles needs a ufs_path and at least one"
                    + " source; got "
                    + request.getSourceUfsPathsCount()
                    + " sources for '"
                    + target
                    + "'");
          }
          UnderFileSystem ufs = stores.get(target, request.getMountId());
          for (String source : request.getSourceUfsPathsList()) {
            if (stores.get(source, request.getMountId()) != ufs) {
              throw StrataException.invalidArgument(
                  "Cannot concatenate "
                      + source
                      + " into "
                      + target
                      + ": they are in different under stores; copy the bytes instead");
            }
          }
          long start = System.nanoTime();
          UfsStatus written =
              ufs.concat(
                  request.getSourceUfsPathsList(),
                  target,
                  request.getOverwrite(),
                  request.getMode());
          LOG.debug(
              "Concatenated {} files ({} bytes) into {} in {} ms",
              request.getSourceUfsPathsCount(),
              written.length(),
              target,
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
          return ConcatFilesResponse.newBuilder()
              .setLength(written.length())
              .setUfsFingerprint(written.fingerprint())
              .build();
        });
  }

  @Override
  public StreamObserver<WriteBlocksRequest> writeBlocks(
      StreamObserver<WriteBlocksResponse> responseObserver) {
    return new BlockWriteStream(store, master, responseObserver, calls.timer("WriteBlocks"));
  }

  /**
   * Writes held blocks, in order, as one file of its under store, replacing what was there; the
   * store shows the file only when it is whole. The blocks are pinned meanwhile, so neither a
   * release nor a removal deletes them mid-copy. Blocks the call's thread for the copy.
   */
  @Override
  public void persistBlocks(
      PersistBlocksRequest request, StreamObserver<PersistBlocksResponse> responseObserver) {
    calls.unary("PersistBlocks", responseObserver, () -> persist(request));
  }

  private PersistBlocksResponse persist(PersistBlocksRequest request) throws IOException {
    String target = request.getUfsPath();
    if (target.isEmpty()) {
      throw StrataException.invalidArgument(
          "PersistBlocks has no ufs_path; name the file of "
              + "the under store to write the "
              + request.getBlockIdsCount()
              + " blocks to");
    }
    List<BlockMeta> pinned = new ArrayList<>(request.getBlockIdsCount());
    try {
      long length = 0;
      for (long blockId : request.getBlockIdsList()) {
        BlockMeta block = store.pin(blockId);
        if (block != null) {
          pinned.add(block);
        }
        if (block == null || !store.isHeld(blockId)) {
          throw StrataException.failedPrecondition(
              "Cannot persist "
                  + target
                  + ": block "
                  + blockId
                  + " is not held by this worker (only blocks written to its cache only, "
                  + "and not yet released, are); persist the file from the worker that holds it, "
                  + "or write it again");
        }
        length += block.length();
      }
      if (length != request.getLength()) {
        throw StrataException.failedPrecondition(
            "Cannot persist "
                + target
                + ": its "
                + request.getBlockIdsCount()
                + " blocks hold "
                + length
                + " bytes, but the file "
                + "has "
                + request.getLength()
                + "; the block list does not match the file");
      }
      // The only copy of these bytes goes to the under store: never one that changed at rest.
      for (BlockMeta block : pinned) {
        BlockVerifier.Damage damage = store.verifier().check(block, 0, block.length());
        if (damage != null) {
          store.dropCorrupted(block, damage.how());
          throw StrataException.failedPrecondition(
              "Cannot persist "
                  + target
                  + ": block "
                  + block.blockId()
                  + " does not match its checksums ("
                  + damage.how()
                  + "), so the file's bytes in the cache are damaged and it was not written;"
                  + " write the file again");
        }
      }
      UnderFileSystem ufs = stores.get(target, request.getMountId());
      long start = System.nanoTime();
      UfsOutputStream out = ufs.create(target, true, request.getMode());
      try {
        for (BlockMeta block : pinned) {
          Files.copy(block.path(), out);
          writeBytes.increment(block.length());
        }
        out.close();
      } catch (IOException | RuntimeException | Error e) {
        try {
          out.abort();
        } catch (IOException abortFailure) {
          e.addSuppressed(abortFailure);
        }
        throw e;
      }
      LOG.debug(
          "Persisted {} blocks ({} bytes) to {} in {} ms",
          pinned.size(),
          length,
          target,
          TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
      return PersistBlocksResponse.newBuilder()
          .setLength(length)
          .setUfsFingerprint(out.fingerprint())
          .build();
    } finally {
      for (BlockMeta block : pinned) {
        store.unpin(block);
      }
    }
  }

  /** Lets the cache evict blocks whose file is in its under store now. */
  @Override
  public void releaseBlocks(
      ReleaseBlocksRequest request, StreamObserver<ReleaseBlocksResponse> responseObserver) {
    calls.unary(
        "ReleaseBlocks",
        responseObserver,
        () ->
            ReleaseBlocksResponse.newBuilder()
                .setReleased(store.release(request.getBlockIdsList()))
                .build());
  }

  @Override
  public void removeBlocks(
      RemoveBlocksRequest request, StreamObserver<RemoveBlocksResponse> responseObserver) {
    calls.unary(
        "RemoveBlocks",
        responseObserver,
        () ->
            RemoveBlocksResponse.newBuilder()
                .setRemoved(store.remove(request.getBlockIdsList()))
                .build());
  }

  /**
   * Submits every task and answers once each has an outcome, with the results in the order of the
   * tasks. No thread waits meanwhile: the answer is sent by whichever load thread finishes the last
   * task (or at once when every task was answered on submit). A cancelled call does not stop its
   * tasks; their blocks are still cached.
   */
  @Override
  public void loadBlocks(
      LoadBlocksRequest request, StreamObserver<LoadBlocksResponse> responseObserver) {
    long start = System.nanoTime();
    Timer timer = calls.timer("LoadBlocks");
    if (responseObserver instanceof ServerCallStreamObserver<LoadBlocksResponse> call) {
      // Without a handler, answering a cancelled call throws on the load thread.
      call.setOnCancelHandler(
          () ->
              LOG.debug("LoadBlocks of {} tasks cancelled by the caller", request.getTasksCount()));
    }
    List<LoadBlockTask> tasks = request.getTasksList();
    @SuppressWarnings("unchecked")
    CompletableFuture<LoadBlockResult>[] results = new CompletableFuture[tasks.size()];
    for (int i = 0; i < results.length; i++) {
      results[i] = loads.submit(tasks.get(i));
    }
    CompletableFuture.allOf(results)
        .whenComplete(
            (ignored, failure) -> {
              LoadBlocksResponse.Builder response = LoadBlocksResponse.newBuilder();
              for (int i = 0; i < results.length; i++) {
                response.addResults(resultOf(tasks.get(i), results[i]));
              }
              timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
              try {
                responseObserver.onNext(response.build());
                responseObserver.onCompleted();
              } catch (RuntimeException e) {
                LOG.debug("Cannot answer LoadBlocks: {}", e.toString());
              }
            })
        .exceptionally(
            failure -> {
              LOG.warn("LoadBlocks ended with a failure: {}", failure.toString());
              return null;
            });
  }

  /** The result of a completed load; the executor never fails a future, but be total anyway. */
  private static LoadBlockResult resultOf(
      LoadBlockTask task, CompletableFuture<LoadBlockResult> future) {
    try {
      return future.join();
    } catch (RuntimeException e) {
      return LoadBlockResult.newBuilder()
          .setBlockId(task.getBlockId())
          .setOutcome(LoadBlockOutcome.LOAD_BLOCK_FAILED)
          .setMessage(
              "cannot load block "
                  + task.getBlockId()
                  + " from "
                  + task.getUfsPath()
                  + ": "
                  + (e.getCause() != null ? e.getCause() : e))
          .build();
    }
  }
}
