package io.strata.client.master;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.strata.common.rpc.MasterHeaders;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Names every call to a master with two request headers: {@code strata-client-id}, random and fixed
 * for the life of this instance, and {@code strata-call-id}, a number unique within it. A master
 * that sees a mutating call again (a retry after a fail-over, or after an answer that was lost)
 * recognises the pair and does not apply the call twice.
 *
 * <p>A retry must repeat the call id of the attempt before it, so the id belongs to the logical
 * call: a retry loop takes one from {@link #next()} and puts it on every attempt's call options
 * under {@link #CALL_ID}, and the attempt's number under {@link #ATTEMPT} (sent as {@code
 * strata-call-attempt} from the second attempt on). A call without that option (a stream, a
 * one-off) gets a fresh id. Thread-safe.
 */
public final class CallIdHeaders implements ClientInterceptor {
  /** The call id of the logical call an attempt belongs to. */
  public static final CallOptions.Key<Long> CALL_ID = CallOptions.Key.create("strata-call-id");

  /** Which attempt of its logical call a call is, from 1; sent only from the second on. */
  public static final CallOptions.Key<Integer> ATTEMPT =
      CallOptions.Key.create("strata-call-attempt");

  private final String clientId = UUID.randomUUID().toString();
  private final AtomicLong lastCallId = new AtomicLong();

  /** The id of this client in every call's headers. */
  public String clientId() {
    return clientId;
  }

  /** A call id not used before by this client. */
  public long next() {
    return lastCallId.incrementAndGet();
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions callOptions, Channel next) {
    Long given = callOptions.getOption(CALL_ID);
    long callId = given != null ? given : next();
    Integer attempt = callOptions.getOption(ATTEMPT);
    return new SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
      @Override
      public void start(Listener<R> responseListener, Metadata headers) {
        headers.put(MasterHeaders.CLIENT_ID, clientId);
        headers.put(MasterHeaders.CALL_ID, Long.toString(callId));
        if (attempt != null && attempt > 1) {
          headers.put(MasterHeaders.CALL_ATTEMPT, Integer.toString(attempt));
        }
        super.start(responseListener, headers);
      }
    };
  }
}
