package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.testing.Tmpfs;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Processes killed with kill -9 while clients work. */
class FailureTest {
  static final long BLOCK = 1 << 20;
  @TempDir Path dir;

  @Test
  void killingAWorkerDuringALargeReadDoesNotFailTheRead() throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .workers(2)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .property("strata.master.worker.timeout", "3s")
            .property("strata.client.data.read.timeout", "5s")
            .start()) {
      Path source = cluster.underStoreRoot().resolve("large.bin");
      TestTree.FileFacts facts = TestTree.writeRandom(source, 40 * BLOCK + 12345, 5);
      // Network reads, so that the dying worker is the one serving bytes.
      try (FileSystem fs =
              FileSystem.connect(
                  cluster.clientConfig(Map.of("strata.client.short.circuit.enabled", "false")));
          FileInStream in = fs.openFile("/large.bin")) {
        var sha = TestTree.sha256();
        byte[] buf = new byte[256 * 1024];
        long read = 0;
        boolean killed = false;
        int n;
        while ((n = in.read(buf, 0, buf.length)) > 0) {
          sha.update(buf, 0, n);
          read += n;
          if (!killed && read >= facts.length() / 3) {
            cluster.killWorker(0);
            killed = true;
          }
        }
        assertTrue(killed);
        assertEquals(facts.length(), read);
        assertEquals(facts.sha256(), java.util.HexFormat.of().formatHex(sha.digest()));
      }
    }
  }

  @Test
  void masterKilledAndRestartedKeepsTheNamespaceExactly() throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .start()) {
      TestTree.generate(cluster.underStoreRoot().resolve("loaded"), 60, BLOCK, 2, 9);
      Map<String, String> before;
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        fs.createDirectory("/made/deep/er", true, false);
        for (int i = 0; i < 20; i++) {
          try (OutputStream out =
              fs.createFile("/made/file" + i, io.strata.client.CreateOptions.defaults())) {
            out.write(("content " + i).getBytes(StandardCharsets.UTF_8));
          }
        }
        fs.rename("/made/file0", "/made/deep/renamed");
        fs.delete("/made/file1", false);
        // Loading metadata from the under store is a namespace change too.
        before = snapshot(fs, "/");
        fs.checkpoint();
        fs.createDirectory("/after-checkpoint", false, false);
        fs.rename("/made/file2", "/after-checkpoint/moved");
        before = snapshot(fs, "/");
      }
      cluster.killMaster();
      cluster.startMaster();
      cluster.waitForLiveWorkers(1, Duration.ofSeconds(60));
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        assertEquals(before, snapshot(fs, "/"));
        try (InputStream in = fs.openFile("/after-checkpoint/moved")) {
          assertEquals("content 2", new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
      }
      // A second crash with no checkpoint in between replays the same journal again.
      cluster.killMaster();
      cluster.startMaster();
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        assertEquals(before, snapshot(fs, "/"));
      }
    }
  }

  /**
   * A writer that dies leaves no file "being written" for good: its lease lapses and the master
   * removes the file. A live writer renews its lease through a kill -9 of the master and completes
   * its file on the restarted one.
   */
  @Test
  void aDeadWritersFileIsRemovedWhenItsLeaseLapsesAndALiveWriterKeepsItsThroughARestart()
      throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .workers(1)
            .property("strata.master.lease.timeout", "3s")
            .property("strata.client.lease.renew.interval", "500ms")
            .start()) {
      FileSystem dead = FileSystem.connect(cluster.clientConfig());
      OutputStream abandoned = dead.createFile("/abandoned");
      abandoned.write("never closed".getBytes(StandardCharsets.UTF_8));
      abandoned.flush();
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        assertTrue(!fs.getStatus("/abandoned").getComplete(), "being written");
        try (OutputStream live = fs.createFile("/live")) {
          // The dead writer stops renewing: its process is gone as far as the master can tell.
          dead.close();
          live.write("before ".getBytes(StandardCharsets.UTF_8));
          cluster.killMaster();
          cluster.startMaster();
          cluster.waitForLiveWorkers(1, Duration.ofSeconds(60));
          // Longer than the timeout after the restart: only renewals keep the file.
          for (int i = 0; i < 10; i++) {
            Thread.sleep(500);
            live.write(("part" + i + " ").getBytes(StandardCharsets.UTF_8));
          }
        }
        try (InputStream in = fs.openFile("/live")) {
          assertEquals(
              "before part0 part1 part2 part3 part4 part5 part6 part7 part8 part9 ",
              new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (fs.exists("/abandoned")) {
          assertTrue(
              System.nanoTime() < deadline,
              "the dead writer's file is still there 30 s after its lease could last");
          Thread.sleep(200);
        }
        assertTrue(fs.getStatus("/live").getComplete());
      }
    }
  }

  /** path -> id, kind, length, completeness, mode of every inode below a folder. */
  static Map<String, String> snapshot(FileSystem fs, String root) throws Exception {
    Map<String, String> out = new TreeMap<>();
    List<String> pending = new ArrayList<>(List.of(root));
    while (!pending.isEmpty()) {
      String dirPath = pending.remove(pending.size() - 1);
      try (CloseableIterator<FileInfo> it = fs.listStatus(dirPath)) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          out.put(
              f.getPath(),
              f.getFileId()
                  + " "
                  + f.getDirectory()
                  + " "
                  + f.getLength()
                  + " "
                  + f.getComplete()
                  + " "
                  + Integer.toOctalString(f.getMode()));
          if (f.getDirectory()) {
            pending.add(f.getPath());
          }
        }
      }
    }
    return out;
  }

  /**
   * An under store that fails in the middle of a write (here a real 4 MiB tmpfs that fills): the
   * write fails naming the cause, and neither the store nor the namespace shows a partial file: a
   * new version of a file (what the mount and the proxy write) leaves the previous one readable,
   * and a new file is not there at all. A write that fits succeeds afterwards.
   */
  @Test
  void anUnderStoreThatFillsHalfWayThroughAWriteKeepsThePreviousVersionAndNoPartialFile()
      throws Exception {
    Path store = Files.createDirectories(dir.resolve("small-store"));
    Tmpfs.mount(store, "4m");
    try (MultiProcessCluster cluster =
            MultiProcessCluster.builder(dir.resolve("cluster"))
                .workers(1)
                .property("strata.master.root.ufs", "file://" + store)
                .property("strata.master.file.block.size", Long.toString(BLOCK))
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      byte[] first = randomBytes((int) BLOCK, 1);
      write(fs, "/f", first, CreateOptions.defaults());
      byte[] tooLarge = randomBytes((int) (6 * BLOCK), 2);

      StrataException failed =
          assertThrows(
              StrataException.class,
              () -> write(fs, "/f", tooLarge, CreateOptions.defaults().newVersion(true)));
      assertTrue(
          failed.getMessage().contains("No space left on device"),
          "the error names the cause: " + failed.getMessage());
      assertArrayEquals(first, readAll(fs, "/f"), "the previous version");
      assertEquals(BLOCK, fs.getStatus("/f").getLength());
      assertEquals(List.of("f"), namesIn(store), "the store shows no partial file");
      assertEquals(List.of("f"), namespaceNames(fs));

      failed =
          assertThrows(
              StrataException.class,
              () -> write(fs, "/g", tooLarge, CreateOptions.defaults().overwrite(true)));
      assertTrue(failed.getMessage().contains("No space left on device"), failed.getMessage());
      assertEquals(List.of("f"), namesIn(store), "the store shows no partial file");
      assertEquals(List.of("f"), namespaceNames(fs), "the namespace shows no partial file");

      // The failed writes left nothing behind that takes space: a write that fits goes through.
      byte[] second = randomBytes((int) (2 * BLOCK), 3);
      write(fs, "/f", second, CreateOptions.defaults().newVersion(true));
      assertArrayEquals(second, readAll(fs, "/f"));
      assertArrayEquals(second, Files.readAllBytes(store.resolve("f")));
    } finally {
      Tmpfs.unmount(store);
    }
  }

  private static void write(FileSystem fs, String path, byte[] bytes, CreateOptions options)
      throws Exception {
    try (OutputStream out = fs.createFile(path, options)) {
      out.write(bytes);
    }
  }

  private static byte[] readAll(FileSystem fs, String path) throws Exception {
    try (InputStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  private static List<String> namesIn(Path folder) throws Exception {
    try (java.util.stream.Stream<Path> names = Files.list(folder)) {
      return names.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static List<String> namespaceNames(FileSystem fs) throws Exception {
    List<String> names = new ArrayList<>();
    try (CloseableIterator<FileInfo> listing = fs.listStatus("/")) {
      while (listing.hasNext()) {
        names.add(listing.next().getName());
      }
    }
    return names;
  }

  private static byte[] randomBytes(int length, long seed) {
    byte[] bytes = new byte[length];
    new java.util.Random(seed).nextBytes(bytes);
    return bytes;
  }

  @Test
  void aFullTierEvictsAndReadsStayCorrect() throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .workerProperty(0, "strata.worker.tier.mem.capacity", "4MB")
            .workerProperty(0, "strata.worker.tier.ssd.capacity", "6MB")
            .start()) {
      List<TestTree.FileFacts> facts = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        facts.add(
            TestTree.writeRandom(cluster.underStoreRoot().resolve("f" + i), 3 * BLOCK - 100, i));
      }
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
        for (int round = 0; round < 3; round++) {
          for (int i = 0; i < 8; i++) {
            try (InputStream in = fs.openFile("/f" + i)) {
              assertEquals(facts.get(i).sha256(), TestTree.sha256(in), "round " + round + " f" + i);
            }
          }
        }
        // 24 MB read through a 10 MB cache: blocks must have been evicted, space never exceeded.
        MultiProcessCluster.waitFor(
            "evictions",
            Duration.ofSeconds(30),
            () ->
                MultiProcessCluster.metric(
                        cluster.scrapeWorker(0), "strata_worker_blocks_evicted_total")
                    > 0,
            null);
        String scrape = cluster.scrapeWorker(0);
        double used = MultiProcessCluster.metric(scrape, "strata_worker_tier_used_bytes");
        assertTrue(used <= 10 * BLOCK, "tiers hold " + used + " bytes, more than their capacity");
      }
      assertTrue(Files.exists(cluster.underStoreRoot().resolve("f0")));
    }
  }

  @Test
  void aRestartedWorkerKeepsItsCacheAndNeverServesAHalfWrittenBlock() throws Exception {
    try (MultiProcessCluster cluster =
        MultiProcessCluster.builder(dir)
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .workerProperty(0, "strata.worker.tier.mem.capacity", "0")
            .start()) {
      TestTree.FileFacts facts =
          TestTree.writeRandom(cluster.underStoreRoot().resolve("kept.bin"), 4 * BLOCK + 5, 21);
      Map<String, String> network = Map.of("strata.client.short.circuit.enabled", "false");
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig(network))) {
        try (InputStream in = fs.openFile("/kept.bin")) {
          assertEquals(facts.sha256(), TestTree.sha256(in));
        }
        MultiProcessCluster.waitFor(
            "kept.bin cached",
            Duration.ofSeconds(60),
            () -> cached(fs, "/kept.bin") == facts.length(),
            null);
      }
      cluster.killWorker(0);
      // What a crash mid-write leaves behind: a partial block in the tier's tmp folder.
      Path tmp = dir.resolve("worker0/ssd/tmp");
      Files.createDirectories(tmp);
      Files.write(tmp.resolve("9999.tmp"), new byte[1000]);
      cluster.startWorker(0);
      cluster.waitForLiveWorkers(1, Duration.ofSeconds(60));
      try (FileSystem fs = FileSystem.connect(cluster.clientConfig(network))) {
        MultiProcessCluster.waitFor(
            "cache re-reported",
            Duration.ofSeconds(60),
            () -> cached(fs, "/kept.bin") == facts.length(),
            null);
        try (InputStream in = fs.openFile("/kept.bin")) {
          assertEquals(facts.sha256(), TestTree.sha256(in));
        }
      }
      String scrape = cluster.scrapeWorker(0);
      assertEquals(
          0.0,
          MultiProcessCluster.metric(scrape, "strata_worker_read_ufs_bytes_total"),
          "the restarted worker went to the under store for blocks it had cached");
      assertTrue(MultiProcessCluster.metric(scrape, "strata_worker_cache_hits_total") > 0);
      try (var left = Files.list(tmp)) {
        assertEquals(0, left.count(), "half-written block files survived the restart");
      }
    }
  }

  static long cached(FileSystem fs, String path) {
    try {
      return fs.getStatus(path).getCachedBytes();
    } catch (Exception e) {
      return -1;
    }
  }
}
