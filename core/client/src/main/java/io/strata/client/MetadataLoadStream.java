package io.strata.client;

import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import io.strata.client.master.MasterClient;
import io.strata.client.master.StreamRetries;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.LoadMetadataRequest;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The progress of one metadata load, streamed from the master: a message about once a second and a
 * last one with {@code done} set. Opening waits for the first message, so a path that does not
 * exist fails at once; while no message has arrived, an unreachable master is retried as other
 * calls are. Once the walk is under way a broken stream fails the iteration (the master's work so
 * far is kept; loading again finds it done). {@link #close()} cancels the walk. Not thread-safe.
 */
final class MetadataLoadStream implements CloseableIterator<LoadMetadataProgress> {
  private final Context.CancellableContext call;
  private Iterator<LoadMetadataProgress> messages;
  private LoadMetadataProgress next;
  private boolean finished;

  MetadataLoadStream(MasterClient master, LoadMetadataRequest request) throws StrataException {
    this.call = Context.current().withCancellation();
    StreamRetries retries = master.streamRetries();
    while (true) {
      try {
        Context previous = call.attach();
        try {
          messages = retries.open(stub -> stub.loadMetadata(request));
        } finally {
          call.detach(previous);
        }
        fetch();
        return;
      } catch (StatusRuntimeException e) {
        try {
          // Nothing was delivered yet: only a master that could not serve it is retried.
          retries.afterFailure(e, false);
        } catch (StrataException failed) {
          close();
          throw failed;
        }
      }
    }
  }

  /** Waits for the next message; marks the stream finished when there is none. */
  private void fetch() {
    if (messages.hasNext()) {
      next = messages.next();
    } else {
      finished = true;
    }
  }

  @Override
  public boolean hasNext() {
    if (next == null && !finished) {
      try {
        fetch();
      } catch (StatusRuntimeException e) {
        close();
        throw new UncheckedIOException(GrpcErrors.fromStatus(e));
      }
    }
    return next != null;
  }

  @Override
  public LoadMetadataProgress next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the metadata load has ended");
    }
    LoadMetadataProgress current = next;
    next = null;
    if (current.getDone()) {
      finished = true;
    }
    return current;
  }

  @Override
  public void close() {
    finished = true;
    next = null;
    call.cancel(null);
  }
}
