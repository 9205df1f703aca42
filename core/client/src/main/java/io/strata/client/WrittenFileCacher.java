package io.strata.client;

import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.strata.common.BlockIds;
import io.strata.common.WorkerHashing;
import io.strata.common.conf.ClientKeys;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadBlocksRequest;
import io.strata.proto.LoadBlocksResponse;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerServiceGrpc;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Caches a file that was just written and completed (write type CACHE_THROUGH): each block goes to
 * the worker that reads of it go to first (the block's first worker by {@link WorkerHashing}, as
 * readers and load jobs choose), which copies it from the under store into its block store with the
 * load path it uses for {@code strata fs load}; one call per worker, all at once. The caller waits
 * for the answers. A block that could not be cached is counted and logged, not thrown: the file is
 * whole in the under store, and its first read caches it.
 */
final class WrittenFileCacher {
  private static final Logger LOG = LoggerFactory.getLogger(WrittenFileCacher.class);

  private final ClientContext ctx;

  WrittenFileCacher(ClientContext ctx) {
    this.ctx = ctx;
  }

  /** Caches every block of {@code file}, a complete file; returns the blocks cached. */
  int cache(FileInfo file) {
    long length = file.getLength();
    long blockSize = file.getBlockSize();
    if (length == 0 || blockSize <= 0 || file.getDirectory()) {
      return 0;
    }
    Map<WorkerInfo, List<LoadBlockTask>> byWorker = new LinkedHashMap<>();
    int blocks = (int) ((length + blockSize - 1) / blockSize);
    try {
      List<WorkerInfo> live = ctx.workers.live();
      for (int i = 0; i < blocks; i++) {
        long blockId = BlockIds.blockId(file.getFileId(), i);
        List<WorkerInfo> ranked = WorkerHashing.rank(blockId, live, WorkerInfo::getWorkerId);
        if (ranked.isEmpty()) {
          return failed(file, blocks, "no live worker");
        }
        long start = i * blockSize;
        byWorker
            .computeIfAbsent(ranked.get(0), w -> new ArrayList<>())
            .add(
                LoadBlockTask.newBuilder()
                    .setBlockId(blockId)
                    .setUfsPath(file.getUfsPath())
                    .setMountId(file.getMountId())
                    .setBlockStart(start)
                    .setBlockLength(Math.min(blockSize, length - start))
                    .setWorkerTellsMaster(true)
                    .build());
      }
    } catch (StrataException e) {
      return failed(file, blocks, e.getMessage());
    }
    Duration timeout = ctx.conf.getDuration(ClientKeys.RPC_TIMEOUT);
    // Every worker copies its blocks at the same time; close waits for the slowest.
    Map<WorkerInfo, CompletableFuture<LoadBlocksResponse>> calls = new LinkedHashMap<>();
    byWorker.forEach(
        (worker, tasks) -> {
          CompletableFuture<LoadBlocksResponse> answer = new CompletableFuture<>();
          calls.put(worker, answer);
          WorkerServiceGrpc.newStub(ctx.workerChannel(worker.getAddress()))
              .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
              .loadBlocks(
                  LoadBlocksRequest.newBuilder().addAllTasks(tasks).build(),
                  new StreamObserver<>() {
                    @Override
                    public void onNext(LoadBlocksResponse value) {
                      answer.complete(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                      answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {}
                  });
        });
    int cached = 0;
    for (Map.Entry<WorkerInfo, List<LoadBlockTask>> e : byWorker.entrySet()) {
      WorkerInfo worker = e.getKey();
      LoadBlocksResponse response;
      try {
        response = calls.get(worker).join();
      } catch (CompletionException x) {
        failed(
            file,
            e.getValue().size(),
            "worker "
                + worker.getAddress().getHost()
                + ":"
                + worker.getAddress().getRpcPort()
                + ": "
                + (x.getCause() instanceof StatusRuntimeException sre
                    ? GrpcErrors.fromStatus(sre).getMessage()
                    : String.valueOf(x.getCause())));
        continue;
      }
      // The worker answers in the order of the tasks.
      List<LoadBlockResult> results = response.getResultsList();
      for (int i = 0; i < results.size() && i < e.getValue().size(); i++) {
        LoadBlockResult r = results.get(i);
        if (r.getOutcome() == LoadBlockOutcome.LOAD_BLOCK_LOADED
            || r.getOutcome() == LoadBlockOutcome.LOAD_BLOCK_ALREADY_CACHED) {
          cached++;
          ctx.metrics.addCachedOnWrite(e.getValue().get(i).getBlockLength());
        } else {
          failed(
              file,
              1,
              r.getOutcome() + (r.getMessage().isEmpty() ? "" : " (" + r.getMessage() + ")"));
        }
      }
    }
    return cached;
  }

  private int failed(FileInfo file, int blocks, String why) {
    ctx.metrics.addCacheOnWriteFailures(blocks);
    LOG.debug(
        "{} block(s) of {} were not cached at close ({}); its first read caches them",
        blocks,
        file.getPath(),
        why);
    return 0;
  }
}
