package io.strata.worker.grpc;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Timer;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UnderFileSystem;
import io.strata.worker.ufs.MountedStores;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client-streamed WriteFile call. The first message names the file; chunks are written to the
 * under store as they arrive (gRPC asks for the next message only after this one is written, which
 * paces the client). The file appears under its name only when the client completes the stream; on
 * any error or cancellation the partial file is aborted.
 */
final class FileWriteStream implements StreamObserver<WriteFileRequest> {
  private static final Logger LOG = LoggerFactory.getLogger(FileWriteStream.class);

  private final MountedStores stores;
  private final StreamObserver<WriteFileResponse> response;
  private final Counter writeBytes;
  private final Timer timer;
  private final long startNanos = System.nanoTime();
  private WriteFileHeader header;
  private UfsOutputStream out;
  private long length;
  private boolean finished;

  FileWriteStream(
      MountedStores stores,
      StreamObserver<WriteFileResponse> response,
      Counter writeBytes,
      Timer timer) {
    this.stores = stores;
    this.response = response;
    this.writeBytes = writeBytes;
    this.timer = timer;
  }

  @Override
  public void onNext(WriteFileRequest request) {
    if (finished) {
      return;
    }
    try {
      if (header == null) {
        if (!request.hasHeader()) {
          throw StrataException.invalidArgument(
              "WriteFile must start with a header naming the "
                  + "file; the first message carried data");
        }
        header = request.getHeader();
        if (header.getUfsPath().isEmpty()) {
          throw StrataException.invalidArgument("WriteFile header has no ufs_path");
        }
        UnderFileSystem ufs = stores.get(header.getUfsPath(), header.getMountId());
        out = ufs.create(header.getUfsPath(), header.getOverwrite(), header.getMode());
      } else if (request.hasHeader()) {
        throw StrataException.invalidArgument(
            "WriteFile of "
                + header.getUfsPath()
                + " got a second header; send the header once, then data");
      } else {
        request.getChunk().writeTo(out);
        length += request.getChunk().size();
        writeBytes.increment(request.getChunk().size());
      }
    } catch (Throwable t) {
      fail(t);
    }
  }

  @Override
  public void onError(Throwable t) {
    if (finished) {
      return;
    }
    finished = true;
    abort();
    LOG.info(
        "Write of {} was cancelled by the client after {} bytes ({}); nothing was kept",
        header == null ? "(no header yet)" : header.getUfsPath(),
        length,
        t.toString());
    record();
  }

  @Override
  public void onCompleted() {
    if (finished) {
      return;
    }
    if (out == null) {
      fail(StrataException.invalidArgument("WriteFile ended before its header"));
      return;
    }
    try {
      out.close();
    } catch (Throwable t) {
      fail(t);
      return;
    }
    finished = true;
    record();
    response.onNext(
        WriteFileResponse.newBuilder()
            .setLength(length)
            .setUfsFingerprint(out.fingerprint())
            .build());
    response.onCompleted();
  }

  private void fail(Throwable t) {
    finished = true;
    abort();
    StatusRuntimeException status = GrpcErrors.toStatus(t);
    // Refusals the client caused (file exists, bad path) are its to report; the rest is ours.
    if (status.getStatus().getCode() == Status.Code.INTERNAL) {
      LOG.warn(
          "Write of {} failed after {} bytes: {}",
          header == null ? "(no header)" : header.getUfsPath(),
          length,
          t.toString());
    }
    record();
    response.onError(status);
  }

  private void abort() {
    if (out == null) {
      return;
    }
    try {
      out.abort();
    } catch (IOException e) {
      LOG.warn("Cannot discard the partial write of {}: {}", header.getUfsPath(), e.toString());
    }
  }

  private void record() {
    timer.record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
  }
}
