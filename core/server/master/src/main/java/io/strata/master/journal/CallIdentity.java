package io.strata.master.journal;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.strata.common.rpc.MasterHeaders;

/**
 * Which client call a change comes from: the {@code strata-client-id} and {@code strata-call-id}
 * headers clients send (the same on every retry of one call). The journal records them with each
 * batch so that a call retried after a fail-over is recognised.
 */
public record CallIdentity(String clientId, long callId) {
  private static final Context.Key<CallIdentity> KEY = Context.key("strata-call-identity");
  private static final Context.Key<Integer> ATTEMPT = Context.key("strata-call-attempt");

  /** The identity of the call being served on this thread, or null. */
  public static CallIdentity current() {
    return KEY.get();
  }

  /**
   * Which attempt of its call the call being served on this thread is, from 1 (1 when the client
   * does not say, as clients of older releases do not).
   */
  public static int currentAttempt() {
    Integer a = ATTEMPT.get();
    return a == null ? 1 : a;
  }

  /** Reads the headers into the call's context. */
  public static ServerInterceptor interceptor() {
    return new ServerInterceptor() {
      @Override
      public <Q, A> ServerCall.Listener<Q> interceptCall(
          ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
        CallIdentity id = from(headers);
        if (id == null) {
          return next.startCall(call, headers);
        }
        return Contexts.interceptCall(
            Context.current().withValues(KEY, id, ATTEMPT, attempt(headers)), call, headers, next);
      }
    };
  }

  private static int attempt(Metadata headers) {
    String a = headers.get(MasterHeaders.CALL_ATTEMPT);
    if (a == null) {
      return 1;
    }
    try {
      return Math.max(1, Integer.parseInt(a));
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  static CallIdentity from(Metadata headers) {
    String client = headers.get(MasterHeaders.CLIENT_ID);
    String call = headers.get(MasterHeaders.CALL_ID);
    if (client == null || call == null || client.isEmpty()) {
      return null;
    }
    try {
      return new CallIdentity(client, Long.parseLong(call));
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
