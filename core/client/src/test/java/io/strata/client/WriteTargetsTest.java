package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerInfo;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Writes avoid a worker they lost lately, unless it is the only one. */
class WriteTargetsTest {
  private static WorkerInfo worker(int port) {
    return WorkerInfo.newBuilder()
        .setWorkerId(port)
        .setAddress(WorkerAddress.newBuilder().setHost("127.0.0.1").setRpcPort(port))
        .build();
  }

  @Test
  void aLostWorkerIsAvoidedWhileAnotherIsLiveAndUsedWhenNoneIs() {
    WriteTargets targets = new WriteTargets();
    WorkerInfo a = worker(1);
    WorkerInfo b = worker(2);
    assertEquals(List.of(a, b), targets.usable(List.of(a, b)));
    targets.failed(a.getAddress());
    assertEquals(List.of(b), targets.usable(List.of(a, b)));
    targets.failed(b.getAddress());
    assertEquals(List.of(a, b), targets.usable(List.of(a, b)), "all lost: try them all again");
    assertEquals(List.of(a), targets.usable(List.of(a)));
  }
}
