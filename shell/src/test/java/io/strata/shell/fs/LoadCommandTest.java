package io.strata.shell.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.client.TestLoadMaster;
import io.strata.proto.LoadFailure;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.proto.LoadJobStatus;
import io.strata.shell.ShellRun;
import io.strata.shell.ShellRun.Result;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code strata fs load} against a scripted load service served over gRPC on 127.0.0.1. */
class LoadCommandTest {
  private static final String NL = System.lineSeparator();
  private static final long MIB = 1 << 20;

  @TempDir Path dir;
  private final TestLoadMaster loads = new TestLoadMaster();
  private final Map<String, String> conf = new HashMap<>();
  private Server server;

  @BeforeEach
  void setUp() throws Exception {
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(loads)
            .build()
            .start();
    conf.put("strata.conf.dir", dir.resolve("conf").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", Integer.toString(server.getPort()));
    conf.put("strata.client.master.retry.max.duration", "2s");
  }

  @AfterEach
  void tearDown() throws Exception {
    server.shutdownNow().awaitTermination();
  }

  private Result run(String... args) {
    return ShellRun.run(conf, args);
  }

  private static LoadJobStatus status(
      LoadJobState state, long filesDone, long bytesDone, long elapsedMs) {
    return TestLoadMaster.status("/data", state, filesDone, 40, bytesDone, 400 * MIB, elapsedMs)
        .toBuilder()
        .setBlocksLoaded(filesDone * 10)
        .setBytesLoaded(bytesDone)
        .build();
  }

  private static List<LoadFailure> failures(int n) {
    List<LoadFailure> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(TestLoadMaster.failure("/data/f" + i, "gone from the under store"));
    }
    return list;
  }

  private static String lastLine(String text) {
    List<String> lines = text.lines().toList();
    return lines.get(lines.size() - 1);
  }

  @Test
  void followsTheJobToItsEndAndPrintsTheSummary() {
    loads.script(
        TestLoadMaster.status("/data", LoadJobState.LOAD_LISTING, 0, 12, 0, 120 * MIB, 0),
        status(LoadJobState.LOAD_RUNNING, 20, 200 * MIB, 2000),
        status(LoadJobState.LOAD_SUCCEEDED, 40, 400 * MIB, 4000).toBuilder()
            .setBlocksCached(3)
            .setEndTimeMs(1_700_000_004_000L)
            .build());
    Result r = run("fs", "load", "/data/");
    assertEquals(0, r.code(), r.err());
    assertEquals("/data", loads.submits.get(0).getPath());
    assertEquals(LoadJobOptions.getDefaultInstance(), loads.submits.get(0).getOptions());
    assertEquals(
        List.of(
            "Load job 7 of /data: succeeded in 4.0s",
            "  files:    40 cached of 40, 0 failed",
            "  bytes:    400.0MiB cached of 400.0MiB (100%)",
            "  read:     400.0MiB from under stores, 100.0MiB/s",
            "  blocks:   400 loaded, 3 already cached"),
        r.out().lines().toList());
    assertTrue(
        r.err()
            .startsWith(
                "Loading /data: listing, 0/12+ files, 0B/120.0MiB+, -, ETA ?," + " 0 failed" + NL),
        r.err());
    for (String line : r.err().lines().toList()) {
      assertTrue(line.startsWith("Loading /data: "), line);
    }
  }

  @Test
  void jobOptionsGoIntoTheSubmitAndTheSummaryShowsVerify() {
    loads.script(
        status(LoadJobState.LOAD_SUCCEEDED, 40, 400 * MIB, 4000).toBuilder()
            .setOptions(LoadJobOptions.newBuilder().setVerify(true))
            .setVerifyMissingBlocks(2)
            .build());
    Result r = run("fs", "load", "--verify", "--partial-listing", "--bandwidth", "200MB", "/data");
    assertEquals(0, r.code(), r.err());
    LoadJobOptions sent = loads.submits.get(0).getOptions();
    assertTrue(sent.getVerify());
    assertTrue(sent.getPartialListing());
    assertEquals(200 * MIB, sent.getBandwidthBytesPerSec());
    assertTrue(
        r.out().contains("  verify:   2 missing blocks found and loaded again" + NL), r.out());
    assertTrue(r.out().contains("  options:  verify" + NL), r.out());
    assertEquals(1_500_000L, new BandwidthConverter().convert("1500000"));
    assertEquals(2L << 30, new BandwidthConverter().convert("2GiB/s"));
  }

