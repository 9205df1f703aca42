package io.strata.tests.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * The proxy's memory bound and large transfers, against a proxy started with a 256 MiB heap and
 * bounded direct memory: 16 uploads and 16 downloads of 256 MiB at once (bodies streamed, never
 * held), and a 1 GiB multipart upload of 8 parts sent in parallel, then read back in ranges. Object
 * bytes come from a seeded generator on both sides, so the test holds none of them either; every
 * byte is compared by digest.
 */
class S3ProxyLargeTransfersTest {
  private static final long MIB = 1 << 20;

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster =
        S3ProxyTestCluster.start(
            dir.resolve("cluster"),
            Map.of(),
            List.of(
                "-Xmx256m",
                "-XX:MaxDirectMemorySize=128m",
                "-XX:+UseSerialGC",
                "-XX:+HeapDumpOnOutOfMemoryError",
                "-XX:HeapDumpPath=" + dir));
    s3 =
        S3Client.builder()
            .endpointOverride(cluster.endpoint)
            .region(Region.US_EAST_1)
            .forcePathStyle(true)
            .httpClientBuilder(
                ApacheHttpClient.builder().maxConnections(64).socketTimeout(Duration.ofMinutes(5)))
            .overrideConfiguration(c -> c.apiCallTimeout(Duration.ofMinutes(10)))
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(
                        S3ProxyTestCluster.ACCESS_KEY, S3ProxyTestCluster.SECRET_KEY)))
            .build();
    s3.createBucket(b -> b.bucket("big"));
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** {@code length} bytes of a seeded stream, produced as they are read. */
  static InputStream generated(long seed, long length) {
    return new InputStream() {
      private final Random random = new Random(seed);
      private final byte[] block = new byte[8192];
      private int blockPos = block.length;
      private long left = length;

      @Override
      public int read() {
        byte[] one = new byte[1];
        return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        if (left == 0) {
          return -1;
        }
        if (blockPos == block.length) {
          random.nextBytes(block);
          blockPos = 0;
        }
        int n = (int) Math.min(Math.min(len, block.length - blockPos), left);
        System.arraycopy(block, blockPos, b, off, n);
        blockPos += n;
        left -= n;
        return n;
      }
    };
  }

  static String sha256(InputStream in) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    byte[] buf = new byte[256 << 10];
    int n;
    while ((n = in.read(buf)) > 0) {
      md.update(buf, 0, n);
    }
    return HexFormat.of().formatHex(md.digest());
  }

  private static void put(String key, long seed, long length) {
    s3.putObject(
        b -> b.bucket("big").key(key).contentLength(length),
        RequestBody.fromContentProvider(
            () -> generated(seed, length), length, "application/octet-stream"));
  }

  private static String getDigest(String key, String range) throws Exception {
    try (ResponseInputStream<GetObjectResponse> in =
        s3.getObject(
            b -> {
              b.bucket("big").key(key);
              if (range != null) {
                b.range(range);
              }
            })) {
      return sha256(in);
    }
  }

  @Test
  void sixteenConcurrentUploadsAndDownloadsOf256MiBFitInA256MiBHeap() throws Exception {
    int n = 16;
    long size = 256 * MIB;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<?>> puts = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        puts.add(
            pool.submit(
                () -> {
                  put("many/" + k, 100 + k, size);
                  return null;
                }));
      }
      for (Future<?> f : puts) {
        f.get(10, TimeUnit.MINUTES);
      }
      List<Future<String>> gets = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int k = i;
        gets.add(pool.submit(() -> getDigest("many/" + k, null)));
      }
      for (int i = 0; i < n; i++) {
        assertEquals(
            sha256(generated(100 + i, size)), gets.get(i).get(10, TimeUnit.MINUTES), "object " + i);
      }
    } finally {
      pool.shutdownNow();
    }
    assertTrue(cluster.cluster.proxyProcess().isAlive(), "the proxy died");
    Path out = cluster.cluster.logsDir().resolve("proxy.out");
    String printed = Files.exists(out) ? Files.readString(out) : "";
    assertTrue(!printed.contains("OutOfMemoryError"), printed);
    assertTrue(
        !Files.readString(cluster.cluster.logsDir().resolve("proxy.log"))
            .contains("OutOfMemoryError"),
        "the proxy logged an OutOfMemoryError");
    // Every object landed whole in the under store.
    assertEquals(size, Files.size(cluster.cluster.underStoreRoot().resolve("big/many/7")));
    for (int i = 0; i < n; i++) {
      String key = "many/" + i;
      s3.deleteObject(b -> b.bucket("big").key(key));
    }
  }

  @Test
  void aOneGibMultipartUploadOfEightParallelPartsReadsBackWholeAndInRanges() throws Exception {
    int parts = 8;
    long partSize = 128 * MIB;
    String id = s3.createMultipartUpload(b -> b.bucket("big").key("gib.bin")).uploadId();
    ExecutorService pool = Executors.newFixedThreadPool(parts);
    List<CompletedPart> done = new ArrayList<>();
    try {
      List<Future<CompletedPart>> futures = new ArrayList<>();
      for (int p = 1; p <= parts; p++) {
        int number = p;
        futures.add(
            pool.submit(
                () ->
                    CompletedPart.builder()
                        .partNumber(number)
                        .eTag(
                            s3.uploadPart(
                                    b ->
                                        b.bucket("big")
                                            .key("gib.bin")
                                            .uploadId(id)
                                            .partNumber(number)
                                            .contentLength(partSize),
                                    RequestBody.fromContentProvider(
                                        () -> generated(number, partSize),
                                        partSize,
                                        "application/octet-stream"))
                                .eTag())
                        .build()));
      }
      for (Future<CompletedPart> f : futures) {
        done.add(f.get(10, TimeUnit.MINUTES));
      }
    } finally {
      pool.shutdownNow();
    }
    String etag =
        s3.completeMultipartUpload(
                b ->
                    b.bucket("big").key("gib.bin").uploadId(id).multipartUpload(m -> m.parts(done)))
            .eTag();
    assertTrue(etag.endsWith("-" + parts + "\""), etag);
    assertEquals(
        parts * partSize, s3.headObject(b -> b.bucket("big").key("gib.bin")).contentLength());

    // The whole object is the parts in order; ranges across part boundaries read right.
    MessageDigest whole = MessageDigest.getInstance("SHA-256");
    byte[] buf = new byte[256 << 10];
    for (int p = 1; p <= parts; p++) {
      try (InputStream in = generated(p, partSize)) {
        int n;
        while ((n = in.read(buf)) > 0) {
          whole.update(buf, 0, n);
        }
      }
    }
    assertEquals(HexFormat.of().formatHex(whole.digest()), getDigest("gib.bin", null));
    long boundary = 3 * partSize;
    byte[] expected = new byte[2 << 20];
    try (InputStream a = generated(3, partSize);
        InputStream b = generated(4, partSize)) {
      a.skipNBytes(partSize - MIB);
      a.readNBytes(expected, 0, (int) MIB);
      b.readNBytes(expected, (int) MIB, (int) MIB);
    }
    byte[] got =
        s3.getObjectAsBytes(
                b ->
                    b.bucket("big")
                        .key("gib.bin")
                        .range("bytes=" + (boundary - MIB) + "-" + (boundary + MIB - 1)))
            .asByteArray();
    assertArrayEquals(expected, got);
    byte[] tail =
        s3.getObjectAsBytes(b -> b.bucket("big").key("gib.bin").range("bytes=-1000")).asByteArray();
    byte[] expectedTail;
    try (InputStream in = generated(8, partSize)) {
      in.skipNBytes(partSize - 1000);
      expectedTail = in.readAllBytes();
    }
    assertArrayEquals(expectedTail, tail);
    assertEquals(
        parts * partSize, Files.size(cluster.cluster.underStoreRoot().resolve("big/gib.bin")));
    s3.deleteObject(b -> b.bucket("big").key("gib.bin"));
  }
}
