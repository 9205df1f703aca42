package io.strata.master.file;

import io.grpc.stub.ServerCallStreamObserver;
import io.micrometer.core.instrument.Timer;
import io.strata.common.error.GrpcErrors;
import io.strata.proto.ListStatusResponse;
import java.util.concurrent.TimeUnit;

/**
 * One ListStatus stream. It produces the next page only when the client can take it (the call's
 * on-ready handler, while {@code isReady()}), reading each page from the metastore at that moment,
 * so neither the master nor the client ever holds more than a page of a large directory, and no
 * gRPC thread waits for a slow client.
 */
final class DirectoryListing implements Runnable {
  private final Namespace namespace;
  private final long dirId;
  private final int pageSize;
  private final boolean withBlocks;
  private final boolean includeHidden;
  private final ServerCallStreamObserver<ListStatusResponse> call;
  private final Timer timer;
  private final long startNanos;
  private String cursor;
  private boolean done;

  /**
   * @param withBlocks send each complete file's blocks and their holders with its status
   * @param includeHidden send hidden entries too ({@link io.strata.common.PathNames#isHidden})
   */
  DirectoryListing(
      Namespace namespace,
      long dirId,
      String startAfter,
      int pageSize,
      boolean withBlocks,
      boolean includeHidden,
      ServerCallStreamObserver<ListStatusResponse> call,
      Timer timer,
      long startNanos) {
    this.withBlocks = withBlocks;
    this.includeHidden = includeHidden;
    this.namespace = namespace;
    this.dirId = dirId;
    this.cursor = startAfter;
    this.pageSize = pageSize;
    this.call = call;
    this.timer = timer;
    this.startNanos = startNanos;
  }

  /** Sends pages while the client is ready; gRPC calls it again when it is ready once more. */
  @Override
  public synchronized void run() {
    try {
      while (!done && call.isReady()) {
        if (call.isCancelled()) {
          finish();
          return;
        }
        InodeTree.Page page =
            namespace.listPage(dirId, cursor, pageSize, withBlocks, includeHidden);
        if (!page.files().isEmpty()) {
          call.onNext(ListStatusResponse.newBuilder().addAllFiles(page.files()).build());
        }
        cursor = page.last();
        if (page.end()) {
          finish();
          call.onCompleted();
        }
      }
    } catch (RuntimeException e) {
      if (!done) {
        finish();
        call.onError(GrpcErrors.toStatus(e));
      }
    }
  }

  /** The client went away: stop producing pages. */
  synchronized void cancel() {
    finish();
  }

  private void finish() {
    if (!done) {
      done = true;
      timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    }
  }
}
