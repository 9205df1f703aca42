package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The load-job calls of {@link FileSystem} against a scripted load service over gRPC. */
class LoadCallsTest {
  @TempDir Path dir;
  private Server server;
  private FileSystem fs;
  private final TestLoadMaster loads = new TestLoadMaster();

  private FileSystem start(io.grpc.BindableService service, String retryBudget) throws Exception {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(service)
            .build()
            .start();
    Map<String, String> c = new HashMap<>();
    c.put("strata.conf.dir", dir.resolve("conf").toString());
    c.put("strata.master.hostname", "127.0.0.1");
    c.put("strata.master.rpc.port", Integer.toString(server.getPort()));
    c.put("strata.client.master.retry.max.duration", retryBudget);
    fs = FileSystem.connect(StrataConfig.load(c));
    return fs;
  }

  @AfterEach
  void tearDown() throws Exception {
    if (fs != null) {
      fs.close();
    }
    if (server != null) {
      server.shutdownNow().awaitTermination();
    }
  }

  @Test
  void submitSendsTheNormalizedPathAndTheOptions() throws Exception {
    loads.script(TestLoadMaster.status("/data/x", LoadJobState.LOAD_LISTING, 0, 0, 0, 0, 0));
    start(loads, "2s");
    LoadJobOptions options =
        LoadJobOptions.newBuilder()
            .setVerify(true)
            .setBandwidthBytesPerSec(200L << 20)
            .setPartialListing(true)
            .build();
    FileSystem.SubmittedLoad r = fs.submitLoad("/data//x/", options);
    assertEquals(7, r.job().getJobId());
    assertFalse(r.alreadyRunning());
    assertEquals("/data/x", loads.submits.get(0).getPath());
    assertEquals(options, loads.submits.get(0).getOptions());

    loads.alreadyRunning(true);
    assertTrue(fs.submitLoad("/data/x", LoadJobOptions.getDefaultInstance()).alreadyRunning());
  }

  @Test
  void statusCarriesTheFailuresAskedFor() throws Exception {
    loads.script(
        TestLoadMaster.status("/d", LoadJobState.LOAD_RUNNING, 1, 5, 10, 50, 1000),
        TestLoadMaster.status("/d", LoadJobState.LOAD_FAILED, 2, 5, 20, 50, 2000).toBuilder()
            .setFilesFailed(3)
            .build());
    loads.failures(
        List.of(
            TestLoadMaster.failure("/d/a", "gone"),
            TestLoadMaster.failure("/d/b", "gone"),
            TestLoadMaster.failure("/d/c", "gone")));
    start(loads, "2s");
    fs.submitLoad("/d", LoadJobOptions.getDefaultInstance());
    LoadJobStatus none = fs.loadStatus("/d", 0);
    assertEquals(0, none.getFailuresCount());
    LoadJobStatus two = fs.loadStatus("/d/", 2);
    assertEquals(LoadJobState.LOAD_FAILED, two.getState());
    assertEquals(
        List.of("/d/a", "/d/b"), two.getFailuresList().stream().map(f -> f.getPath()).toList());
    assertEquals(2, loads.statusRequests.get(1).getMaxFailures());
    assertEquals("/d", loads.statusRequests.get(1).getPath());
  }

  @Test
  void aPathWithoutAJobIsNotFound() throws Exception {
    loads.script(TestLoadMaster.status("/d", LoadJobState.LOAD_RUNNING, 0, 1, 0, 1, 0));
    start(loads, "2s");
    StrataException status = assertThrows(StrataException.class, () -> fs.loadStatus("/other", 0));
    assertEquals(ErrorCode.NOT_FOUND, status.code());
    assertTrue(status.getMessage().startsWith("No load job of /other"), status.getMessage());
    StrataException stop = assertThrows(StrataException.class, () -> fs.stopLoad("/other"));
    assertEquals(ErrorCode.NOT_FOUND, stop.code());
  }

  @Test
  void stopAnswersTheStoppedStatus() throws Exception {
    loads.script(TestLoadMaster.status("/d", LoadJobState.LOAD_RUNNING, 1, 5, 10, 50, 1000));
    start(loads, "2s");
    LoadJobStatus stopped = fs.stopLoad("//d");
    assertEquals(LoadJobState.LOAD_STOPPED, stopped.getState());
    assertEquals("/d", loads.stops.get(0).getPath());
    assertEquals(LoadJobState.LOAD_STOPPED, fs.loadStatus("/d", 0).getState());
  }

  @Test
  void aShortMasterOutageIsRetriedWithinTheBudget() throws Exception {
    loads.script(TestLoadMaster.status("/d", LoadJobState.LOAD_RUNNING, 1, 5, 10, 50, 1000));
    loads.outage(0, Duration.ofMillis(300));
    start(loads, "30s");
    assertEquals(LoadJobState.LOAD_RUNNING, fs.loadStatus("/d", 0).getState());
    assertTrue(loads.statusRequests.size() > 1, "the first attempts met the outage");
  }

  @Test
  void aMasterWithoutLoadJobsSaysSo() throws Exception {
    start(new TestMaster("file:///x"), "2s");
    StrataException e =
        assertThrows(
            StrataException.class, () -> fs.submitLoad("/d", LoadJobOptions.getDefaultInstance()));
    assertEquals(ErrorCode.UNIMPLEMENTED, e.code());
    assertTrue(
        e.getMessage()
            .startsWith(
                "The Strata master at 127.0.0.1:" + server.getPort() + " does not run load jobs"),
        e.getMessage());
  }
}