  @Test
  void failedFilesAreListedWithTheirReasonsAndExitOne() {
    loads.script(
        status(LoadJobState.LOAD_RUNNING, 10, 100 * MIB, 1000),
        status(LoadJobState.LOAD_FAILED, 15, 150 * MIB, 2000).toBuilder()
            .setFilesFailed(25)
            .build());
    loads.failures(failures(25));
    Result r = run("fs", "load", "/data");
    assertEquals(1, r.code());
    assertTrue(r.out().startsWith("Load job 7 of /data: failed after 2.0s" + NL), r.out());
    assertTrue(r.out().contains("  files:    15 cached of 40, 25 failed" + NL), r.out());
    assertEquals(20, loads.statusRequests.get(loads.statusRequests.size() - 1).getMaxFailures());
    List<String> err = r.err().lines().toList();
    int title = err.indexOf("Files not loaded (the first 20 of 25):");
    assertTrue(title >= 0, r.err());
    assertEquals("  /data/f0: gone from the under store", err.get(title + 1));
    assertEquals("  /data/f19: gone from the under store", err.get(title + 20));
    assertEquals(
        "strata: 25 files of /data could not be loaded (job 7); list them with"
            + " `strata fs load --progress --verbose /data`; `strata fs load /data` tries them"
            + " again",
        err.get(title + 21));

    loads.script(
        status(LoadJobState.LOAD_FAILED, 15, 150 * MIB, 2000).toBuilder()
            .setFilesFailed(25)
            .build());
    Result verbose = run("fs", "load", "--verbose", "/data");
    assertEquals(1, verbose.code());
    assertEquals(1000, loads.statusRequests.get(loads.statusRequests.size() - 1).getMaxFailures());
    assertTrue(verbose.err().contains("Files not loaded (25):" + NL), verbose.err());
    assertTrue(verbose.err().contains("  /data/f24: gone from the under store" + NL));
    assertEquals(
        "strata: 25 files of /data could not be loaded (job 7); `strata fs load /data`"
            + " tries them again",
        lastLine(verbose.err()));
  }

  @Test
  void aRunningJobOfThePathIsFollowedNotSubmittedAgain() {
    loads.script(
        status(LoadJobState.LOAD_RUNNING, 30, 300 * MIB, 3000),
        status(LoadJobState.LOAD_SUCCEEDED, 40, 400 * MIB, 4000));
    loads.alreadyRunning(true);
    Result r = run("fs", "load", "/data");
    assertEquals(0, r.code(), r.err());
    assertTrue(
        r.err().startsWith("A load of /data is already running (job 7); following it" + NL),
        r.err());
    assertTrue(r.out().startsWith("Load job 7 of /data: succeeded"), r.out());
  }

  @Test
  void aStoppedJobExitsOne() {
    loads.script(
        status(LoadJobState.LOAD_RUNNING, 10, 100 * MIB, 1000),
        status(LoadJobState.LOAD_STOPPED, 12, 120 * MIB, 1500));
    Result r = run("fs", "load", "/data");
    assertEquals(1, r.code());
    assertTrue(r.out().startsWith("Load job 7 of /data: stopped after 1.5s" + NL), r.out());
    assertEquals(
        "strata: The load of /data was stopped (job 7) before it finished; what it"
            + " cached stays cached, and `strata fs load /data` loads the rest",
        lastLine(r.err()));
  }

  @Test
  void detachSubmitsAndReturnsAtOnce() {
    loads.script(status(LoadJobState.LOAD_LISTING, 0, 0, 0));
    Result r = run("fs", "load", "--detach", "--verify", "/data");
    assertEquals(0, r.code(), r.err());
    assertEquals(
        "Submitted load job 7 of /data"
            + NL
            + "Its status:  strata fs load --progress /data"
            + NL
            + "Stop it:     strata fs load --stop /data"
            + NL,
        r.out());
    assertTrue(loads.statusRequests.isEmpty());
    assertTrue(loads.submits.get(0).getOptions().getVerify());

    loads.alreadyRunning(true);
    Result again = run("fs", "load", "--detach", "/data");
    assertTrue(
        again
            .out()
            .startsWith(
                "A load of /data is already running (job 7); nothing new" + " was submitted" + NL),
        again.out());
  }

  @Test
  void progressPrintsTheStatusOnceAndStopStopsTheJob() {
    loads.script(
        status(LoadJobState.LOAD_RUNNING, 10, 100 * MIB, 10_000).toBuilder()
            .setWaitingFor("a live worker")
            .build());
    Result r = run("fs", "load", "--progress", "/data");
    assertEquals(0, r.code(), r.err());
    List<String> lines = r.out().lines().toList();
    // 300 MiB left at 10 MiB/s.
    assertTrue(
        lines.get(0).startsWith("Load job 7 of /data: running for 10s, ETA 30s" + " (submitted "),
        lines.get(0));
    assertTrue(lines.contains("  waiting for a live worker"), r.out());
    assertEquals(0, loads.statusRequests.get(0).getMaxFailures());

    Result stop = run("fs", "load", "--stop", "/data");
    assertEquals(0, stop.code(), stop.err());
    assertTrue(stop.out().startsWith("Load job 7 of /data: stopped after 10s" + NL), stop.out());
    assertEquals("/data", loads.stops.get(0).getPath());

    Result after = run("fs", "load", "--progress", "/data");
    assertEquals(1, after.code());
    assertTrue(
        lastLine(after.err()).startsWith("strata: The load of /data was stopped"), after.err());
  }

