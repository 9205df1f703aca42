package io.strata.tests.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.SetAttributeOptions;
import io.strata.tests.HdfsServer;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.S3Server;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The S3 proxy over an S3 under store (an S3Proxy server) and over HDFS (a MiniDFSCluster), each
 * mounted as a bucket: a multipart upload completes without its bytes passing through the proxy
 * (the store joins the staged parts where they are), its object is the parts' bytes read whole and
 * by range through the proxy and found in the store at its key, no part is left behind in the
 * store, and keys written to the store directly list in S3's order with and without a delimiter.
 */
class S3ProxyUnderStoresTest {
  private static final int MIB = 1 << 20;

  /** The bucket of the S3 server, and the prefix of it mounted as the proxy's bucket. */
  private static final String STORE_BUCKET = "store";

  private static final String STORE_PREFIX = "data/";
  private static final String HDFS_DIR = "/warehouse";

  @TempDir static Path dir;
  static HdfsServer hdfs;

  /** Writes files into HDFS behind Strata's back. */
  static org.apache.hadoop.fs.FileSystem hdfsWriter;

  static S3Server s3server;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    hdfs = new HdfsServer(dir.resolve("hdfs"));
    hdfs.fs().mkdirs(new org.apache.hadoop.fs.Path(HDFS_DIR));
    Configuration conf = new Configuration(hdfs.fs().getConf());
    // A closing writer asks the namenode again after this long while the datanode has not
    // reported its last block yet; Hadoop's 400 ms makes a few hundred small files a minute.
    conf.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 10);
    hdfsWriter = org.apache.hadoop.fs.FileSystem.newInstance(hdfs.fs().getUri(), conf);
    s3server = new S3Server(Files.createDirectories(dir.resolve("s3")));
    s3server.createBucket(STORE_BUCKET);
    s3server.client().putObject(b -> b.bucket(STORE_BUCKET).key(STORE_PREFIX), RequestBody.empty());
    cluster = S3ProxyTestCluster.start(dir.resolve("cluster"));
    cluster.fs().mount("/s3data", "s3://" + STORE_BUCKET + "/data", s3server.mountOptions(), false);
    cluster
        .fs()
        .mount("/hdfsdata", hdfs.uri(HDFS_DIR), Map.of("hdfs.conf.dfs.replication", "1"), false);
    // The proxy's user creates objects in the buckets as their owner.
    String user = System.getProperty("user.name");
    for (String bucket : List.of("/s3data", "/hdfsdata")) {
      cluster.fs().setAttribute(bucket, SetAttributeOptions.defaults().owner(user).mode(0755));
    }
    s3 = cluster.client();
  }

  @AfterAll
  static void stop() throws Exception {
    if (cluster != null) {
      cluster.close();
    }
    if (s3server != null) {
      s3server.close();
    }
    if (hdfsWriter != null) {
      hdfsWriter.close();
    }
    if (hdfs != null) {
      hdfs.close();
    }
  }

  /** The bytes at a key of a bucket, read from its under store directly. */
  static byte[] inStore(String bucket, String key) throws IOException {
    if (bucket.equals("s3data")) {
      return s3server
          .client()
          .getObjectAsBytes(b -> b.bucket(STORE_BUCKET).key(STORE_PREFIX + key))
          .asByteArray();
    }
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(HDFS_DIR + "/" + key);
    byte[] data = new byte[(int) hdfs.fs().getFileStatus(p).getLen()];
    try (var in = hdfs.fs().open(p)) {
      in.readFully(0, data);
    }
    return data;
  }

  /** Writes a key into a bucket's under store directly, behind Strata's back. */
  static void putInStore(String bucket, String key, byte[] data) throws IOException {
    if (bucket.equals("s3data")) {
      s3server
          .client()
          .putObject(
              b -> b.bucket(STORE_BUCKET).key(STORE_PREFIX + key), RequestBody.fromBytes(data));
      return;
    }
    try (FSDataOutputStream out =
        hdfsWriter.create(new org.apache.hadoop.fs.Path(HDFS_DIR + "/" + key), true)) {
      out.write(data);
    }
  }

  /**
   * Every file below a folder of a bucket's under store, relative to it: S3's keys but folder
   * markers; HDFS's files, hidden temporary ones too.
   */
  static List<String> filesInStore(String bucket, String folder) throws IOException {
    List<String> out = new ArrayList<>();
    if (bucket.equals("s3data")) {
      String prefix = STORE_PREFIX + folder;
      s3server
          .client()
          .listObjectsV2Paginator(b -> b.bucket(STORE_BUCKET).prefix(prefix))
          .contents()
          .stream()
          .filter(o -> !o.key().endsWith("/")) // folder markers
          .forEach(o -> out.add(o.key().substring(prefix.length())));
    } else {
      org.apache.hadoop.fs.Path base = new org.apache.hadoop.fs.Path(HDFS_DIR + "/" + folder);
      if (hdfs.fs().exists(base)) {
        var it = hdfs.fs().listFiles(base, true);
        while (it.hasNext()) {
          String p = it.next().getPath().toUri().getPath();
          out.add(p.substring(base.toUri().getPath().length() + 1));
        }
      }
    }
    out.sort(null);
    return out;
  }

  /** Bytes the proxy, as a client of the cluster, read and wrote of files, from its metrics. */
  static double proxyFileBytes() {
    String scrape = MultiProcessCluster.scrapePort(cluster.cluster.proxyWebPort());
    return MultiProcessCluster.metric(scrape, "strata_client_read_remote_bytes_total")
        + MultiProcessCluster.metric(scrape, "strata_client_read_short_circuit_bytes_total")
        + MultiProcessCluster.metric(scrape, "strata_client_read_ufs_bytes_total")
        + MultiProcessCluster.metric(scrape, "strata_client_write_bytes_total");
  }

  /** ConcatFiles calls the worker served. */
  static double workerConcatCalls() {
    for (String line : cluster.cluster.scrapeWorker(0).split("\n")) {
      if (line.startsWith("strata_worker_rpc_latency_seconds_count{")
          && line.contains("method=\"ConcatFiles\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }

  /** An upload whose parts are all uploaded. */
  record Upload(String bucket, String key, String id, List<CompletedPart> parts) {
    /** Completes it; returns the ETag. */
    String complete() {
      return s3.completeMultipartUpload(
              b -> b.bucket(bucket).key(key).uploadId(id).multipartUpload(m -> m.parts(parts)))
          .eTag();
    }
  }

  static Upload uploadParts(String bucket, String key, List<byte[]> parts) {
    String id = s3.createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
    List<CompletedPart> done = new ArrayList<>();
    for (int i = 0; i < parts.size(); i++) {
      int number = i + 1;
      String etag =
          s3.uploadPart(
                  b -> b.bucket(bucket).key(key).uploadId(id).partNumber(number),
                  RequestBody.fromBytes(parts.get(number - 1)))
              .eTag();
      done.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
    }
    return new Upload(bucket, key, id, done);
  }

  /** The ids of the blocks of HDFS files, in the order given. */
  static List<Long> hdfsBlocks(List<String> paths) throws IOException {
    List<Long> ids = new ArrayList<>();
    for (String p : paths) {
      hdfs.fs()
          .getClient()
          .getLocatedBlocks(p, 0)
          .getLocatedBlocks()
          .forEach(b -> ids.add(b.getBlock().getBlockId()));
    }
    return ids;
  }

  static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  static byte[] joined(List<byte[]> parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    parts.forEach(all::writeBytes);
    return all.toByteArray();
  }

  @ParameterizedTest
  @ValueSource(strings = {"s3data", "hdfsdata"})
  void aMultipartUploadIsJoinedInTheUnderStoreWithoutPassingThroughTheProxy(String bucket)
      throws Exception {
    String key = "uploads/model #1.bin";
    List<byte[]> parts = List.of(random(6 * MIB, 1), random(5 * MIB + 17, 2), random(MIB + 3, 3));
    byte[] object = joined(parts);
    double bytesBefore = proxyFileBytes();
    double concatsBefore = workerConcatCalls();
    Upload upload = uploadParts(bucket, key, parts);
    List<String> staged = filesInStore(bucket, ".strata-uploads/" + upload.id() + "/");
    assertEquals(List.of("00001", "00002", "00003"), staged, "the parts are files of the store");
    List<Long> partBlocks =
        bucket.equals("hdfsdata")
            ? hdfsBlocks(
                staged.stream()
                    .map(n -> HDFS_DIR + "/.strata-uploads/" + upload.id() + "/" + n)
                    .toList())
            : null;

    String etag = upload.complete();

    assertTrue(etag.endsWith("-3\""), etag);
    double partBytes = object.length;
    assertEquals(
        bytesBefore + partBytes,
        proxyFileBytes(),
        partBytes / 100,
        "the proxy moved bytes beyond writing the parts once");
    assertEquals(concatsBefore + 1, workerConcatCalls());
    assertArrayEquals(object, s3.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray());
    byte[] range =
        s3.getObjectAsBytes(b -> b.bucket(bucket).key(key).range("bytes=6291000-11534500"))
            .asByteArray();
    assertArrayEquals(
        Arrays.copyOfRange(object, 6_291_000, 11_534_501),
        range,
        "a range across the joined parts");
    assertArrayEquals(object, inStore(bucket, key));
    if (bucket.equals("hdfsdata")) {
      assertEquals(
          partBlocks,
          hdfsBlocks(List.of(HDFS_DIR + "/" + key)),
          "the namenode moved the parts' blocks into the object");
    } else {
      String storeEtag =
          s3server.client().headObject(b -> b.bucket(STORE_BUCKET).key(STORE_PREFIX + key)).eTag();
      assertTrue(
          storeEtag.endsWith("-3\""),
          "S3 assembled the object from the three parts" + " it copied: " + storeEtag);
    }
    assertEquals(List.of("model #1.bin"), filesInStore(bucket, "uploads/"));
    assertEquals(
        List.of(), filesInStore(bucket, ".strata-uploads/"), "parts were left in the store");

    // A second upload replaces the object: joined aside in the uploads folder, then moved.
    List<byte[]> again = List.of(random(5 * MIB, 4), random(100, 5));
    uploadParts(bucket, key, again).complete();
    assertArrayEquals(
        joined(again), s3.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray());
    assertArrayEquals(joined(again), inStore(bucket, key));
    assertEquals(List.of("model #1.bin"), filesInStore(bucket, "uploads/"));
    assertEquals(
        List.of(),
        filesInStore(bucket, ".strata-uploads/"),
        "parts or staged objects were left in the store");
  }

  @ParameterizedTest
  @ValueSource(strings = {"s3data", "hdfsdata"})
  void keysWrittenToTheStoreListInS3OrderWithAndWithoutADelimiter(String bucket) throws Exception {
    TreeSet<String> keys = new TreeSet<>();
    for (int d = 0; d < 10; d++) {
      for (int i = 0; i < 30; i++) {
        keys.add(String.format("list/dir-%d/obj-%03d", d, i));
      }
    }
    for (int i = 0; i < 5; i++) {
      keys.add("list/top-" + i);
    }
    // '.' sorts before '/': this key comes before the keys below list/dir-1/.
    keys.add("list/dir-1.txt");
    for (String k : keys) {
      putInStore(bucket, k, k.getBytes(StandardCharsets.UTF_8));
    }
    cluster.loadFromUnderStore("/" + bucket + "/list");

    List<String> listed = new ArrayList<>();
    for (ListObjectsV2Response page :
        s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix("list/").maxKeys(100))) {
      page.contents().forEach((S3Object o) -> listed.add(o.key()));
    }
    assertEquals(new ArrayList<>(keys), listed, "keys in S3's order, each once");

    List<String> prefixes = new ArrayList<>();
    List<String> files = new ArrayList<>();
    for (ListObjectsV2Response page :
        s3.listObjectsV2Paginator(
            b -> b.bucket(bucket).prefix("list/").delimiter("/").maxKeys(4))) {
      page.commonPrefixes().forEach((CommonPrefix p) -> prefixes.add(p.prefix()));
      page.contents().forEach((S3Object o) -> files.add(o.key()));
    }
    List<String> expectedPrefixes = new ArrayList<>();
    for (int d = 0; d < 10; d++) {
      expectedPrefixes.add("list/dir-" + d + "/");
    }
    assertEquals(expectedPrefixes, prefixes);
    assertEquals(
        List.of(
            "list/dir-1.txt", "list/top-0", "list/top-1", "list/top-2", "list/top-3", "list/top-4"),
        files);
    assertArrayEquals(
        "list/dir-7/obj-029".getBytes(StandardCharsets.UTF_8),
        s3.getObjectAsBytes(b -> b.bucket(bucket).key("list/dir-7/obj-029")).asByteArray());
  }
}
