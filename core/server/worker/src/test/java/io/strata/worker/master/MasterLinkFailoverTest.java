package io.strata.worker.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.BindableService;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.master.FakeMasterGroup;
import io.strata.client.master.MasterAddresses;
import io.strata.common.rpc.MasterHeaders;
import io.strata.proto.BlockMasterWorkerGrpc;
import io.strata.proto.HeartbeatRequest;
import io.strata.proto.HeartbeatResponse;
import io.strata.proto.RegisterWorkerRequest;
import io.strata.proto.RegisterWorkerResponse;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerCommand;
import io.strata.worker.block.TierSpec;
import io.strata.worker.block.TieredBlockStore;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker among several masters registers with the leader, and when the leader changes its
 * heartbeat follows the old leader's redirect to the new one, which asks it to register again.
 */
@Timeout(60)
class MasterLinkFailoverTest {
  @TempDir Path dir;

  private final AtomicLong nextWorkerId = new AtomicLong(100);

  /** The worker ids each master knows, by master address. */
  private final Map<String, Set<Long>> known = new ConcurrentHashMap<>();

  private final Map<String, AtomicLong> heartbeats = new ConcurrentHashMap<>();
  private FakeMasterGroup masters;
  private WorkerMasterClient client;
  private TieredBlockStore store;
  private MasterLink link;

  @AfterEach
  void tearDown() throws Exception {
    if (link != null) {
      link.close();
    }
    if (client != null) {
      client.close();
    }
    if (store != null) {
      store.close();
    }
    if (masters != null) {
      masters.close();
    }
  }

  private Set<Long> known(String master) {
    return known.computeIfAbsent(master, m -> ConcurrentHashMap.newKeySet());
  }

  private long heartbeats(String master) {
    return heartbeats.computeIfAbsent(master, m -> new AtomicLong()).get();
  }

  /** A master's worker service that, like a new leader, knows only the workers it registered. */
  private BindableService workerService(java.util.function.Supplier<String> self) {
    return new BlockMasterWorkerGrpc.BlockMasterWorkerImplBase() {
      @Override
      public void registerWorker(
          RegisterWorkerRequest request, StreamObserver<RegisterWorkerResponse> out) {
        long id = nextWorkerId.getAndIncrement();
        known(self.get()).add(id);
        out.onNext(RegisterWorkerResponse.newBuilder().setWorkerId(id).build());
        out.onCompleted();
      }

      @Override
      public void heartbeat(HeartbeatRequest request, StreamObserver<HeartbeatResponse> out) {
        heartbeats.computeIfAbsent(self.get(), m -> new AtomicLong()).incrementAndGet();
        HeartbeatResponse.Builder response = HeartbeatResponse.newBuilder();
        if (!known(self.get()).contains(request.getWorkerId())) {
          response.setCommand(WorkerCommand.WORKER_COMMAND_REGISTER);
        }
        out.onNext(response.build());
        out.onCompleted();
      }
    };
  }

  @Test
  void heartbeatFollowsANewLeaderAndRegistersWithIt() throws Exception {
    masters = new FakeMasterGroup(2, self -> List.of(workerService(self)), Set.of());
    String first = masters.address(0);
    String second = masters.address(1);
    masters.lead(second);
    client =
        new WorkerMasterClient(MasterAddresses.listed(masters.addresses()), Duration.ofSeconds(5));
    store =
        new TieredBlockStore(
            List.of(new TierSpec("MEM", dir.resolve("mem"), 1L << 20)), new SimpleMeterRegistry());
    store.open();
    link =
        new MasterLink(
            client,
            store,
            () -> WorkerAddress.newBuilder().setHost("127.0.0.1").build(),
            WorkerCacheStats::getDefaultInstance,
            Duration.ofMillis(50),
            Duration.ofMillis(200));
    link.start();

    // The first master refuses the registration and names the leader, in the same attempt.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> link.registrations() == 1 && heartbeats(second) >= 2);
    assertEquals(1, known(second).size());
    assertEquals(known(second).iterator().next(), link.workerId());
    assertEquals(1, masters.calls(first));
    assertEquals(
        masters.headers(first).get(0).get(MasterHeaders.CALL_ID),
        masters.headers(second).get(0).get(MasterHeaders.CALL_ID));

    masters.lead(first);
    await("the worker registers with the new leader and heartbeats it")
        .atMost(Duration.ofSeconds(20))
        .until(() -> link.registrations() == 2 && heartbeats(first) >= 2);
    assertEquals(Set.of(link.workerId()), known(first));
    assertEquals(first, client.address());
  }
}
