package io.strata.client;

import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.WorkerServiceGrpc;
import io.strata.proto.WriteBlocksHeader;
import io.strata.proto.WriteBlocksRequest;
import io.strata.proto.WriteBlocksResponse;
import io.strata.proto.WriteFileHeader;
import io.strata.proto.WriteFileRequest;
import io.strata.proto.WriteFileResponse;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * One client-streamed write call to a worker (WriteFile, through to the under store, or
 * WriteBlocks, into its cache only), with gRPC flow control: a chunk is handed to the stream only
 * when the transport is ready for it, so a fast writer never piles up more than gRPC's small send
 * buffer in memory. A failure reported by the worker surfaces from the next {@link #send} or from
 * {@link #finish}. Used by one writer thread at a time.
 */
final class WorkerWriteStream<Q> {
  private final String worker;
  private final long stallNanos;
  private final Function<ByteString, Q> chunkMessage;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private ClientCallStreamObserver<Q> requests;
  // Guarded by lock.
  private WriteFileResponse response;
  private Throwable failure;
  private boolean done;

  private WorkerWriteStream(
      String worker, Duration stallTimeout, Function<ByteString, Q> chunkMessage) {
    this.worker = worker;
    this.stallNanos = stallTimeout.toNanos();
    this.chunkMessage = chunkMessage;
  }

  /** A WriteFile call: the file through to the under store at the header's path. */
  static WorkerWriteStream<WriteFileRequest> writeFile(
      ManagedChannel channel, String worker, WriteFileHeader header, Duration stallTimeout) {
    WorkerWriteStream<WriteFileRequest> s =
        new WorkerWriteStream<>(
            worker, stallTimeout, chunk -> WriteFileRequest.newBuilder().setChunk(chunk).build());
    WorkerServiceGrpc.newStub(channel).writeFile(s.new Responses<WriteFileResponse>(r -> r));
    s.requests.onNext(WriteFileRequest.newBuilder().setHeader(header).build());
    return s;
  }

  /**
   * A WriteBlocks call: the content into the worker's cache only, as blocks of the header's data
   * id; its answer is given as a WriteFileResponse without a fingerprint.
   */
  static WorkerWriteStream<WriteBlocksRequest> writeBlocks(
      ManagedChannel channel, String worker, WriteBlocksHeader header, Duration stallTimeout) {
    WorkerWriteStream<WriteBlocksRequest> s =
        new WorkerWriteStream<>(
            worker, stallTimeout, chunk -> WriteBlocksRequest.newBuilder().setChunk(chunk).build());
    WorkerServiceGrpc.newStub(channel)
        .writeBlocks(
            s
            .new Responses<WriteBlocksResponse>(
                r -> WriteFileResponse.newBuilder().setLength(r.getLength()).build()));
    s.requests.onNext(WriteBlocksRequest.newBuilder().setHeader(header).build());
    return s;
  }

  private final class Responses<R> implements ClientResponseObserver<Q, R> {
    private final Function<R, WriteFileResponse> answer;

    Responses(Function<R, WriteFileResponse> answer) {
      this.answer = answer;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<Q> stream) {
      requests = stream;
      stream.setOnReadyHandler(() -> signal(null, null, false));
    }

    @Override
    public void onNext(R value) {
      signal(answer.apply(value), null, false);
    }

    @Override
    public void onError(Throwable t) {
      signal(null, t, true);
    }

    @Override
    public void onCompleted() {
      signal(null, null, true);
    }
  }

  private void signal(WriteFileResponse value, Throwable error, boolean finished) {
    lock.lock();
    try {
      if (value != null) {
        response = value;
      }
      if (error != null && failure == null) {
        failure = error;
      }
      done |= finished;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Sends one chunk, waiting while the transport is not ready. */
  void send(ByteString chunk) throws StrataException, InterruptedIOException {
    lock.lock();
    try {
      long deadline = System.nanoTime() + stallNanos;
      while (!requests.isReady() && failure == null && !done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new StrataException(
              ErrorCode.DEADLINE_EXCEEDED,
              "Worker "
                  + worker
                  + " accepted no data for "
                  + TimeUnit.NANOSECONDS.toSeconds(stallNanos)
                  + "s");
        }
        changed.awaitNanos(left);
      }
      throwIfFailed();
      if (done) {
        throw new StrataException(
            ErrorCode.INTERNAL, "Worker " + worker + " ended the write before the data was sent");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while writing to worker " + worker);
    } finally {
      lock.unlock();
    }
    requests.onNext(chunkMessage.apply(chunk));
  }

  /** Ends the stream and waits for the worker to commit the file. */
  WriteFileResponse finish(Duration timeout) throws StrataException, InterruptedIOException {
    requests.onCompleted();
    lock.lock();
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (!done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new StrataException(
              ErrorCode.DEADLINE_EXCEEDED,
              "Worker "
                  + worker
                  + " did not confirm the write within "
                  + timeout.toSeconds()
                  + "s");
        }
        changed.awaitNanos(left);
      }
      throwIfFailed();
      if (response == null) {
        throw new StrataException(
            ErrorCode.INTERNAL, "Worker " + worker + " completed the write without a reply");
      }
      return response;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("Interrupted while writing to worker " + worker);
    } finally {
      lock.unlock();
    }
  }

  /** Cancels the call; the worker aborts the file so nothing appears under its name. */
  void cancel(String why) {
    requests.cancel(why, null);
  }

  private void throwIfFailed() throws StrataException {
    if (failure == null) {
      return;
    }
    if (failure instanceof StatusRuntimeException) {
      StrataException e = GrpcErrors.fromStatus((StatusRuntimeException) failure);
      if (e.code() == ErrorCode.UNAVAILABLE) {
        throw new StrataException(
            ErrorCode.UNAVAILABLE,
            "Lost worker " + worker + " while writing: " + e.getMessage(),
            failure);
      }
      throw e;
    }
    throw new StrataException(
        ErrorCode.INTERNAL,
        "Write to worker " + worker + " failed: " + Status.fromThrowable(failure).getDescription(),
        failure);
  }
}
