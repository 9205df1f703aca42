package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CreateOptions;
import io.strata.client.FileSystem;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster of the previous release (tests/compat/PREVIOUS_RELEASE, built into the release cache
 * the first time, which takes a few minutes) driven by this build's client, and one of its workers
 * upgraded in place to this build.
 */
class PreviousReleaseTest {
  @TempDir Path dir;

  @Test
  void aWorkerUpgradedFromThePreviousReleaseReadsWhatItsPredecessorWrote() throws Exception {
    Release previous = Release.previous();
    Release current = Release.current();
    assertFalse(previous.isCurrent());
    assertNotEquals(current.release(), previous.release());
    byte[] content = new byte[(3 << 20) + 17];
    new Random(11).nextBytes(content);
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir.resolve("cluster")).release(previous).workers(1).start()) {
      assertEquals(previous, cluster.releaseOf(Release.Role.MASTER, 0));
      assertEquals(previous, cluster.releaseOf(Release.Role.WORKER, 0));
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        try (OutputStream out =
            fs.createFile("/compat/written.bin", CreateOptions.defaults().recursive(true))) {
          out.write(content);
        }
        assertEquals(TestTree.sha256(content), read(fs, "/compat/written.bin"));
        // What the processes say they run, not only what the cluster started.
        assertEquals(previous.release(), fs.masterInfo().release());
        assertEquals(previous.release(), fs.getWorkers().get(0).getRelease());
      }

      cluster.restartWorker(0, current);
      assertEquals(current, cluster.releaseOf(Release.Role.WORKER, 0));
      assertEquals(previous, cluster.releaseOf(Release.Role.MASTER, 0));
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        // The master counts the stopped worker live until it misses heartbeats; the upgraded
        // one replaces it when it registers.
        MultiProcessCluster.waitFor(
            "the master to list the upgraded worker",
            Duration.ofSeconds(60),
            () -> workerRelease(fs).equals(current.release()),
            null);
        assertEquals(1, fs.getWorkers().size());
        assertEquals(previous.release(), fs.masterInfo().release());
        assertEquals(TestTree.sha256(content), read(fs, "/compat/written.bin"));
      }
    }
  }

  @Test
  void thePreviousReleaseIsNotHandedKeysItDoesNotKnow() {
    Map<String, String> props = new LinkedHashMap<>();
    props.put("strata.worker.rpc.port", "4000");
    props.put("strata.worker.not.in.the.previous.release", "1");
    ClusterLauncher.Command c =
        ClusterLauncher.command(
            Release.previous(), Release.Role.WORKER, props, List.of(), List.of());
    assertEquals(List.of("strata.worker.not.in.the.previous.release"), c.dropped());
    assertTrue(c.command().contains("-Dstrata.worker.rpc.port=4000"), c.command().toString());
  }

  /** The release the master's only worker reported, or "" while it lists none. */
  private static String workerRelease(FileSystem fs) {
    try {
      List<io.strata.proto.WorkerInfo> workers = fs.getWorkers();
      return workers.size() == 1 ? workers.get(0).getRelease() : "";
    } catch (io.strata.common.error.StrataException e) {
      return "";
    }
  }

  private static String read(FileSystem fs, String path) throws Exception {
    try (InputStream in = fs.openFile(path)) {
      return TestTree.sha256(in);
    }
  }
}
