package io.strata.master;

import static org.awaitility.Awaitility.await;

import io.strata.proto.GetLoadStatusRequest;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.LoadMasterGrpc;
import io.strata.proto.SubmitLoadRequest;
import io.strata.proto.SubmitLoadResponse;
import java.time.Duration;

/**
 * Calls to the LoadMaster service of a {@link TestMaster}, and the bound of the tests' waits on
 * their answers: each wait gives up, failing the test, after {@link #WAIT}.
 */
final class LoadMasterCalls {
  static final long WAIT_SECONDS = 60;
  static final Duration WAIT = Duration.ofSeconds(WAIT_SECONDS);

  /** How often the tests' waits look again. */
  static final Duration POLL = Duration.ofMillis(20);

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

  /** Polls the job of a path until it ends (bounded by {@link #WAIT}); returns its final status. */
  static LoadJobStatus awaitEnd(TestMaster m, String path) {
    return await("the load of " + path + " to end")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> status(m, path, 0), s -> !active(s));
  }
}
