package io.strata.worker.master;

import io.grpc.Channel;
import io.grpc.Status;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.StreamObserver;
import io.strata.client.master.Backoff;
import io.strata.client.master.MasterAddresses;
import io.strata.client.master.MasterChannels;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.BlockMasterWorkerGrpc.BlockMasterWorkerBlockingStub;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FileSystemMasterGrpc.FileSystemMasterBlockingStub;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The worker's gRPC connection to the master, or to the leader among several masters (the client's
 * {@link MasterChannels}: one channel per master, requests named by call ids, the leader followed
 * through redirects). Every call carries the configured deadline, so a master that hangs can delay
 * the worker's calls but never block them forever.
 *
 * <p>A blocking call makes one round: when its master cannot serve it (down, paused, or a
 * follower), it is tried on the leader the follower names or on the next master, at most once per
 * master, and the last failure is thrown. The worker's own loops (registration, heartbeats) wait
 * between rounds, so no call here sleeps. Thread-safe.
 */
public final class WorkerMasterClient implements AutoCloseable {
  private final MasterChannels channels;
  private final Duration timeout;

  /** A client of the one master at host:port. */
  public WorkerMasterClient(String host, int port, Duration timeout) {
    this(MasterAddresses.one(host, port), timeout);
  }

  public WorkerMasterClient(MasterAddresses masters, Duration timeout) {
    this.channels = new MasterChannels(masters.all(), 64 << 20);
    this.timeout = timeout;
  }

  /** host:port of the master taken for the leader, for messages. */
  public String address() {
    return channels.leader();
  }

  /** The master or masters this worker calls, for messages. */
  public String masters() {
    return channels.size() == 1
        ? "the master at " + channels.leader()
        : "the masters at " + String.join(", ", channels.addresses());
  }

  /** Runs one call of the worker service on the leader, in one round (see the class). */
  public <T> T callBlockMaster(Function<BlockMasterWorkerBlockingStub, T> body) {
    return oneRound(BlockMasterWorkerGrpc::newBlockingStub, body);
  }

  /** Runs one call of the file-system service on the leader, in one round (see the class). */
  public <T> T callFileSystem(Function<FileSystemMasterBlockingStub, T> body) {
    return oneRound(FileSystemMasterGrpc::newBlockingStub, body);
  }

  private <S extends AbstractStub<S>, T> T oneRound(
      Function<Channel, S> stubOn, Function<S, T> body) {
    try {
      // No budget: the round ends the call, and the caller waits before the next.
      return channels.call(
          stubOn, body, timeout, new Backoff(Duration.ZERO, Duration.ZERO, Duration.ZERO));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Status.CANCELLED.withDescription("interrupted").withCause(e).asRuntimeException();
    }
  }

  /**
   * Sends one fire-and-forget call of the worker service to the leader, with the deadline of a
   * blocking call. A failure first moves this client on, as a blocking call's does -- to the leader
   * a follower named, or else to the next master -- so that the next call goes where it should;
   * then {@code onFailure} hears it. An answer is not waited for, nor handed on.
   *
   * @param call issues the call on the stub it is given, with the observer it is given
   */
  public <R> void send(
      BiConsumer<BlockMasterWorkerGrpc.BlockMasterWorkerStub, StreamObserver<R>> call,
      Consumer<Throwable> onFailure) {
    call.accept(
        BlockMasterWorkerGrpc.newStub(channels.leaderChannel())
            .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS),
        new StreamObserver<R>() {
          @Override
          public void onNext(R value) {}

          @Override
          public void onError(Throwable t) {
            channels.moveOn(t);
            onFailure.accept(t);
          }

          @Override
          public void onCompleted() {}
        });
  }

  @Override
  public void close() {
    channels.close();
  }
}
