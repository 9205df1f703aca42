package io.strata.master;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.proto.BlockReport;
import io.strata.proto.LoadBlockOutcome;
import io.strata.proto.LoadBlockResult;
import io.strata.proto.LoadBlockTask;
import io.strata.proto.LoadBlocksRequest;
import io.strata.proto.LoadBlocksResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerServiceGrpc;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A stand-in worker for tests of load jobs: a real gRPC server on 127.0.0.1 that answers {@code
 * LoadBlocks} as its script says, remembers every task it was sent, and can hold its answers until
 * the test releases them. It registers with a master under its own port, so a master sends it real
 * calls.
 */
final class ScriptedWorker implements AutoCloseable {
  /** The outcome of a task; {@code attempt} counts this worker's requests of the block from 1. */
  interface Script {
    LoadBlockOutcome outcome(LoadBlockTask task, int attempt);
  }

  static final Script ALWAYS_LOADED = (task, attempt) -> LoadBlockOutcome.LOAD_BLOCK_LOADED;

  private final Server server;
  private final Script script;
  private final List<LoadBlockTask> received = new ArrayList<>();
  private final Map<Long, Integer> attempts = new HashMap<>();
  private final Map<Long, Long> cached = new LinkedHashMap<>();
  private int holdAfter = Integer.MAX_VALUE;
  private int callsToCancel;
  private CountDownLatch gate = new CountDownLatch(0);

  ScriptedWorker(Script script) throws IOException {
    this.script = script;
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(
                new WorkerServiceGrpc.WorkerServiceImplBase() {
                  @Override
                  public void loadBlocks(
                      LoadBlocksRequest request, StreamObserver<LoadBlocksResponse> observer) {
                    answer(request, observer);
                  }
                })
            .build()
            .start();
  }

  ScriptedWorker() throws IOException {
    this(ALWAYS_LOADED);
  }

  int port() {
    return server.getPort();
  }

  /** Holds the answer of every task past the first {@code tasks} received until released. */
  synchronized void holdAfter(int tasks) {
    holdAfter = tasks;
    if (gate.getCount() == 0) {
      gate = new CountDownLatch(1);
    }
  }

  /** Answers every held task and stops holding. */
  synchronized void release() {
    holdAfter = Integer.MAX_VALUE;
    gate.countDown();
  }

  /** Answers the next {@code calls} calls with CANCELLED, as a stream reset on the way would. */
  synchronized void cancelCalls(int calls) {
    callsToCancel = calls;
  }

  /** Every task received, in order of arrival. */
  synchronized List<LoadBlockTask> received() {
    return new ArrayList<>(received);
  }

  synchronized int receivedCount() {
    return received.size();
  }

  /** How many times each block was sent here. */
  synchronized Map<Long, Integer> requestsByBlock() {
    return new HashMap<>(attempts);
  }

  /** Registers with a master, reporting every block answered as loaded; returns the id. */
  long register(TestMaster master) {
    List<BlockReport> blocks = new ArrayList<>();
    synchronized (this) {
      cached.forEach(
          (id, length) ->
              blocks.add(
                  BlockReport.newBuilder()
                      .setBlockId(id)
                      .setLength(length)
                      .setTier("MEM")
                      .build()));
    }
    return master
        .blocks
        .registerWorker(
            RegisterWorkerRequest.newBuilder()
                .setAddress(
                    WorkerAddress.newBuilder()
                        .setHost("127.0.0.1")
                        .setRpcPort(port())
                        .setDataPort(port())
                        .setWebPort(1))
                .addTiers(TierUsage.newBuilder().setAlias("MEM").setCapacityBytes(1L << 34))
                .addAllBlocks(blocks)
                .setRelease("test")
                .setRpcProtocolVersion(1)
                .build())
        .getWorkerId();
  }

  private void answer(LoadBlocksRequest request, StreamObserver<LoadBlocksResponse> observer) {
    List<Integer> tries = new ArrayList<>();
    CountDownLatch wait = null;
    synchronized (this) {
      for (LoadBlockTask t : request.getTasksList()) {
        received.add(t);
        tries.add(attempts.merge(t.getBlockId(), 1, Integer::sum));
      }
      if (callsToCancel > 0) {
        callsToCancel--;
        observer.onError(
            Status.CANCELLED.withDescription("stream reset by the test").asRuntimeException());
        return;
      }
      if (received.size() > holdAfter) {
        wait = gate;
      }
    }
    if (wait != null) {
      try {
        wait.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    LoadBlocksResponse.Builder response = LoadBlocksResponse.newBuilder();
    for (int i = 0; i < request.getTasksCount(); i++) {
      LoadBlockTask t = request.getTasks(i);
      LoadBlockOutcome outcome = script.outcome(t, tries.get(i));
      LoadBlockResult.Builder r =
          LoadBlockResult.newBuilder().setBlockId(t.getBlockId()).setOutcome(outcome);
      switch (outcome) {
        case LOAD_BLOCK_LOADED, LOAD_BLOCK_ALREADY_CACHED -> {
          r.setTier("MEM");
          synchronized (this) {
            cached.put(t.getBlockId(), t.getBlockLength());
          }
        }
        case LOAD_BLOCK_NOT_FOUND -> r.setMessage("no such file: " + t.getUfsPath());
        default -> r.setMessage("scripted " + outcome + " of block " + t.getBlockId());
      }
      response.addResults(r);
    }
    try {
      observer.onNext(response.build());
      observer.onCompleted();
    } catch (StatusRuntimeException e) {
      // The master gave up on the call (it stopped); the answer has nowhere to go.
    }
  }

  /** Stops serving at once, as a killed worker would; held calls fail on the master's side. */
  void kill() throws InterruptedException {
    server.shutdownNow();
    server.awaitTermination(5, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    release();
    kill();
  }
}
