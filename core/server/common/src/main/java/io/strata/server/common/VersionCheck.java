package io.strata.server.common;

import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.strata.common.rpc.VersionHeaders;
import io.strata.common.rpc.VersionHeaders.Caller;
import java.net.SocketAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves only callers whose RPC protocol this release serves (its own and the one before): any
 * other gets FAILED_PRECONDITION with a message naming both versions and what to upgrade first,
 * before its call reaches a service. Callers it serves are reported to a listener, with their
 * headers and address, so a master can show which releases its clients run.
 */
public final class VersionCheck implements ServerInterceptor {
  private static final Logger LOG = LoggerFactory.getLogger(VersionCheck.class);

  /** Hears of every caller served. */
  @FunctionalInterface
  public interface CallerListener {
    void served(Caller caller, Metadata headers, SocketAddress remote);
  }

  private final String server;
  private final CallerListener listener;

  /**
   * @param server what this server is, for refusals ("master", "worker")
   * @param listener told of each caller served; may be null
   */
  public VersionCheck(String server, CallerListener listener) {
    this.server = server;
    this.listener = listener;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    Caller caller = Caller.of(headers);
    String refusal = VersionHeaders.refusal(caller, server);
    if (refusal != null) {
      LOG.warn(
          "Refused {} from {}: {}",
          call.getMethodDescriptor().getFullMethodName(),
          call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR),
          refusal);
      call.close(Status.FAILED_PRECONDITION.withDescription(refusal), new Metadata());
      return new ServerCall.Listener<>() {};
    }
    if (listener != null) {
      listener.served(caller, headers, call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
    }
    return next.startCall(call, headers);
  }
}
