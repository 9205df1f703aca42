package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.MountInfo;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;

/**
 * A cluster whose root is mounted on HDFS (a MiniDFSCluster) with a second mount on S3 (an S3Proxy
 * server), as separate processes: reads match both sources, changes made directly in the stores are
 * followed after a sync, a prefix of 100,000 objects lists completely, a 1 GiB file round-trips
 * through multipart upload, and broken stores give clear errors while the cluster keeps serving the
 * rest.
 */
class UnderStoresEndToEndTest {
  static final long BLOCK = 1 << 20;
  static final String BUCKET = "training";
  @TempDir static Path dir;
  static HdfsServer hdfs;
  static S3Server s3;
  static MultiProcessCluster cluster;
  static FileSystem fs;

  @BeforeAll
  static void start() throws Exception {
    hdfs = new HdfsServer(dir.resolve("hdfs"));
    hdfs.fs().mkdirs(new org.apache.hadoop.fs.Path("/strata-root"));
    s3 = new S3Server(Files.createDirectories(dir.resolve("s3")));
    s3.createBucket(BUCKET);
    putS3("data/", new byte[0]); // the prefix to mount: a directory marker
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(2)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .property("strata.master.root.ufs", hdfs.uri("/strata-root"))
            .start();
    fs = FileSystem.connect(cluster.clientConfig());
    fs.mount("/s3", "s3://" + BUCKET + "/data", s3.mountOptions(), false);
  }

  @AfterAll
  static void stop() throws Exception {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (s3 != null) {
      s3.close();
    }
    if (hdfs != null) {
      hdfs.close();
    }
  }

