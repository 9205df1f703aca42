package io.strata.client.master;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.LoadMasterGrpc.LoadMasterBlockingStub;
import java.io.Closeable;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's connection to the master: one plaintext gRPC channel to
 * {@code strata.master.hostname:strata.master.rpc.port}, a deadline of
 * {@code strata.client.rpc.timeout} on every call, and retries with exponential back-off while
 * the master is unreachable.
 *
 * <p>Only {@code UNAVAILABLE} is retried: it means the call never reached a master that could
 * act on it, so retrying is safe for every call, idempotent or not. When the retry budget
 * ({@code strata.client.master.retry.max.duration}) is spent the call fails with
 * {@link ErrorCode#UNAVAILABLE} and a message that says how to start or find the master. Every
 * other failure becomes a {@link StrataException} through {@link GrpcErrors#fromStatus}.
 * The master's services (file system, load jobs) share the channel and these rules.
 * Thread-safe.
 */
public final class MasterClient implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterClient.class);
  /** Block lists of very large files exceed gRPC's 4 MiB default message size. */
  private static final int MAX_MESSAGE_BYTES = 64 << 20;

  private final String target;
  private final ManagedChannel channel;
  private final FileSystemMasterBlockingStub stub;
  private final LoadMasterBlockingStub loadStub;
  private final Duration rpcTimeout;
  private final Duration listTimeout;
  private final Duration retryBudget;
  private final Duration baseSleep;
  private final Duration maxSleep;

  public MasterClient(StrataConfig conf) {
    String host = conf.getString(CommonKeys.MASTER_HOSTNAME);
    int port = conf.getInt(CommonKeys.MASTER_RPC_PORT);
    this.target = host + ":" + port;
    this.channel = ManagedChannelBuilder.forAddress(host, port).usePlaintext()
        .maxInboundMessageSize(MAX_MESSAGE_BYTES).build();
    this.stub = FileSystemMasterGrpc.newBlockingStub(channel);
    this.loadStub = LoadMasterGrpc.newBlockingStub(channel);
    this.rpcTimeout = conf.getDuration(ClientKeys.RPC_TIMEOUT);
    this.listTimeout = conf.getDuration(ClientKeys.LIST_TIMEOUT);
    this.retryBudget = conf.getDuration(ClientKeys.MASTER_RETRY_DURATION);
    this.baseSleep = conf.getDuration(ClientKeys.MASTER_RETRY_BASE_SLEEP);
    this.maxSleep = conf.getDuration(ClientKeys.MASTER_RETRY_MAX_SLEEP);
  }

  /** The master's address as host:port. */
  public String target() {
    return target;
  }

  /** The deadline of one streamed listing or metadata load. */
  public Duration listTimeout() {
    return listTimeout;
  }

  /** The deadline of one control call. */
  public Duration rpcTimeout() {
    return rpcTimeout;
  }

  /**
   * Runs one unary call with a deadline, retrying while the master is unreachable.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T call(Function<FileSystemMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(stub, body);
    } catch (StatusRuntimeException e) {
      throw GrpcErrors.fromStatus(e);
    }
  }

  /**
   * Runs one unary call of the load-job service, as {@link #call} does: a deadline, retries
   * while the master is unreachable, every other failure a {@link StrataException} (NOT_FOUND
   * for a path that never had a job). A master without the service (an older release) fails
   * with {@link ErrorCode#UNIMPLEMENTED} and a message that says so.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T callLoad(Function<LoadMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(loadStub, body);
    } catch (StatusRuntimeException e) {
      String description = e.getStatus().getDescription();
      // gRPC's own answer for a service the server does not have, as opposed to a master
      // that refuses one load for a reason of its own.
      if (e.getStatus().getCode() == Status.Code.UNIMPLEMENTED && description != null
          && description.startsWith("Method not found")) {
        throw new StrataException(ErrorCode.UNIMPLEMENTED, "The Strata master at " + target
            + " does not run load jobs (it is of an older release): upgrade it, or load"
            + " metadata only with `strata fs load --metadata-only`", e);
      }
      throw GrpcErrors.fromStatus(e);
    }
  }

  /** Retries {@code body} on UNAVAILABLE; throws any other failure as it came. */
  private <S extends AbstractStub<S>, T> T callOn(S on, Function<S, T> body)
      throws StrataException {
    Backoff backoff = newBackoff();
    while (true) {
      try {
        return body.apply(
            on.withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS));
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.UNAVAILABLE) {
          throw e;
        }
        waitToRetry(backoff, e);
      }
    }
  }

  /** The stub without a deadline, for streaming calls that manage their own. */
  public FileSystemMasterBlockingStub stub() {
    return stub;
  }

  /** An asynchronous stub without a deadline, for long-lived streams such as WatchChanges. */
  public FileSystemMasterGrpc.FileSystemMasterStub asyncStub() {
    return FileSystemMasterGrpc.newStub(channel);
  }

  /** Makes the channel try the master again at once (after it failed a stream). */
  public void resetConnectBackoff() {
    channel.resetConnectBackoff();
  }

  /** A fresh retry budget for one call. */
  public Backoff newBackoff() {
    return new Backoff(baseSleep, maxSleep, retryBudget);
  }

  /**
   * Waits before retrying a call that failed with UNAVAILABLE, or throws the final error when
   * the budget is spent.
   */
  public void waitToRetry(Backoff backoff, StatusRuntimeException e) throws StrataException {
    boolean again;
    try {
      again = backoff.sleep();
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw new StrataException(ErrorCode.UNAVAILABLE,
          "Interrupted while waiting for the Strata master at " + target, ie);
    }
    if (!again) {
      throw unreachable(e);
    }
    LOG.debug("Master {} unavailable ({}); retrying", target, e.getStatus().getDescription());
    // The channel's own reconnect back-off can be longer than ours; without this reset a
    // master that came back would not be tried until the channel's timer fired.
    channel.resetConnectBackoff();
  }

  /** The error of a master that stayed unreachable for the whole retry budget. */
  public StrataException unreachable(StatusRuntimeException cause) {
    return new StrataException(ErrorCode.UNAVAILABLE, "Cannot reach the Strata master at "
        + target + " (tried for " + format(retryBudget) + "). Start it with `strata master start`"
        + " or `strata local up`, or set strata.master.hostname / strata.master.rpc.port"
        + " (conf/strata-site.properties, STRATA_MASTER_HOSTNAME, or -Dstrata.master.hostname)",
        cause);
  }

  /** A duration in the unit a user would write it in configuration (10s, 500ms, 2min). */
  static String format(Duration d) {
    long ms = d.toMillis();
    if (ms != 0 && ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms != 0 && ms % 60_000 == 0) {
      return ms / 60_000 + "min";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }

  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
