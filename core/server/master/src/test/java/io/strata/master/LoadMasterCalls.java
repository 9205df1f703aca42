package io.strata.master;

import static org.junit.jupiter.api.Assertions.fail;

import io.strata.proto.GetLoadStatusRequest;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.SubmitLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Calls to the LoadMaster service of a {@link TestMaster}, and bounded waits on their answers: each
 * wait gives up, failing the test, after {@link #WAIT_SECONDS}.
 */
final class LoadMasterCalls {
  static final long WAIT_SECONDS = 60;

  private LoadMasterCalls() {}

  static LoadMasterGrpc.LoadMasterBlockingStub load(TestMaster m) {
    return LoadMasterGrpc.newBlockingStub(m.channel);
  }

  static SubmitLoadResponse submit(TestMaster m, String path, LoadJobOptions options) {
    return load(m)
        .submitLoad(SubmitLoadRequest.newBuilder().setPath(path).setOptions(options).build());
  }

  static SubmitLoadResponse submit(TestMaster m, String path) {
    return submit(m, path, LoadJobOptions.getDefaultInstance());
  }

  static LoadJobStatus status(TestMaster m, String path, int maxFailures) {
    return load(m)
        .getLoadStatus(
            GetLoadStatusRequest.newBuilder().setPath(path).setMaxFailures(maxFailures).build())
        .getJob();
  }

  static boolean active(LoadJobStatus s) {
    return s.getState() == LoadJobState.LOAD_LISTING
        || s.getState() == LoadJobState.LOAD_RUNNING
        || s.getState() == LoadJobState.LOAD_VERIFYING;
  }

  /** Polls the job of a path until it ends (bounded); returns its final status. */
  static LoadJobStatus awaitEnd(TestMaster m, String path) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    LoadJobStatus s = status(m, path, 0);
    while (active(s) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      s = status(m, path, 0);
    }
    if (active(s)) {
      fail("the load of " + path + " did not end: " + s);
    }
    return s;
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("gave up waiting for " + what);
      }
      Thread.sleep(20);
    }
  }
}