  static void putS3(String key, byte[] bytes) {
    s3.client().putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromBytes(bytes));
  }

  static void putHdfs(String path, byte[] bytes) throws Exception {
    try (FSDataOutputStream out = hdfs.fs().create(new org.apache.hadoop.fs.Path(path), true)) {
      out.write(bytes);
    }
  }

  static String read(FileSystem fs, String path) throws Exception {
    try (InputStream in = fs.openFile(path)) {
      return TestTree.sha256(in);
    }
  }

  static byte[] random(int length, long seed) {
    byte[] b = new byte[length];
    new Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void everyFileReadThroughStrataMatchesItsSourceOnBothStores() throws Exception {
    Path local = dir.resolve("tree");
    TestTree tree = TestTree.generate(local, 150, BLOCK, 2, 17);
    for (String rel : tree.files().keySet()) {
      byte[] bytes = Files.readAllBytes(local.resolve(rel));
      putHdfs("/strata-root/tree/" + rel, bytes);
      putS3("data/tree/" + rel, bytes);
    }
    for (var e : tree.files().entrySet()) {
      assertEquals(e.getValue().sha256(), read(fs, "/tree/" + e.getKey()), "hdfs " + e.getKey());
      assertEquals(e.getValue().sha256(), read(fs, "/s3/tree/" + e.getKey()), "s3 " + e.getKey());
    }
    // Second reads come from the cache; the bytes stay right.
    String big = tree.largestFile();
    assertEquals(tree.files().get(big).sha256(), read(fs, "/s3/tree/" + big));
  }

  @Test
  void loadingFromBothStoresCachesEveryBlockWhereTheHashingSays() throws Exception {
    Path local = dir.resolve("load-tree");
    TestTree tree = TestTree.generate(local, 120, BLOCK, 3, 23);
    for (String rel : tree.files().keySet()) {
      byte[] bytes = Files.readAllBytes(local.resolve(rel));
      putHdfs("/strata-root/loaded/" + rel, bytes);
      putS3("data/loaded/" + rel, bytes);
    }
    List<String> files = new ArrayList<>(tree.files().keySet());
    for (String root : List.of("/loaded", "/s3/loaded")) {
      MultiProcessCluster.ShellResult r = cluster.shell("fs", "load", root);
      assertEquals(0, r.exitCode(), root + ": " + r.stdout() + r.stderr());
      io.strata.proto.LoadJobStatus s = fs.loadStatus(root, 10);
      assertEquals(io.strata.proto.LoadJobState.LOAD_SUCCEEDED, s.getState(), root);
      assertEquals(files.size(), s.getFilesDone(), root);
      LoadEndToEndTest.assertCachedWhereHashingSays(fs, root, files);
    }
    // Served from the cache now: the bytes are right and no worker reads the stores for them.
    double before =
        MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_bytes_total")
            + MultiProcessCluster.metric(
                cluster.scrapeWorker(1), "strata_worker_read_ufs_bytes_total");
    for (int i = 0; i < files.size(); i += 7) {
      String f = files.get(i);
      assertEquals(tree.files().get(f).sha256(), read(fs, "/loaded/" + f), "hdfs " + f);
      assertEquals(tree.files().get(f).sha256(), read(fs, "/s3/loaded/" + f), "s3 " + f);
    }
    double after =
        MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_bytes_total")
            + MultiProcessCluster.metric(
                cluster.scrapeWorker(1), "strata_worker_read_ufs_bytes_total");
    assertEquals(before, after);
  }

  @Test
  void changesMadeDirectlyInTheStoresAreFollowedAfterASync() throws Exception {
    putHdfs("/strata-root/sync/changed.bin", random(3 * (int) BLOCK, 1));
    putHdfs("/strata-root/sync/deleted.bin", random(100, 2));
    putS3("data/sync/changed.bin", random(3 * (int) BLOCK, 3));
    putS3("data/sync/deleted.bin", random(100, 4));
    for (String root : List.of("/sync", "/s3/sync")) {
      read(fs, root + "/changed.bin");
      read(fs, root + "/deleted.bin");
    }
    long oldHdfsId = fs.getStatus("/sync/changed.bin").getFileId();
    long oldS3Id = fs.getStatus("/s3/sync/changed.bin").getFileId();

    byte[] newHdfs = random(3 * (int) BLOCK, 5);
    byte[] newS3 = random(3 * (int) BLOCK, 6);
    putHdfs("/strata-root/sync/changed.bin", newHdfs);
    putS3("data/sync/changed.bin", newS3);
    hdfs.fs().delete(new org.apache.hadoop.fs.Path("/strata-root/sync/deleted.bin"), false);
    s3.client().deleteObject(b -> b.bucket(BUCKET).key("data/sync/deleted.bin"));
    putHdfs("/strata-root/sync/added.txt", "added to hdfs".getBytes(StandardCharsets.UTF_8));
    putS3("data/sync/added.txt", "added to s3".getBytes(StandardCharsets.UTF_8));

    for (String root : List.of("/sync", "/s3/sync")) {
      MultiProcessCluster.ShellResult ls = cluster.shell("fs", "ls", "-R", "--sync", root);
      assertEquals(0, ls.exitCode(), ls.stderr());
      assertTrue(ls.stdout().contains(root + "/added.txt"), ls.stdout());
      assertFalse(ls.stdout().contains("deleted.bin"), ls.stdout());
    }
    assertEquals(TestTree.sha256(newHdfs), read(fs, "/sync/changed.bin"));
    assertEquals(TestTree.sha256(newS3), read(fs, "/s3/sync/changed.bin"));
    assertNotEquals(oldHdfsId, fs.getStatus("/sync/changed.bin").getFileId());
    assertNotEquals(oldS3Id, fs.getStatus("/s3/sync/changed.bin").getFileId());
    try (InputStream in = fs.openFile("/s3/sync/added.txt")) {
      assertEquals("added to s3", new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    assertThrows(StrataException.class, () -> fs.getStatus("/s3/sync/deleted.bin"));
  }

  @Test
  void aPrefixOfOneHundredThousandObjectsListsCompletelyInPages() throws Exception {
    int count = 100_000;
    Path many = Files.createDirectories(s3.objectFile(BUCKET, "data/many"));
    for (int i = 0; i < count; i++) {
      Files.createFile(many.resolve(String.format("obj-%06d", i)));
    }
    int seen = 0;
    String previous = "";
    try (CloseableIterator<FileInfo> it = fs.listStatus("/s3/many")) {
      while (it.hasNext()) {
        String name = it.next().getName();
        assertTrue(name.compareTo(previous) > 0, "listing out of order or repeated at " + name);
        previous = name;
        seen++;
      }
    }
    assertEquals(count, seen);
    MultiProcessCluster.ShellResult countOut = cluster.shell("fs", "count", "/s3/many");
    assertEquals(0, countOut.exitCode(), countOut.stderr());
    assertTrue(countOut.stdout().contains(Integer.toString(count)), countOut.stdout());
  }

  @Test
  void aOneGibFileRoundTripsThroughMultipartUpload() throws Exception {
    long length = 1L << 30;
    MessageDigest written = TestTree.sha256();
    byte[] chunk = new byte[4 << 20];
    Random random = new Random(99);
    try (OutputStream out =
        fs.createFile("/s3/big/one-gib.bin", CreateOptions.defaults().recursive(true))) {
      for (long done = 0; done < length; done += chunk.length) {
        random.nextBytes(chunk);
        written.update(chunk);
        out.write(chunk);
      }
    }
    long stored =
        s3.client().headObject(b -> b.bucket(BUCKET).key("data/big/one-gib.bin")).contentLength();
    assertEquals(length, stored);
    assertEquals(HexFormat.of().formatHex(written.digest()), read(fs, "/s3/big/one-gib.bin"));
    assertEquals(
        0,
        s3.client().listMultipartUploads(b -> b.bucket(BUCKET)).uploads().size(),
        "multipart uploads were left open");
  }

  @Test
  void brokenStoresGiveClearErrorsAndTheClusterKeepsServingTheRest() throws Exception {
    putHdfs("/strata-root/healthy.txt", "still served".getBytes(StandardCharsets.UTF_8));
    Map<String, String> badKeys = new LinkedHashMap<>(s3.mountOptions());
    badKeys.put("s3.secret.key", "wrong");
    StrataException denied =
        assertThrows(
            StrataException.class,
            () -> fs.mount("/denied", "s3://" + BUCKET + "/data", badKeys, false));
    assertTrue(denied.getMessage().contains("Access denied"), denied.getMessage());

    StrataException noBucket =
        assertThrows(
            StrataException.class,
            () -> fs.mount("/nobucket", "s3://no-such-bucket/data", s3.mountOptions(), false));
    assertTrue(noBucket.getMessage().contains("does not exist"), noBucket.getMessage());

    // A second S3 server that goes away after a file has been listed.
    S3Server doomed = new S3Server(Files.createDirectories(dir.resolve("s3-doomed")));
    doomed.createBucket("gone");
    doomed
        .client()
        .putObject(b -> b.bucket("gone").key("d/file.bin"), RequestBody.fromBytes(random(1000, 7)));
    Map<String, String> options = new LinkedHashMap<>(doomed.mountOptions());
    options.put("s3.retry.max.attempts", "1");
    fs.mount("/doomed", "s3://gone/d", options, false);
    assertEquals(1000, fs.getStatus("/doomed/file.bin").getLength());
    doomed.close();
    StrataException unreachable =
        assertThrows(StrataException.class, () -> read(fs, "/doomed/file.bin"));
    assertTrue(unreachable.getMessage().contains("Cannot reach S3"), unreachable.getMessage());

    try (InputStream in = fs.openFile("/healthy.txt")) {
      assertEquals("still served", new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    MultiProcessCluster.ShellResult mounts = cluster.shell("fs", "mount");
    assertEquals(0, mounts.exitCode(), mounts.stderr());
    assertFalse(mounts.stdout().contains(S3Server.SECRET_KEY), "a secret was printed");
    assertTrue(mounts.stdout().contains("/s3"), mounts.stdout());
    List<MountInfo> listed = fs.listMounts();
    assertTrue(
        listed.stream().noneMatch(m -> m.getOptionsMap().containsValue(S3Server.SECRET_KEY)));
  }
}
