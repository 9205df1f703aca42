package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.tests.FuseProcess;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.Release;
import io.strata.tests.TestTree;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A FUSE mount of the previous release (built into the release cache the first time) on a
 * cluster of this build, read with java.nio and then unmounted by SIGTERM. A machine that cannot
 * mount fails this test.
 */
class ReleaseFuseTest {
  @TempDir Path dir;

  @Test
  void aMountOfThePreviousReleaseReadsFromThisBuildsCluster() throws Exception {
    Release previous = Release.previous();
    try (MultiProcessCluster cluster = MultiProcessCluster.builder(dir.resolve("cluster"))
        .workers(1).start()) {
      Path ufs = cluster.underStoreRoot();
      Files.createDirectories(ufs.resolve("data"));
      TestTree.writeRandom(ufs.resolve("data/part-0.bin"), (2 << 20) + 3, 5);
      byte[] content = Files.readAllBytes(ufs.resolve("data/part-0.bin"));
      Path point = Files.createDirectories(dir.resolve("mnt"));

      FuseProcess fuse = cluster.startFuse(point, Map.of("strata.fuse.web.port", "-1"),
          previous);
      try {
        assertEquals(previous, fuse.release());
        assertTrue(FuseMount.isMounted(point));
        assertArrayEquals(content, Files.readAllBytes(point.resolve("data/part-0.bin")));
        // The mount process runs the previous release's jar, not this build's classes.
        String commandLine = Files.readString(Path.of("/proc", Long.toString(fuse.pid()),
            "cmdline"), StandardCharsets.UTF_8);
        assertTrue(commandLine.contains(previous.classpath(Release.Role.FUSE)), commandLine);
      } finally {
        assertTrue(cluster.stopFuse(fuse), "the mount did not go on SIGTERM alone");
      }
      assertFalse(FuseMount.isMounted(point));
      assertFalse(fuse.isAlive());
    }
  }
}
