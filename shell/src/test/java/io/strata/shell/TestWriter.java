package io.strata.shell;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WorkerState;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A stand-in worker that only takes writes: its WorkerService stores each file at its file://
 * under-store path. Its data port is closed, so reads through it fail over to the under store.
 */
final class TestWriter extends WorkerServiceGrpc.WorkerServiceImplBase implements AutoCloseable {
  private final Server server;
  private final int closedDataPort;

  TestWriter(int closedDataPort) throws IOException {
    this.closedDataPort = closedDataPort;
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(this)
            .build()
            .start();
  }

  WorkerInfo info() {
    return WorkerInfo.newBuilder()
        .setWorkerId(7)
        .setState(WorkerState.WORKER_LIVE)
        .setAddress(
            WorkerAddress.newBuilder()
                .setHost("127.0.0.1")
                .setRpcPort(server.getPort())
                .setDataPort(closedDataPort))
        .build();
  }

  @Override
  public StreamObserver<WriteFileRequest> writeFile(StreamObserver<WriteFileResponse> out) {
    return new StreamObserver<>() {
      private final ByteArrayOutputStream data = new ByteArrayOutputStream();
      private WriteFileHeader header;

      @Override
      public void onNext(WriteFileRequest r) {
        if (r.hasHeader()) {
          header = r.getHeader();
        } else {
          data.writeBytes(r.getChunk().toByteArray());
        }
      }

      @Override
      public void onError(Throwable t) {}

      @Override
      public void onCompleted() {
        String fingerprint;
        try {
          Path target = Path.of(header.getUfsPath().substring("file://".length()));
          Files.createDirectories(target.getParent());
          Files.write(target, data.toByteArray());
          fingerprint = new LocalUnderFileSystem().getStatus(header.getUfsPath()).fingerprint();
        } catch (IOException e) {
          out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
          return;
        }
        // The real fingerprint: readers check it against the under store.
        out.onNext(
            WriteFileResponse.newBuilder()
                .setLength(data.size())
                .setUfsFingerprint(fingerprint)
                .build());
        out.onCompleted();
      }
    };
  }

  @Override
  public void close() throws InterruptedException {
    server.shutdownNow().awaitTermination();
  }
}
