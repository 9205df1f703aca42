package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CreateOptions;
import io.strata.client.FileSystem;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Three masters on their own loopback addresses, and what clients see when the leader dies. */
class MasterFailoverTest {
  private static final Duration FAILOVER = Duration.ofSeconds(20);

  @TempDir Path dir;

  @Test
  @Timeout(value = 150, unit = TimeUnit.SECONDS)
  void fileWrittenBeforeTheLeaderIsKilledReadsBackFromTheNewLeader() throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .masterHosts("127.0.0.2", "127.0.0.3", "127.0.0.4")
            .workers(1)
            .property("strata.client.master.failover.timeout", FAILOVER.toSeconds() + "s")
            // A paused or dead master's calls must not hold a client for the default minute.
            .property("strata.client.rpc.timeout", "5s")
            .start()) {
      assertEquals(
          List.of("127.0.0.2:", "127.0.0.3:", "127.0.0.4:"),
          cluster.masterAddresses().stream()
              .map(a -> a.substring(0, a.lastIndexOf(':') + 1))
              .toList());
      int leader = cluster.leaderIndex();
      assertTrue(leader >= 0, "a leader is elected once the cluster started");
      assertTrue(
          Files.isDirectory(cluster.masterJournalDir(leader)),
          "each master keeps its own journal: " + cluster.masterJournalDir(leader));

      byte[] content = new byte[3 << 20];
      new Random(7).nextBytes(content);
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        fs.createDirectory("/ha", false, false);
        try (OutputStream out = fs.createFile("/ha/file.bin", CreateOptions.defaults())) {
          out.write(content);
        }
        assertEquals(cluster.masterAddresses().get(leader), fs.masterAddress());
      }

      cluster.killMaster(leader);
      long start = System.nanoTime();
      byte[] read;
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig());
          InputStream in = fs.openFile("/ha/file.bin")) {
        read = in.readAllBytes();
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertArrayEquals(content, read);
      assertTrue(took.compareTo(FAILOVER) < 0, "the read after the kill took " + took);

      int next = cluster.awaitLeader(Duration.ofSeconds(30));
      assertNotEquals(leader, next, "a surviving master leads");
      // The dead master rejoins with its own journal and catches up.
      cluster.restartMaster(leader);
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        fs.createDirectory("/ha/after", false, false);
        assertTrue(fs.exists("/ha/after"));
      }
    }
  }
}
