package io.strata.client.master;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import java.util.Iterator;
import java.util.function.Function;

/**
 * The retry rules of one server stream on the leader, the same for every stream a client reads
 * (listings, metadata loads): {@link #open} opens it with a listing's deadline; after a failure,
 * {@link #afterFailure} either returns (open the stream again, from where it was) or throws the
 * error to give up with. A stream that delivered something on its call and then ran out of time is
 * opened again at once; a master that could not serve it is left for the leader a follower named or
 * the next master, with the back-off and the budget of unary calls; anything else is the caller's
 * error. Not thread-safe: one per stream.
 */
public final class StreamRetries {
  private final MasterClient master;
  private Backoff backoff;

  StreamRetries(MasterClient master) {
    this.master = master;
  }

  /**
   * Opens the stream on the leader with the deadline of one listing.
   *
   * @param call issues the streaming call on the stub it is given
   */
  public <R> Iterator<R> open(Function<FileSystemMasterBlockingStub, Iterator<R>> call) {
    return call.apply(master.listingStub());
  }

  /**
   * Decides on a failed stream call.
   *
   * @param progressed whether the failed call delivered anything before it failed
   * @throws StrataException the failure as the caller should see it, when it is not retried
   */
  public void afterFailure(StatusRuntimeException e, boolean progressed) throws StrataException {
    Status.Code code = e.getStatus().getCode();
    if (code == Status.Code.DEADLINE_EXCEEDED && progressed) {
      // Long but moving: its deadline was for one call, not for the whole stream.
      return;
    }
    if (code != Status.Code.UNAVAILABLE) {
      throw GrpcErrors.fromStatus(e);
    }
    if (backoff == null) {
      backoff = master.newBackoff();
    }
    master.waitToRetry(backoff, e);
  }
}
