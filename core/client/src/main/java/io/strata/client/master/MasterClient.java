package io.strata.client.master;

import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.StreamObserver;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.GrpcErrors;
import io.strata.common.error.StrataException;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterStub;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.JournalMasterGrpc.JournalMasterBlockingStub;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.LoadMasterGrpc.LoadMasterBlockingStub;
import io.strata.proto.PersistMasterGrpc;
import io.strata.proto.PersistMasterGrpc.PersistMasterBlockingStub;
import io.strata.proto.UpgradeMasterGrpc;
import io.strata.proto.UpgradeMasterGrpc.UpgradeMasterBlockingStub;
import io.strata.proto.WatchChangesRequest;
import io.strata.proto.WatchChangesResponse;
import java.io.Closeable;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's connection to the master: plaintext gRPC to the master at {@code
 * strata.master.hostname:strata.master.rpc.port}, or to the leader among the masters of {@code
 * strata.master.addresses}; a deadline of {@code strata.client.rpc.timeout} on every call; and
 * retries with exponential back-off while no master serves.
 *
 * <p>UNAVAILABLE is retried: it means the call never reached a master that could act on it (the
 * master is down, or it is a follower, which names the leader in a trailer). With several masters a
 * call goes to the leader this client knows, follows a follower to the leader it names, or else
 * tries the next master; a deadline moves it on too, since a paused leader answers nothing, and the
 * call id every attempt repeats lets the master apply a mutating call once (see {@link
 * CallIdHeaders}). Waits come after a round of attempts (one per master). When the budget -- {@code
 * strata.client.master.retry.max.duration}, with several masters at least {@code
 * strata.client.master.failover.timeout} -- is spent, the call fails with {@link
 * ErrorCode#UNAVAILABLE} and a message that names the masters and how to start or find them. Every
 * other failure becomes a {@link StrataException} through {@link GrpcErrors#fromStatus}. The
 * master's services (file system, load jobs, journal) share the connections and these rules.
 * Thread-safe.
 */
public final class MasterClient implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(MasterClient.class);

  /** Block lists of very large files exceed gRPC's 4 MiB default message size. */
  private static final int MAX_MESSAGE_BYTES = 64 << 20;

  private static final String JOURNAL_UNIMPLEMENTED =
      "does not serve the journal's quorum and"
          + " backups (it is of an older release): upgrade it";
  private static final String FILE_SYSTEM_UNIMPLEMENTED =
      "does not know this call (it is of an older release): upgrade it";
  private static final String UPGRADE_UNIMPLEMENTED =
      "runs a release without upgrade"
          + " finalization (0.1.0): upgrade every master first (docs/rolling-upgrade.md)";

  private final MasterAddresses configured;
  private final MasterChannels channels;
  private final FileSystemMasterBlockingStub stub;
  private final FileSystemMasterStub asyncStub;
  private final Duration rpcTimeout;
  private final Duration listTimeout;
  private final Duration retryBudget;
  private final Duration baseSleep;
  private final Duration maxSleep;

  /** Longest back-off between rounds over several masters (see the constructor). */
  private static final Duration SEVERAL_MAX_SLEEP = Duration.ofMillis(250);

  public MasterClient(StrataConfig conf) {
    this.configured = MasterAddresses.of(conf);
    this.channels = new MasterChannels(configured.all(), MAX_MESSAGE_BYTES);
    this.stub = FileSystemMasterGrpc.newBlockingStub(channels.leaderChannel());
    this.asyncStub = FileSystemMasterGrpc.newStub(channels.leaderChannel());
    this.rpcTimeout = conf.getDuration(ClientKeys.RPC_TIMEOUT);
    this.listTimeout = conf.getDuration(ClientKeys.LIST_TIMEOUT);
    Duration retry = conf.getDuration(ClientKeys.MASTER_RETRY_DURATION);
    Duration failover = conf.getDuration(ClientKeys.MASTER_FAILOVER_TIMEOUT);
    this.retryBudget = configured.several() && failover.compareTo(retry) > 0 ? failover : retry;
    this.baseSleep = conf.getDuration(ClientKeys.MASTER_RETRY_BASE_SLEEP);
    Duration configuredMaxSleep = conf.getDuration(ClientKeys.MASTER_RETRY_MAX_SLEEP);
    // With several masters a lost leader is replaced within about two election timeouts; a
    // back-off grown to seconds would find the new leader long after it serves.
    this.maxSleep =
        configured.several() && configuredMaxSleep.compareTo(SEVERAL_MAX_SLEEP) > 0
            ? SEVERAL_MAX_SLEEP
            : configuredMaxSleep;
  }

  /** The master's address as host:port: with several masters, the one taken for the leader. */
  /** The id this client names its calls with ({@code strata-client-id}). */
  public String clientId() {
    return channels.callIds().clientId();
  }

  public String target() {
    return channels.leader();
  }

  /** The masters this client may call. */
  public MasterAddresses addresses() {
    return configured;
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
   * Runs one unary call with a deadline on the leading master, retrying while no master serves it.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T call(Function<FileSystemMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(FileSystemMasterGrpc::newBlockingStub, body);
    } catch (StatusRuntimeException e) {
      throw GrpcErrors.fromStatus(e);
    }
  }

  /**
   * Runs one unary call of the load-job service, as {@link #call} does: a deadline, retries while
   * no master serves it, every other failure a {@link StrataException} (NOT_FOUND for a path that
   * never had a job). A master without the service (an older release) fails with {@link
   * ErrorCode#UNIMPLEMENTED} and a message that says so.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T callLoad(Function<LoadMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(LoadMasterGrpc::newBlockingStub, body);
    } catch (StatusRuntimeException e) {
      throw failure(
          e,
          target(),
          "does not run load jobs (it is of an older release): upgrade"
              + " it, or load metadata only with `strata fs load --metadata-only`");
    }
  }

  /**
   * Runs one unary call of the persist service, as {@link #call} does. A master without the service
   * (an older release) fails with {@link ErrorCode#UNIMPLEMENTED} and a message that says so.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T callPersist(Function<PersistMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(PersistMasterGrpc::newBlockingStub, body);
    } catch (StatusRuntimeException e) {
      throw failure(
          e,
          target(),
          "does not persist files (it is of an older release, without"
              + " write type ASYNC_THROUGH): upgrade it");
    }
  }

  /**
   * Runs one unary call of the journal service (quorum, leadership, backups) on the leading master,
   * as {@link #call} does. A master without the service fails with {@link ErrorCode#UNIMPLEMENTED}
   * and a message that says so.
   *
   * @param body issues the call on the stub it is given (which carries the deadline)
   */
  public <T> T callJournal(Function<JournalMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(JournalMasterGrpc::newBlockingStub, body);
    } catch (StatusRuntimeException e) {
      throw failure(e, target(), JOURNAL_UNIMPLEMENTED);
    }
  }

  /**
   * Runs one call of the journal service on the master at {@code address}, whether or not it leads,
   * once, with the deadline of {@link #call} -- for asking every master for its view of the quorum.
   * A follower refuses what only the leader serves with UNAVAILABLE.
   *
   * @param address a master's gRPC address, host:port
   * @throws StrataException naming {@code address} when it cannot be reached or refuses
   */
  public <T> T callJournalAt(String address, Function<JournalMasterBlockingStub, T> body)
      throws StrataException {
    return callAt(address, JournalMasterGrpc::newBlockingStub, body, JOURNAL_UNIMPLEMENTED);
  }

  /**
   * Runs one call of the file-system service on the master at {@code address}, whether or not it
   * leads, as {@link #callJournalAt} does -- for the calls every master answers (GetMasterInfo).
   */
  public <T> T callFileSystemAt(String address, Function<FileSystemMasterBlockingStub, T> body)
      throws StrataException {
    return callAt(address, FileSystemMasterGrpc::newBlockingStub, body, FILE_SYSTEM_UNIMPLEMENTED);
  }

  /**
   * Runs one unary call of the upgrade service on the leading master, as {@link #call} does. A
   * master of release 0.1.0 has no such service: that fails with {@link ErrorCode#UNIMPLEMENTED}
   * and a message that says so.
   */
  public <T> T callUpgrade(Function<UpgradeMasterBlockingStub, T> body) throws StrataException {
    try {
      return callOn(UpgradeMasterGrpc::newBlockingStub, body);
    } catch (StatusRuntimeException e) {
      if (!methodNotFound(e)) {
        throw failure(e, target(), UPGRADE_UNIMPLEMENTED);
      }
      // A follower of the previous release has no such service, so it cannot redirect the
      // call as followers do: ask it which master leads, and call that one.
      String answered = target();
      String leader =
          callJournal(
                  q -> q.getQuorumInfo(io.strata.proto.GetQuorumInfoRequest.getDefaultInstance()))
              .getLeaderAddress();
      if (leader.isEmpty() || leader.equals(answered)) {
        throw failure(e, answered, UPGRADE_UNIMPLEMENTED);
      }
      return callAt(leader, UpgradeMasterGrpc::newBlockingStub, body, UPGRADE_UNIMPLEMENTED);
    }
  }

  private static boolean methodNotFound(StatusRuntimeException e) {
    String description = e.getStatus().getDescription();
    return e.getStatus().getCode() == Status.Code.UNIMPLEMENTED
        && description != null
        && description.startsWith("Method not found");
  }

  private <S extends AbstractStub<S>, T> T callAt(
      String address, Function<Channel, S> stubOn, Function<S, T> body, String olderMaster)
      throws StrataException {
    if (!MasterAddresses.isHostPort(address)) {
      throw StrataException.invalidArgument("Not a master address (host:port): " + address);
    }
    S at =
        stubOn
            .apply(channels.channel(address))
            .withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS);
    try {
      return body.apply(at);
    } catch (StatusRuntimeException e) {
      Status.Code code = e.getStatus().getCode();
      if (code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED) {
        throw new StrataException(
            GrpcErrors.fromStatus(e).code(),
            "The Strata master at "
                + address
                + " did not serve the call: "
                + describe(e.getStatus()),
            e);
      }
      throw failure(e, address, olderMaster);
    }
  }

  /**
   * The exception of a failed call of a service that an older master may lack: gRPC's own answer
   * for a missing method becomes UNIMPLEMENTED with {@code olderMaster} as the reason.
   */
  private static StrataException failure(
      StatusRuntimeException e, String address, String olderMaster) {
    // gRPC's own answer for a service the server does not have, as opposed to a master that
    // refuses one call for a reason of its own.
    if (methodNotFound(e)) {
      return new StrataException(
          ErrorCode.UNIMPLEMENTED, "The Strata master at " + address + " " + olderMaster, e);
    }
    return GrpcErrors.fromStatus(e);
  }

  /**
   * Runs {@code body} on the leader, moving on and retrying as the class describes; throws a
   * failure that is not retried as it came.
   */
  private <S extends AbstractStub<S>, T> T callOn(Function<Channel, S> stubOn, Function<S, T> body)
      throws StrataException {
    try {
      return channels.call(stubOn, body, rpcTimeout, newBackoff());
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw interrupted(ie);
    } catch (StatusRuntimeException e) {
      if (channels.retryable(e)) {
        throw unreachable(e);
      }
      throw e;
    }
  }

  /**
   * The retry rules for one server stream read from the leader: {@link StreamRetries#open} opens it
   * with the deadline of a listing, {@link StreamRetries#afterFailure} decides on a failure.
   */
  public StreamRetries streamRetries() {
    return new StreamRetries(this);
  }

  /** The leader's stub with the deadline of one streamed listing or metadata load. */
  FileSystemMasterBlockingStub listingStub() {
    return stub.withDeadlineAfter(listTimeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Opens the master's long-lived stream of namespace changes on the leader, without a deadline.
   * After the stream broke, the caller reports the failure through {@link #watchBroke} before it
   * opens the stream again, so that the new one goes to the master that can serve it.
   */
  public void watchChanges(
      WatchChangesRequest request, StreamObserver<WatchChangesResponse> observer) {
    // A master that failed the last stream may be back: try it at once rather than after
    // gRPC's own reconnect back-off.
    channels.resetConnectBackoff();
    asyncStub.watchChanges(request, observer);
  }

  /**
   * After a long-lived stream broke: moves on from its master as a failed call does -- to the
   * leader a follower named, or else to the next master. A stream that was cancelled for its
   * silence ({@code silent}) passes its master over as a paused one would be.
   */
  public void watchBroke(Throwable failure, boolean silent) {
    channels.moveOn(
        silent
            ? Status.DEADLINE_EXCEEDED
                .withDescription(Status.fromThrowable(failure).getDescription())
                .asRuntimeException(Status.trailersFromThrowable(failure))
            : failure);
  }

  /** A fresh retry budget for one call. */
  Backoff newBackoff() {
    return new Backoff(baseSleep, maxSleep, retryBudget);
  }

  /**
   * After a call failed with UNAVAILABLE: moves on from its master (see {@link #watchBroke}), then
   * waits before retrying when a round of masters has failed, or throws the final error when the
   * budget is spent.
   */
  void waitToRetry(Backoff backoff, StatusRuntimeException e) throws StrataException {
    channels.moveOn(e);
    boolean again;
    try {
      again = backoff.afterFailure(channels.size());
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw interrupted(ie);
    }
    if (!again) {
      throw unreachable(e);
    }
    LOG.debug("Master unavailable ({}); retrying on {}", e.getStatus().getDescription(), target());
    channels.resetConnectBackoff();
  }

  private StrataException interrupted(InterruptedException ie) {
    return new StrataException(
        ErrorCode.UNAVAILABLE,
        "Interrupted while waiting for the Strata master at " + target(),
        ie);
  }

  /** The error of masters that could not serve a call for the whole retry budget. */
  private StrataException unreachable(StatusRuntimeException cause) {
    if (!configured.listed()) {
      if (GrpcErrors.served(cause)) {
        // The master answered, and it is something behind it (an under store, its journal)
        // that is unavailable: its own message says what. (With several masters the message
        // below gives each one's last answer.)
        return GrpcErrors.fromStatus(cause);
      }
      return new StrataException(
          ErrorCode.UNAVAILABLE,
          "Cannot reach the Strata master at "
              + configured.all().get(0)
              + " (tried for "
              + format(retryBudget)
              + "). Start it with"
              + " `strata master start` or `strata local up`, or set strata.master.hostname /"
              + " strata.master.rpc.port (conf/strata-site.properties, STRATA_MASTER_HOSTNAME, or"
              + " -Dstrata.master.hostname)",
          cause);
    }
    StringBuilder tried = new StringBuilder();
    Map<String, String> failures = channels.lastFailures();
    for (String address : channels.addresses()) {
      tried.append(tried.length() == 0 ? "" : ", ").append(address);
      String failure = failures.get(address);
      if (failure != null) {
        tried.append(" [").append(failure).append(']');
      }
    }
    String which =
        channels.size() == 1
            ? "the Strata master at " + channels.leader()
            : "a leading Strata master among " + String.join(", ", channels.addresses());
    return new StrataException(
        ErrorCode.UNAVAILABLE,
        "Cannot reach "
            + which
            + " (tried for "
            + format(retryBudget)
            + "; "
            + tried
            + "). Start the masters with `strata master start`"
            + " and let them elect a leader, or set strata.master.addresses to every master's"
            + " host:port (conf/strata-site.properties, STRATA_MASTER_ADDRESSES, or"
            + " -Dstrata.master.addresses); strata.client.master.failover.timeout sets how long a"
            + " call looks for the leader",
        cause);
  }

  private static String describe(Status status) {
    return GrpcErrors.reason(status);
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
    channels.close();
  }
}