  @Test
  void progressVerboseListsTheFailuresOfAnEndedJob() {
    loads.script(
        status(LoadJobState.LOAD_FAILED, 38, 380 * MIB, 4000).toBuilder()
            .setFilesFailed(2)
            .build());
    loads.failures(failures(2));
    Result r = run("fs", "load", "--progress", "--verbose", "/data");
    assertEquals(1, r.code());
    assertEquals(1000, loads.statusRequests.get(0).getMaxFailures());
    assertTrue(
        r.out()
            .endsWith(
                "Files not loaded (2):"
                    + NL
                    + "  /data/f0: gone from the under store"
                    + NL
                    + "  /data/f1: gone from the under store"
                    + NL),
        r.out());
    assertEquals(
        "strata: 2 files of /data could not be loaded (job 7); `strata fs load /data`"
            + " tries them again"
            + NL,
        r.err());
  }

  @Test
  void aPathWithoutAJobIsNotFound() {
    loads.script(status(LoadJobState.LOAD_RUNNING, 0, 0, 0));
    Result r = run("fs", "load", "--progress", "/other");
    assertEquals(1, r.code());
    assertEquals(
        "strata: No load job of /other was ever submitted: start one with"
            + " `strata fs load /other`"
            + NL,
        r.err());
    assertEquals(1, run("fs", "load", "--stop", "/other").code());
  }

  @Test
  void conflictingOptionsAreUsageErrorsThatNameBoth() {
    String[][] cases = {
      {"--stop", "--verify"},
      {"--metadata-only", "--detach"},
      {"--progress", "--stop"},
      {"--progress", "--bandwidth"},
      {"--metadata-only", "--partial-listing"},
      {"--detach", "--verbose"},
      {"--stop", "--verbose"},
      {"--sync", "--metadata-only"}
    };
    for (String[] c : cases) {
      List<String> args = new ArrayList<>(List.of("fs", "load", c[0]));
      if (c[1].equals("--bandwidth")) {
        args.addAll(List.of("--bandwidth", "1MB"));
      } else if (!c[1].equals("--metadata-only")) {
        args.add(c[1]);
      }
      args.add("/data");
      Result r = run(args.toArray(new String[0]));
      assertEquals(2, r.code(), String.join(" ", c));
      assertTrue(r.err().startsWith("strata: "), r.err());
      assertTrue(r.err().contains(c[0]) && r.err().contains(c[1]), r.err());
      assertEquals(1, r.err().lines().count(), r.err());
    }
    assertTrue(loads.submits.isEmpty());
    assertTrue(loads.statusRequests.isEmpty());
    assertTrue(loads.stops.isEmpty());
  }

  @Test
  void aBadBandwidthNamesTheOptionAndAnExample() {
    for (String bad : List.of("fast", "0", "12XB")) {
      Result r = run("fs", "load", "--bandwidth", bad, "/data");
      assertEquals(2, r.code(), bad);
      assertEquals(
          "strata: Invalid value for option '--bandwidth': '"
              + bad
              + "' is not a rate"
              + " in bytes per second (such as 200MB or 1GiB; leave the option out for no cap)"
              + " (see `strata fs load --help`)"
              + NL,
          r.err());
    }
    assertTrue(loads.submits.isEmpty());
  }

  @Test
  void aMasterThatStopsAnsweringForAWhileIsWaitedFor() {
    conf.put("strata.client.master.retry.max.duration", "200ms");
    loads.script(
        status(LoadJobState.LOAD_RUNNING, 10, 100 * MIB, 1000),
        status(LoadJobState.LOAD_RUNNING, 20, 200 * MIB, 2000),
        status(LoadJobState.LOAD_SUCCEEDED, 40, 400 * MIB, 4000));
    loads.outage(1, Duration.ofMillis(2500));
    Result r = run("fs", "load", "/data");
    assertEquals(0, r.code(), r.err());
    String address = "127.0.0.1:" + server.getPort();
    assertTrue(
        r.err()
            .contains(
                "The master at "
                    + address
                    + " does not answer; waiting for it"
                    + " up to 5m00s (the load keeps running on the master)"
                    + NL),
        r.err());
    assertTrue(r.err().contains("The master at " + address + " answers again" + NL), r.err());
    assertFalse(r.err().contains("strata:"), r.err());
    assertTrue(r.out().startsWith("Load job 7 of /data: succeeded"), r.out());
  }
}
