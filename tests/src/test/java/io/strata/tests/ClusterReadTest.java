package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.proto.FileInfo;
import io.strata.tests.TestTree.FileFacts;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master and two workers as separate processes over a generated tree of about 1,000 files: reads
 * through the Java client and through `strata fs cat` match the source, repeated reads come from
 * the cache, positioned reads at random offsets match.
 */
class ClusterReadTest {
  static final long BLOCK = 1 << 20;
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static TestTree tree;
  static FileSystem fs;

  @BeforeAll
  static void startCluster() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(2)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .start();
    tree = TestTree.generate(cluster.underStoreRoot().resolve("tree"), 1000, BLOCK, 3, 42);
    fs = FileSystem.connect(cluster.clientConfig());
  }

  @AfterAll
  static void stopCluster() throws Exception {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static String ns(String rel) {
    return "/tree/" + rel;
  }

  static String readAll(FileSystem fs, String path) throws Exception {
    try (InputStream in = fs.openFile(path)) {
      return TestTree.sha256(in);
    }
  }

  @Test
  void everyFileReadThroughTheClientMatchesItsSource() throws Exception {
    for (Map.Entry<String, FileFacts> e : tree.files().entrySet()) {
      assertEquals(e.getValue().sha256(), readAll(fs, ns(e.getKey())), e.getKey());
      assertEquals(e.getValue().length(), fs.getStatus(ns(e.getKey())).getLength(), e.getKey());
    }
  }

  @Test
  void everyFileReadThroughFsCatMatchesItsSource() throws Exception {
    List<String> names = new ArrayList<>(tree.files().keySet());
    int batch = 250;
    for (int start = 0; start < names.size(); start += batch) {
      List<String> slice = names.subList(start, Math.min(names.size(), start + batch));
      List<String> args = new ArrayList<>(List.of("fs", "cat"));
      MessageDigest expected = TestTree.sha256();
      for (String rel : slice) {
        args.add(ns(rel));
        expected.update(Files.readAllBytes(cluster.underStoreRoot().resolve("tree").resolve(rel)));
      }
      Path out = dir.resolve("cat.out");
      MultiProcessCluster.ShellResult r = cluster.shellToFile(out, args.toArray(new String[0]));
      assertEquals(0, r.exitCode(), r.stderr());
      try (InputStream in = Files.newInputStream(out)) {
        assertEquals(
            HexFormat.of().formatHex(expected.digest()),
            TestTree.sha256(in),
            "fs cat of the files from " + slice.get(0));
      }
    }
  }

  @Test
  void secondReadIsServedFromTheCache() throws Exception {
    String path = ns(largestFile());
    FileInfo info = fs.getStatus(path);
    readAll(fs, path);
    // The worker copies a missed block into its cache in the background.
    MultiProcessCluster.waitFor(
        "blocks of " + path + " cached",
        Duration.ofSeconds(60),
        () -> cachedBytes(path) == info.getLength(),
        null);
    double hitsBefore = workerSum("strata_worker_cache_hits_total");
    double ufsBefore = workerSum("strata_worker_read_ufs_bytes_total");
    try (FileSystem network =
        FileSystem.connect(
            cluster.clientConfig(Map.of("strata.client.short.circuit.enabled", "false")))) {
      assertEquals(tree.files().get(largestFile()).sha256(), readAll(network, path));
    }
    assertTrue(workerSum("strata_worker_cache_hits_total") > hitsBefore, "no cache hits counted");
    assertEquals(
        ufsBefore,
        workerSum("strata_worker_read_ufs_bytes_total"),
        "a cached read went to the under store");
  }

  @Test
  void positionedReadsAtRandomOffsetsMatchTheSource() throws Exception {
    Random random = new Random(7);
    String rel = largestFile();
    byte[] source = Files.readAllBytes(cluster.underStoreRoot().resolve("tree").resolve(rel));
    try (FileInStream in = fs.openFile(ns(rel))) {
      for (int i = 0; i < 300; i++) {
        int pos = random.nextInt(source.length);
        int len = Math.min(source.length - pos, 1 + random.nextInt(3 * 65536));
        byte[] buf = new byte[len];
        int n = in.read(pos, buf, 0, len);
        assertTrue(n > 0, "nothing read at " + pos);
        for (int k = 0; k < n; k++) {
          if (buf[k] != source[pos + k]) {
            throw new AssertionError("byte " + (pos + k) + " differs after a read at " + pos);
          }
        }
      }
      byte[] tail = new byte[10];
      assertEquals(-1, in.read(source.length, tail, 0, tail.length), "read past the end");
    }
  }

  @Test
  void listingShowsEveryFileAndDirectory() throws Exception {
    MultiProcessCluster.ShellResult r = cluster.shell("fs", "count", "/tree");
    assertEquals(0, r.exitCode(), r.stderr());
    assertTrue(r.stdout().contains(Integer.toString(tree.files().size())), r.stdout());
    MultiProcessCluster.ShellResult ls = cluster.shell("fs", "ls", "-R", "/tree");
    assertEquals(0, ls.exitCode(), ls.stderr());
    for (String rel : tree.files().keySet()) {
      assertTrue(ls.stdout().contains(ns(rel)), "ls -R misses " + rel);
    }
  }

  static String largestFile() {
    return tree.largestFile();
  }

  long cachedBytes(String path) {
    try {
      return fs.getStatus(path).getCachedBytes();
    } catch (Exception e) {
      return -1;
    }
  }

  static double workerSum(String metric) {
    return MultiProcessCluster.metric(cluster.scrapeWorker(0), metric)
        + MultiProcessCluster.metric(cluster.scrapeWorker(1), metric);
  }
}
