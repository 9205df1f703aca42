package io.strata.client.master;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.Context;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.strata.common.error.GrpcErrors;
import io.strata.common.rpc.MasterHeaders;
import io.strata.common.rpc.VersionHeaders;
import java.io.Closeable;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections to the masters, and which of them this process takes for the leader. There is one
 * plaintext channel per master address, opened by the first call to it; every call carries the
 * headers of {@link CallIdHeaders}. Calls through {@link #leaderChannel()} go to the leader of the
 * moment, so a stream opened again after a fail-over reaches the new one.
 *
 * <p>When a call fails because its master cannot serve it, {@link #moveOn} picks the next leader:
 * the master a follower names in its {@code strata-leader} trailer (added to the list when it is
 * not in it), else the next address in order. A deadline counts as such a failure only with several
 * masters (a paused leader answers nothing); any other status says the master did serve the call.
 * Threads that saw the same master fail move the leader once, not once each. {@link #call} is the
 * retry loop of a unary call built on this. Thread-safe.
 */
public final class MasterChannels implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterChannels.class);

  /** The trailer in which a master that is not the leader names the leader's gRPC address. */
  /**
   * Put on this side into the trailers of every failed call: the master the call went to, so that a
   * stream's failure says whom to move on from. Never sent.
   */
  static final Metadata.Key<String> CALLED_MASTER =
      Metadata.Key.of("strata-called-master", Metadata.ASCII_STRING_MARSHALLER);

  private record Connection(ManagedChannel managed, Channel channel) {}

  private final CopyOnWriteArrayList<String> addresses;
  private final AtomicReference<String> leader;
  private final Map<String, Connection> connections = new ConcurrentHashMap<>();
  private final Map<String, String> lastFailures = new ConcurrentHashMap<>();
  private final CallIdHeaders callIds = new CallIdHeaders();
  private final int maxInboundMessageBytes;
  private final Channel leaderChannel = new LeaderChannel();
  private final ChannelEventLoops loops;
  private volatile boolean closed;

  /**
   * @param addresses every master's gRPC address as host:port; the first is tried first
   * @param maxInboundMessageBytes the largest answer a call may receive
   */
  public MasterChannels(List<String> addresses, int maxInboundMessageBytes) {
    if (addresses.isEmpty()) {
      throw new IllegalArgumentException("no master address");
    }
    this.addresses = new CopyOnWriteArrayList<>(addresses);
    this.leader = new AtomicReference<>(addresses.get(0));
    this.maxInboundMessageBytes = maxInboundMessageBytes;
    // A channel runs on one loop; a loop per master keeps them apart, up to a few.
    this.loops = new ChannelEventLoops("strata-master-channel", Math.min(4, addresses.size()));
  }

  /** Every master known: the configured ones, then any a follower named as the leader. */
  public List<String> addresses() {
    return List.copyOf(addresses);
  }

  /** How many masters a call may try before it has asked them all once. */
  public int size() {
    return addresses.size();
  }

  /** The master taken for the leader now. */
  public String leader() {
    return leader.get();
  }

  /** The call ids of this process's calls. */
  public CallIdHeaders callIds() {
    return callIds;
  }

  /** A channel whose every new call goes to the leader of that moment. */
  public Channel leaderChannel() {
    return leaderChannel;
  }

  /** The channel to one master, whether or not it leads. */
  public Channel channel(String address) {
    return connections.computeIfAbsent(address, this::connect).channel();
  }

  private Connection connect(String address) {
    ManagedChannelBuilder<?> builder =
        loops
            .forAddress(MasterAddresses.host(address), MasterAddresses.port(address))
            .usePlaintext()
            .maxInboundMessageSize(maxInboundMessageBytes);
    if (size() > 1) {
      // A paused or cut-off leader answers nothing, not even a reset: pings find it within a
      // few seconds, so calls to it fail over instead of waiting out their deadline. Masters
      // permit pings this often.
      builder
          .keepAliveTime(2, java.util.concurrent.TimeUnit.SECONDS)
          .keepAliveTimeout(3, java.util.concurrent.TimeUnit.SECONDS)
          .keepAliveWithoutCalls(true);
    }
    ManagedChannel managed = builder.build();
    if (closed) {
      // Calls after close fail as calls on a closed channel do, instead of reconnecting.
      managed.shutdownNow();
    }
    return new Connection(
        managed,
        ClientInterceptors.intercept(
            managed, callIds, new CalledMasterTag(address), VersionHeaders.clientInterceptor()));
  }

  /**
   * Whether a failed unary call may be tried again, on the same master or another: UNAVAILABLE
   * means no master acted on it; after a deadline the master may have, but the repeated call id
   * lets it recognise the retry. A caller's own deadline or cancellation is never retried.
   */
  public boolean retryable(StatusRuntimeException e) {
    Status.Code code = e.getStatus().getCode();
    // A deadline a master itself reports (its under store did not answer in time) came from a
    // master that serves: another master would say the same.
    return code == Status.Code.UNAVAILABLE
        || (code == Status.Code.DEADLINE_EXCEEDED
            && size() > 1
            && !GrpcErrors.served(e)
            && !Context.current().isCancelled());
  }

  /**
   * Moves the leader on from the master a failed call or stream went to (read from the failure's
   * trailers; the current leader when they do not say).
   */
  public void moveOn(Throwable failure) {
    Metadata trailers = Status.trailersFromThrowable(failure);
    String from = trailers == null ? null : trailers.get(CALLED_MASTER);
    moveOn(from == null ? leader() : from, failure);
  }

  /**
   * Moves the leader on from {@code from} after it failed a call: to the leader it named, else to
   * the next master. Does nothing for a status that a master serving the call gives, or when
   * another thread already moved on from {@code from}.
   */
  public void moveOn(String from, Throwable failure) {
    Status status = Status.fromThrowable(failure);
    boolean deadline =
        status.getCode() == Status.Code.DEADLINE_EXCEEDED
            && !(failure instanceof StatusRuntimeException e && GrpcErrors.served(e));
    if (status.getCode() != Status.Code.UNAVAILABLE && !(deadline && size() > 1)) {
      return;
    }
    lastFailures.put(from, GrpcErrors.reason(status));
    Metadata trailers = Status.trailersFromThrowable(failure);
    String named = deadline || trailers == null ? null : trailers.get(MasterHeaders.LEADER);
    if (named != null) {
      named = named.trim();
    }
    if (named != null && !named.equals(from) && MasterAddresses.isHostPort(named)) {
      if (addresses.addIfAbsent(named)) {
        LOG.info(
            "The master at {} names {} as the leader, which is not among {}; adding it",
            from,
            named,
            addresses);
      }
      if (replaceLeader(from, named)) {
        LOG.info(
            "The master at {} is not the leader; following it to the leader at {}", from, named);
      }
      return;
    }
    int i = addresses.indexOf(from);
    if (i < 0) {
      return;
    }
    String next = addresses.get((i + 1) % addresses.size());
    if (!next.equals(from) && replaceLeader(from, next)) {
      LOG.debug(
          "The master at {} cannot serve ({}); trying {}", from, lastFailures.get(from), next);
    }
  }

  /** Makes {@code to} the leader if {@code from} still is (compared by value). */
  private boolean replaceLeader(String from, String to) {
    String current = leader.get();
    return current.equals(from) && leader.compareAndSet(current, to);
  }

  /**
   * Runs one unary call on the leader, and again on the next leader while it fails in a way {@link
   * #retryable} allows, every attempt with the same call id and its own deadline; {@code backoff}
   * says when to wait and when to stop.
   *
   * @param stubOn makes the stub of the service on a master's channel
   * @param body issues the call on the stub it is given
   * @throws StatusRuntimeException the failure that is not retried, or the last one when the
   *     backoff's budget is spent
   */
  public <S extends AbstractStub<S>, T> T call(
      Function<Channel, S> stubOn, Function<S, T> body, Duration deadline, Backoff backoff)
      throws InterruptedException {
    long callId = callIds.next();
    int attempt = 0;
    while (true) {
      String address = leader();
      attempt++;
      S stub =
          stubOn
              .apply(channel(address))
              .withOption(CallIdHeaders.CALL_ID, callId)
              .withOption(CallIdHeaders.ATTEMPT, attempt)
              .withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS);
      try {
        return body.apply(stub);
      } catch (StatusRuntimeException e) {
        if (!retryable(e)) {
          throw e;
        }
        moveOn(address, e);
        if (!backoff.afterFailure(size())) {
          throw e;
        }
        resetConnectBackoff();
      }
    }
  }

  /**
   * How each master last failed a call, in the order of {@link #addresses()}, for the message of a
   * call that gave up; a master that never failed is absent.
   */
  public Map<String, String> lastFailures() {
    Map<String, String> failures = new LinkedHashMap<>();
    for (String address : addresses) {
      String failure = lastFailures.get(address);
      if (failure != null) {
        failures.put(address, failure);
      }
    }
    return failures;
  }

  /**
   * Makes every channel try its master again at once. A channel's own reconnect back-off can be
   * longer than a caller's; without this a master that came back would not be tried until the
   * channel's timer fired.
   */
  public void resetConnectBackoff() {
    connections.values().forEach(c -> c.managed().resetConnectBackoff());
  }

  @Override
  public void close() {
    closed = true;
    connections.values().forEach(c -> c.managed().shutdownNow());
    try {
      for (Connection c : connections.values()) {
        c.managed().awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    loops.close();
  }

  /** Sends each new call to the leader of the moment. */
  private final class LeaderChannel extends Channel {
    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions callOptions) {
      return channel(leader()).newCall(method, callOptions);
    }

    @Override
    public String authority() {
      return channel(leader()).authority();
    }
  }

  /** Writes {@link #CALLED_MASTER} into the trailers of the calls to one master that fail. */
  private static final class CalledMasterTag implements ClientInterceptor {
    private final String address;

    CalledMasterTag(String address) {
      this.address = address;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions callOptions, Channel next) {
      return new SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                  if (!status.isOk()) {
                    trailers.put(CALLED_MASTER, address);
                  }
                  super.onClose(status, trailers);
                }
              },
              headers);
        }
      };
    }
  }
}
