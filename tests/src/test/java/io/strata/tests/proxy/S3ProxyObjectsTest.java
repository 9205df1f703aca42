package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static io.strata.tests.proxy.S3ProxyTestCluster.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.strata.client.SetAttributeOptions;
import io.strata.common.WriteTypeAttribute;
import io.strata.proto.PersistenceState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.DeletedObject;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectRequest;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Objects through the S3 proxy with the AWS SDK for Java v2: what is written is what is read, what
 * the under store holds and what the namespace lists, byte for byte, whatever the addressing,
 * signing and checksum; metadata, conditions, ranges and key names as S3 has them.
 */
class S3ProxyObjectsTest {
  private static final String BUCKET = "objects";
  private static final DateTimeFormatter HTTP_DATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  /** Clients of the test user by [virtual host][chunked signing]. */
  static final S3Client[][] CLIENTS = new S3Client[2][2];

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
    for (int v = 0; v < 2; v++) {
      for (int c = 0; c < 2; c++) {
        CLIENTS[v][c] =
            cluster.client(
                S3ProxyTestCluster.ACCESS_KEY, S3ProxyTestCluster.SECRET_KEY, v == 1, c == 1);
      }
    }
    s3.createBucket(b -> b.bucket(BUCKET));
  }

  static S3Client client(boolean virtualHost, boolean chunked) {
    return CLIENTS[virtualHost ? 1 : 0][chunked ? 1 : 0];
  }

  @AfterAll
  static void stop() {
    for (S3Client[] row : CLIENTS) {
      for (S3Client c : row) {
        if (c != null) {
          c.close();
        }
      }
    }
    if (s3 != null) {
      s3.close();
    }
  }

  static String md5Hex(byte[] data) throws Exception {
    return Checksums.md5Hex(data);
  }

  static String b64(byte[] b) {
    return Checksums.base64(b);
  }

  static String putChecksum(PutObjectResponse r, ChecksumAlgorithm a) {
    return switch (a) {
      case CRC32 -> r.checksumCRC32();
      case CRC32_C -> r.checksumCRC32C();
      case CRC64_NVME -> r.checksumCRC64NVME();
      case SHA1 -> r.checksumSHA1();
      case SHA256 -> r.checksumSHA256();
      default -> throw new IllegalArgumentException(a.toString());
    };
  }

  static String getChecksum(GetObjectResponse r, ChecksumAlgorithm a) {
    return switch (a) {
      case CRC32 -> r.checksumCRC32();
      case CRC32_C -> r.checksumCRC32C();
      case CRC64_NVME -> r.checksumCRC64NVME();
      case SHA1 -> r.checksumSHA1();
      case SHA256 -> r.checksumSHA256();
      default -> throw new IllegalArgumentException(a.toString());
    };
  }

  private static byte[] get(String key) {
    return s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray();
  }

  private static byte[] ufsBytes(String key) throws Exception {
    return Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key));
  }

  private static boolean exists(String key) {
    try {
      s3.headObject(b -> b.bucket(BUCKET).key(key));
      return true;
    } catch (NoSuchKeyException e) {
      return false;
    }
  }

  @Test
  void putGetHeadListAndDeleteRoundTripWithTheUnderStore() throws Exception {
    s3.createBucket(b -> b.bucket("basics"));
    byte[] data = random(300_000, 1);
    PutObjectResponse put =
        s3.putObject(
            b ->
                b.bucket("basics")
                    .key("dir/a b+c.bin")
                    .contentType("application/x-test")
                    .metadata(Map.of("colour", "blue")),
            RequestBody.fromBytes(data));
    assertEquals("\"" + md5Hex(data) + "\"", put.eTag());
    ResponseBytes<GetObjectResponse> got =
        s3.getObjectAsBytes(b -> b.bucket("basics").key("dir/a b+c.bin"));
    assertArrayEquals(data, got.asByteArray());
    assertEquals(put.eTag(), got.response().eTag());
    assertEquals("application/x-test", got.response().contentType());
    assertEquals("blue", got.response().metadata().get("colour"));
    // The object is a file of the under store, byte for byte.
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/basics/dir/a b+c.bin")));
    assertEquals(List.of("dir/a b+c.bin"), cluster.namespaceKeys("/basics"));

    HeadObjectResponse head = s3.headObject(b -> b.bucket("basics").key("dir/a b+c.bin"));
    assertEquals(data.length, head.contentLength());
    assertEquals(put.eTag(), head.eTag());
    assertEquals(
        cluster.fs().getStatus("/basics/dir/a b+c.bin").getModificationTimeMs() / 1000,
        head.lastModified().getEpochSecond());

    ListObjectsV2Response list = s3.listObjectsV2(b -> b.bucket("basics"));
    assertEquals(List.of("dir/a b+c.bin"), list.contents().stream().map(S3Object::key).toList());
    assertEquals(data.length, list.contents().get(0).size());
    assertEquals(put.eTag(), list.contents().get(0).eTag());

    s3.deleteObject(b -> b.bucket("basics").key("dir/a b+c.bin"));
    assertThrows(
        NoSuchKeyException.class,
        () -> s3.headObject(b -> b.bucket("basics").key("dir/a b+c.bin")));
    assertS3Error(
        "NoSuchKey", 404, () -> s3.getObjectAsBytes(b -> b.bucket("basics").key("dir/a b+c.bin")));
    // Deleting a key that is not there succeeds, as in S3.
    s3.deleteObject(b -> b.bucket("basics").key("dir/a b+c.bin"));
    s3.deleteBucket(b -> b.bucket("basics"));
    assertFalse(Files.exists(cluster.ufs("/basics")));
  }

  /**
   * A bucket whose folder sets ASYNC_THROUGH: a small PUT of a new key answers with the bytes in a
   * worker's cache only, readable at once with their metadata; a persist then writes them to the
   * under store (this cluster's master persists only when asked). A PUT over the key writes
   * through.
   */
  @Test
  void aBucketWithAsyncThroughAnswersPutsBeforeTheStoreHasThem() throws Exception {
    s3.createBucket(b -> b.bucket("async"));
    cluster
        .fs()
        .setAttribute(
            "/async",
            SetAttributeOptions.defaults()
                .xattr(WriteTypeAttribute.NAME, ByteString.copyFromUtf8("ASYNC_THROUGH")));
    cluster.fs().createDirectory("/async/dir", false, false);
    byte[] data = random(20_000, 11);
    PutObjectResponse put =
        s3.putObject(
            b -> b.bucket("async").key("dir/shard-0").metadata(Map.of("part", "0")),
            RequestBody.fromBytes(data));
    assertEquals(
        PersistenceState.PERSISTENCE_TO_BE_PERSISTED,
        cluster.fs().getStatus("/async/dir/shard-0").getPersistenceState());
    assertFalse(Files.exists(cluster.ufs("/async/dir/shard-0")));
    ResponseBytes<GetObjectResponse> got =
        s3.getObjectAsBytes(b -> b.bucket("async").key("dir/shard-0"));
    assertArrayEquals(data, got.asByteArray());
    assertEquals(put.eTag(), got.response().eTag());
    assertEquals("0", got.response().metadata().get("part"));
    assertEquals(
        List.of("dir/shard-0"),
        s3.listObjectsV2(b -> b.bucket("async")).contents().stream().map(S3Object::key).toList());

    assertEquals(
        PersistenceState.PERSISTENCE_PERSISTED,
        cluster.fs().persist("/async/dir/shard-0").getPersistenceState());
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/async/dir/shard-0")));

    byte[] again = random(30_000, 12);
    s3.putObject(b -> b.bucket("async").key("dir/shard-0"), RequestBody.fromBytes(again));
    assertArrayEquals(again, Files.readAllBytes(cluster.ufs("/async/dir/shard-0")));
    assertArrayEquals(
        again, s3.getObjectAsBytes(b -> b.bucket("async").key("dir/shard-0")).asByteArray());
  }

  @Test
  void everyAddressingSigningAndChecksumStoresAndReturnsTheSameBytes() throws Exception {
    // The check value of CRC-64/NVME, so that the expected values below are right.
    assertEquals(
        0xae8b14860a799888L, Checksums.crc64Nvme("123456789".getBytes(StandardCharsets.UTF_8)));
    List<ChecksumAlgorithm> algorithms =
        Arrays.asList(
            null,
            ChecksumAlgorithm.CRC32,
            ChecksumAlgorithm.CRC32_C,
            ChecksumAlgorithm.CRC64_NVME,
            ChecksumAlgorithm.SHA1,
            ChecksumAlgorithm.SHA256);
    int round = 0;
    for (boolean virtualHost : new boolean[] {false, true}) {
      for (boolean chunked : new boolean[] {false, true}) {
        S3Client c = client(virtualHost, chunked);
        for (ChecksumAlgorithm a : algorithms) {
          round++;
          String what =
              (virtualHost ? "virtual-host" : "path")
                  + ", "
                  + (chunked ? "chunked" : "unchunked")
                  + ", "
                  + (a == null ? "default" : a);
          // Over 128 KiB, so that chunked signing sends several chunks.
          byte[] data = random(200_000 + round, round);
          String key = "matrix/" + round + " " + (a == null ? "default" : a.toString());
          // The SDK's default is CRC32.
          ChecksumAlgorithm used = a == null ? ChecksumAlgorithm.CRC32 : a;
          String expected = Checksums.of(used, data);
          boolean crc64 = used == ChecksumAlgorithm.CRC64_NVME;
          // The SDK computes CRC64NVME only with the CRT library: the value is given to it.
          PutObjectResponse put =
              c.putObject(
                  b -> {
                    b.bucket(BUCKET).key(key);
                    if (crc64) {
                      b.checksumCRC64NVME(expected);
                    } else {
                      b.checksumAlgorithm(a);
                    }
                  },
                  RequestBody.fromBytes(data));
          assertEquals(expected, putChecksum(put, used), what);
          assertEquals("\"" + md5Hex(data) + "\"", put.eTag(), what);

          if (crc64) {
            S3ProxyTestCluster.Response got =
                cluster.signed(
                    "GET",
                    "/" + BUCKET + "/" + encodePath(key),
                    Map.of("x-amz-checksum-mode", "ENABLED"),
                    null,
                    S3ProxyTestCluster.ACCESS_KEY,
                    S3ProxyTestCluster.SECRET_KEY,
                    Clock.systemUTC());
            assertEquals(200, got.status(), what);
            assertArrayEquals(data, got.body(), what);
            assertEquals(expected, got.header(Checksums.header(used)), what);
            assertEquals("FULL_OBJECT", got.header("x-amz-checksum-type"), what);
            assertEquals(put.eTag(), got.header("ETag"), what);
            assertNull(got.header("Content-Encoding"), what);
          } else {
            // The SDK checks the checksum it gets against the bytes.
            ResponseBytes<GetObjectResponse> got =
                c.getObjectAsBytes(
                    b -> b.bucket(BUCKET).key(key).checksumMode(ChecksumMode.ENABLED));
            assertArrayEquals(data, got.asByteArray(), what);
            assertEquals(expected, getChecksum(got.response(), used), what);
            assertEquals("FULL_OBJECT", got.response().checksumTypeAsString(), what);
            assertEquals(put.eTag(), got.response().eTag(), what);
            // Stored without the framing of chunked signing, whose encoding is not the
            // object's.
            assertNull(got.response().contentEncoding(), what);
          }
          assertArrayEquals(data, ufsBytes(key), what);

          HeadObjectResponse head = c.headObject(b -> b.bucket(BUCKET).key(key));
          assertEquals(data.length, head.contentLength(), what);
          assertEquals(put.eTag(), head.eTag(), what);
          assertNull(head.contentEncoding(), what);

          c.deleteObject(b -> b.bucket(BUCKET).key(key));
          assertThrows(
              NoSuchKeyException.class, () -> c.headObject(b -> b.bucket(BUCKET).key(key)), what);
          assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/" + key)), what);
        }
      }
    }
    assertFalse(
        Files.exists(cluster.ufs("/" + BUCKET + "/matrix")),
        "the emptied folder went with its last key");
  }

  @Test
  void virtualHostStyleAddressesTheBucketByHostName() throws Exception {
    s3.createBucket(b -> b.bucket("vhost"));
    S3Client v = client(true, false);
    byte[] data = "virtual host".getBytes(StandardCharsets.UTF_8);
    v.putObject(b -> b.bucket("vhost").key("k/é x+y"), RequestBody.fromBytes(data));
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/vhost/k/é x+y")));
    assertArrayEquals(
        data, s3.getObjectAsBytes(b -> b.bucket("vhost").key("k/é x+y")).asByteArray());
    assertEquals(
        List.of("k/é x+y"),
        v.listObjectsV2(b -> b.bucket("vhost")).contents().stream().map(S3Object::key).toList());
    v.headBucket(b -> b.bucket("vhost"));
    // Bucket calls name the bucket in the host too; ListBuckets is the domain itself.
    v.createBucket(b -> b.bucket("vhost-made"));
    assertTrue(Files.isDirectory(cluster.ufs("/vhost-made")));
    assertTrue(
        v.listBuckets().buckets().stream()
            .map(x -> x.name())
            .toList()
            .containsAll(List.of("vhost", "vhost-made")));
    v.putObject(b -> b.bucket("vhost-made").key("x"), RequestBody.fromString("x"));
    assertS3Error("BucketNotEmpty", 409, () -> v.deleteBucket(b -> b.bucket("vhost-made")));
    v.deleteObjects(b -> b.bucket("vhost-made").delete(d -> d.objects(o -> o.key("x"))));
    v.deleteBucket(b -> b.bucket("vhost-made"));
    assertFalse(Files.exists(cluster.ufs("/vhost-made")));
    assertS3Error("NoSuchBucket", 404, () -> v.listObjectsV2(b -> b.bucket("vhost-missing")));
    v.deleteObject(b -> b.bucket("vhost").key("k/é x+y"));
    v.deleteBucket(b -> b.bucket("vhost"));
    assertFalse(Files.exists(cluster.ufs("/vhost")));
  }

  @Test
  void contentMd5AndChecksumsAreVerifiedAndAFailedOneStoresNothing() throws Exception {
    byte[] data = random(70_000, 7);
    String md5 = b64(Checksums.md5(data));
    s3.putObject(
        b -> b.bucket(BUCKET).key("md5/good").contentMD5(md5), RequestBody.fromBytes(data));
    assertArrayEquals(data, get("md5/good"));

    String wrong = b64(Checksums.md5("other".getBytes(StandardCharsets.UTF_8)));
    for (boolean chunked : new boolean[] {false, true}) {
      S3Client c = client(false, chunked);
      assertS3Error(
          "BadDigest",
          400,
          () ->
              c.putObject(
                  b -> b.bucket(BUCKET).key("md5/bad").contentMD5(wrong),
                  RequestBody.fromBytes(data)));
      assertFalse(exists("md5/bad"));
      assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/md5/bad")));
      assertFalse(cluster.fs().exists("/" + BUCKET + "/md5/bad"));
      // A failed replacement leaves the object as it was.
      assertS3Error(
          "BadDigest",
          400,
          () ->
              c.putObject(
                  b -> b.bucket(BUCKET).key("md5/good").contentMD5(wrong),
                  RequestBody.fromBytes(random(10, 1))));
      assertArrayEquals(data, get("md5/good"));
      assertArrayEquals(data, ufsBytes("md5/good"));
      // A flexible checksum given by the client that the bytes do not have.
      assertS3Error(
          "BadDigest",
          400,
          () ->
              c.putObject(
                  b -> b.bucket(BUCKET).key("md5/bad").checksumCRC32("AAAAAA=="),
                  RequestBody.fromBytes(data)));
      assertS3Error(
          "BadDigest",
          400,
          () ->
              c.putObject(
                  b -> b.bucket(BUCKET).key("md5/bad").checksumSHA256(b64(new byte[32])),
                  RequestBody.fromBytes(data)));
      assertFalse(exists("md5/bad"));
      assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/md5/bad")));
    }
    assertEquals(List.of("good"), S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/md5")));
    // A Content-MD5 that is no MD5 at all.
    assertS3Error(
        "InvalidDigest",
        400,
        () ->
            s3.putObject(
                b -> b.bucket(BUCKET).key("md5/bad").contentMD5("not-base64"),
                RequestBody.fromBytes(data)));
    s3.deleteObject(b -> b.bucket(BUCKET).key("md5/good"));
  }

  @Test
  void rangeGetsReturnTheBytesAsked() throws Exception {
    byte[] data = random(10_000, 3);
    s3.putObject(b -> b.bucket(BUCKET).key("range/obj"), RequestBody.fromBytes(data));
    record Case(String range, int from, int to) {}
    for (Case c :
        List.of(
            new Case("bytes=0-0", 0, 0),
            new Case("bytes=100-199", 100, 199),
            new Case("bytes=9990-", 9990, 9999),
            new Case("bytes=-10", 9990, 9999),
            new Case("bytes=5000-20000", 5000, 9999),
            new Case("bytes=-20000", 0, 9999),
            new Case("bytes=0-", 0, 9999))) {
      ResponseBytes<GetObjectResponse> r =
          s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("range/obj").range(c.range()));
      assertArrayEquals(Arrays.copyOfRange(data, c.from(), c.to() + 1), r.asByteArray(), c.range());
      assertEquals(
          "bytes " + c.from() + "-" + c.to() + "/10000", r.response().contentRange(), c.range());
      assertEquals(c.to() - c.from() + 1, r.response().contentLength(), c.range());
      HeadObjectResponse h = s3.headObject(b -> b.bucket(BUCKET).key("range/obj").range(c.range()));
      assertEquals(c.to() - c.from() + 1, h.contentLength(), c.range());
    }
    S3Exception e =
        assertS3Error(
            "InvalidRange",
            416,
            () ->
                s3.getObjectAsBytes(
                    b -> b.bucket(BUCKET).key("range/obj").range("bytes=10000-10001")));
    assertEquals(
        "bytes */10000",
        e.awsErrorDetails().sdkHttpResponse().firstMatchingHeader("Content-Range").orElse(null));
    // A range S3 ignores (several ranges) returns the whole object.
    assertArrayEquals(
        data,
        s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("range/obj").range("bytes=0-1,5-6"))
            .asByteArray());
    s3.deleteObject(b -> b.bucket(BUCKET).key("range/obj"));
  }

  @Test
  void conditionalGetsAndHeadsAnswer304And412AsS3() throws Exception {
    byte[] data = random(1000, 4);
    String etag =
        s3.putObject(b -> b.bucket(BUCKET).key("cond/obj"), RequestBody.fromBytes(data)).eTag();
    Instant modified = s3.headObject(b -> b.bucket(BUCKET).key("cond/obj")).lastModified();
    Instant before = modified.minus(1, ChronoUnit.DAYS);
    Instant after = modified.plus(1, ChronoUnit.DAYS);
    String other = "\"0123456789abcdef0123456789abcdef\"";
    record Case(
        String name,
        int status,
        Consumer<GetObjectRequest.Builder> get,
        Consumer<HeadObjectRequest.Builder> head) {}
    List<Case> cases =
        List.of(
            new Case("If-Match true", 200, b -> b.ifMatch(etag), b -> b.ifMatch(etag)),
            new Case("If-Match *", 200, b -> b.ifMatch("*"), b -> b.ifMatch("*")),
            new Case("If-Match false", 412, b -> b.ifMatch(other), b -> b.ifMatch(other)),
            new Case(
                "If-None-Match true", 200, b -> b.ifNoneMatch(other), b -> b.ifNoneMatch(other)),
            new Case(
                "If-None-Match false", 304, b -> b.ifNoneMatch(etag), b -> b.ifNoneMatch(etag)),
            new Case(
                "If-Modified-Since before",
                200,
                b -> b.ifModifiedSince(before),
                b -> b.ifModifiedSince(before)),
            new Case(
                "If-Modified-Since at",
                304,
                b -> b.ifModifiedSince(modified),
                b -> b.ifModifiedSince(modified)),
            new Case(
                "If-Modified-Since after",
                304,
                b -> b.ifModifiedSince(after),
                b -> b.ifModifiedSince(after)),
            new Case(
                "If-Unmodified-Since before",
                412,
                b -> b.ifUnmodifiedSince(before),
                b -> b.ifUnmodifiedSince(before)),
            new Case(
                "If-Unmodified-Since at",
                200,
                b -> b.ifUnmodifiedSince(modified),
                b -> b.ifUnmodifiedSince(modified)),
            // S3: a true If-Match wins over a false If-Unmodified-Since ...
            new Case(
                "If-Match true, If-Unmodified-Since false",
                200,
                b -> b.ifMatch(etag).ifUnmodifiedSince(before),
                b -> b.ifMatch(etag).ifUnmodifiedSince(before)),
            // ... and a false If-None-Match over a true If-Modified-Since.
            new Case(
                "If-None-Match false, If-Modified-Since true",
                304,
                b -> b.ifNoneMatch(etag).ifModifiedSince(before),
                b -> b.ifNoneMatch(etag).ifModifiedSince(before)),
            new Case(
                "If-None-Match true, If-Modified-Since false",
                200,
                b -> b.ifNoneMatch(other).ifModifiedSince(after),
                b -> b.ifNoneMatch(other).ifModifiedSince(after)),
            new Case(
                "If-Match false, If-None-Match false",
                412,
                b -> b.ifMatch(other).ifNoneMatch(etag),
                b -> b.ifMatch(other).ifNoneMatch(etag)));
    for (Case c : cases) {
      if (c.status() == 200) {
        ResponseBytes<GetObjectResponse> r =
            s3.getObjectAsBytes(
                b -> {
                  b.bucket(BUCKET).key("cond/obj");
                  c.get().accept(b);
                });
        assertArrayEquals(data, r.asByteArray(), c.name());
        assertEquals(
            etag,
            s3.headObject(
                    b -> {
                      b.bucket(BUCKET).key("cond/obj");
                      c.head().accept(b);
                    })
                .eTag(),
            c.name());
        continue;
      }
      S3Exception g =
          assertThrows(
              S3Exception.class,
              () ->
                  s3.getObjectAsBytes(
                      b -> {
                        b.bucket(BUCKET).key("cond/obj");
                        c.get().accept(b);
                      }),
              c.name());
      assertEquals(c.status(), g.statusCode(), c.name());
      if (c.status() == 412) {
        assertEquals("PreconditionFailed", g.awsErrorDetails().errorCode(), c.name());
      } else {
        assertEquals(
            etag,
            g.awsErrorDetails().sdkHttpResponse().firstMatchingHeader("ETag").orElse(null),
            c.name());
      }
      S3Exception h =
          assertThrows(
              S3Exception.class,
              () ->
                  s3.headObject(
                      b -> {
                        b.bucket(BUCKET).key("cond/obj");
                        c.head().accept(b);
                      }),
              c.name());
      assertEquals(c.status(), h.statusCode(), c.name());
    }
    s3.deleteObject(b -> b.bucket(BUCKET).key("cond/obj"));
  }

  @Test
  void putWithIfNoneMatchStarCreatesOnlyOnce() throws Exception {
    byte[] first = random(5000, 5);
    s3.putObject(
        b -> b.bucket(BUCKET).key("once/obj").ifNoneMatch("*"), RequestBody.fromBytes(first));
    for (boolean chunked : new boolean[] {false, true}) {
      S3Client c = client(false, chunked);
      assertS3Error(
          "PreconditionFailed",
          412,
          () ->
              c.putObject(
                  b -> b.bucket(BUCKET).key("once/obj").ifNoneMatch("*"),
                  RequestBody.fromBytes(random(6000, 6))));
    }
    assertArrayEquals(first, get("once/obj"));
    assertArrayEquals(first, ufsBytes("once/obj"));
    // If-Match on PUT replaces only the version named.
    String etag = "\"" + md5Hex(first) + "\"";
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.putObject(
                b ->
                    b.bucket(BUCKET)
                        .key("once/obj")
                        .ifMatch("\"0123456789abcdef0123456789abcdef\""),
                RequestBody.fromBytes(random(10, 9))));
    byte[] second = random(7000, 8);
    s3.putObject(
        b -> b.bucket(BUCKET).key("once/obj").ifMatch(etag), RequestBody.fromBytes(second));
    assertArrayEquals(second, get("once/obj"));
    assertArrayEquals(second, ufsBytes("once/obj"));
    assertS3Error(
        "NoSuchKey",
        404,
        () ->
            s3.putObject(
                b -> b.bucket(BUCKET).key("once/none").ifMatch(etag),
                RequestBody.fromBytes(second)));
    assertFalse(exists("once/none"));
    // If-None-Match with an ETag: refused while the object has it, written once it has another.
    String secondEtag = "\"" + md5Hex(second) + "\"";
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.putObject(
                b -> b.bucket(BUCKET).key("once/obj").ifNoneMatch(secondEtag),
                RequestBody.fromBytes(random(10, 10))));
    assertArrayEquals(second, get("once/obj"));
    byte[] third = random(3000, 12);
    s3.putObject(
        b -> b.bucket(BUCKET).key("once/obj").ifNoneMatch(etag), RequestBody.fromBytes(third));
    assertArrayEquals(third, get("once/obj"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("once/obj"));
  }

  /** DeleteObject with If-Match, and DeleteObjects with an ETag per object, delete only that. */
  @Test
  void conditionalDeletesDeleteOnlyTheObjectNamedByItsEtag() throws Exception {
    byte[] a = random(2000, 21);
    byte[] b2 = random(2000, 22);
    s3.putObject(b -> b.bucket(BUCKET).key("conddel/a"), RequestBody.fromBytes(a));
    s3.putObject(b -> b.bucket(BUCKET).key("conddel/b"), RequestBody.fromBytes(b2));
    String etagA = "\"" + md5Hex(a) + "\"";
    String etagB = "\"" + md5Hex(b2) + "\"";
    assertS3Error(
        "PreconditionFailed",
        412,
        () -> s3.deleteObject(b -> b.bucket(BUCKET).key("conddel/a").ifMatch(etagB)));
    assertTrue(exists("conddel/a"));
    assertS3Error(
        "NoSuchKey",
        404,
        () -> s3.deleteObject(b -> b.bucket(BUCKET).key("conddel/none").ifMatch(etagA)));
    s3.deleteObject(b -> b.bucket(BUCKET).key("conddel/a").ifMatch(etagA));
    assertFalse(exists("conddel/a"));

    s3.putObject(b -> b.bucket(BUCKET).key("conddel/a"), RequestBody.fromBytes(a));
    DeleteObjectsResponse r =
        s3.deleteObjects(
            b ->
                b.bucket(BUCKET)
                    .delete(
                        d ->
                            d.objects(
                                ObjectIdentifier.builder().key("conddel/a").eTag(etagB).build(),
                                ObjectIdentifier.builder().key("conddel/b").eTag(etagB).build())));
    assertEquals(
        List.of("conddel/b"), r.deleted().stream().map(DeletedObject::key).toList(), r::toString);
    assertEquals(1, r.errors().size(), r::toString);
    assertEquals("conddel/a", r.errors().get(0).key());
    assertEquals("PreconditionFailed", r.errors().get(0).code());
    assertTrue(exists("conddel/a"));
    assertFalse(exists("conddel/b"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("conddel/a"));
  }

  @Test
  void metadataIsReturnedAsGiven() throws Exception {
    Instant expires = Instant.parse("2031-02-03T04:05:06Z");
    Map<String, String> meta =
        Map.of("colour", "blue", "multi-word-name", "a value, with comma", "empty", "");
    for (boolean chunked : new boolean[] {false, true}) {
      S3Client c = client(false, chunked);
      String key = "meta/" + chunked;
      byte[] data = random(150_000, 11);
      c.putObject(
          b ->
              b.bucket(BUCKET)
                  .key(key)
                  .contentType("text/x-strata; charset=utf-8")
                  // Two codings: kept as written, with or without the SDK's aws-chunked.
                  .contentEncoding("deflate, gzip")
                  .contentDisposition("attachment; filename=\"a b.txt\"")
                  .contentLanguage("de-CH")
                  .cacheControl("max-age=60, private")
                  .expires(expires)
                  .metadata(meta),
          RequestBody.fromBytes(data));
      ResponseBytes<GetObjectResponse> got = c.getObjectAsBytes(b -> b.bucket(BUCKET).key(key));
      HeadObjectResponse head = c.headObject(b -> b.bucket(BUCKET).key(key));
      assertArrayEquals(data, got.asByteArray());
      assertArrayEquals(data, ufsBytes(key));
      GetObjectResponse g = got.response();
      List<List<Object>> seen =
          List.of(
              List.of(
                  g.contentType(),
                  g.contentEncoding(),
                  g.contentDisposition(),
                  g.contentLanguage(),
                  g.cacheControl(),
                  g.expiresString(),
                  g.metadata()),
              List.of(
                  head.contentType(),
                  head.contentEncoding(),
                  head.contentDisposition(),
                  head.contentLanguage(),
                  head.cacheControl(),
                  head.expiresString(),
                  head.metadata()));
      for (List<Object> answer : seen) {
        assertEquals(
            List.of(
                "text/x-strata; charset=utf-8",
                "deflate, gzip",
                "attachment; filename=\"a b.txt\"",
                "de-CH",
                "max-age=60, private",
                HTTP_DATE.format(expires),
                meta),
            answer,
            "chunked " + chunked);
      }
      // GetObject's response-* parameters override what is stored, for that answer only.
      GetObjectResponse overridden =
          c.getObject(
              b ->
                  b.bucket(BUCKET)
                      .key(key)
                      .responseContentType("application/json")
                      .responseCacheControl("no-cache")
                      .responseContentDisposition("inline"),
              (resp, in) -> resp);
      assertEquals("application/json", overridden.contentType());
      assertEquals("no-cache", overridden.cacheControl());
      assertEquals("inline", overridden.contentDisposition());
      assertEquals(
          "text/x-strata; charset=utf-8",
          c.headObject(b -> b.bucket(BUCKET).key(key)).contentType());
      c.deleteObject(b -> b.bucket(BUCKET).key(key));
    }
    // An object stored without a type has S3's default one.
    s3.putObject(b -> b.bucket(BUCKET).key("meta/untyped"), RequestBody.fromBytes(new byte[3]));
    HeadObjectResponse h = s3.headObject(b -> b.bucket(BUCKET).key("meta/untyped"));
    assertTrue(
        h.contentType().equals("binary/octet-stream")
            || h.contentType().equals("application/octet-stream"),
        h.contentType());
    assertTrue(h.metadata().isEmpty());
    // More than 2 KiB of user metadata is refused.
    assertS3Error(
        "MetadataTooLarge",
        400,
        () ->
            s3.putObject(
                b ->
                    b.bucket(BUCKET)
                        .key("meta/too-large")
                        .metadata(Map.of("big", "x".repeat(2100))),
                RequestBody.fromBytes(new byte[1])));
    assertFalse(exists("meta/too-large"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("meta/untyped"));
  }

  @Test
  void nonAsciiMetadataSentAsRawUtf8ComesBackAsTheSameBytes() throws Exception {
    String value = "Hello World\u00e9 \u65e5\u672c";
    byte[] sent = value.getBytes(StandardCharsets.UTF_8);
    String path = "/" + BUCKET + "/meta/utf8";
    byte[] body = random(100, 12);
    // Signed over the value's UTF-8 and sent as those bytes, as boto3 and browsers send it.
    String put = rawExchange("PUT", path, Map.of("x-amz-meta-greeting", value), body);
    assertTrue(put.startsWith("HTTP/1.1 200"), put);
    assertEquals(
        value,
        cluster.fs().getStatus(path).getXattrsMap().get("user.greeting").toStringUtf8(),
        "kept as the text the bytes spell");
    for (String method : new String[] {"GET", "HEAD"}) {
      String answer = rawExchange(method, path, Map.of(), null);
      String returned =
          answer
              .lines()
              .filter(l -> l.toLowerCase(Locale.ROOT).startsWith("x-amz-meta-greeting:"))
              .map(l -> l.substring("x-amz-meta-greeting:".length()).trim())
              .findFirst()
              .orElse(null);
      assertNotNull(returned, method + " answers the metadata: " + answer);
      assertArrayEquals(
          sent, returned.getBytes(StandardCharsets.ISO_8859_1), method + " answers the bytes sent");
    }
    s3.deleteObject(b -> b.bucket(BUCKET).key("meta/utf8"));
  }

  /**
   * Sends a signed request over a plain socket, its header values as UTF-8 bytes (which the JDK's
   * and the SDK's HTTP clients would not send), and returns the answer's status line and headers
   * with each byte as one char (ISO-8859-1).
   */
  private static String rawExchange(
      String method, String path, Map<String, String> headers, byte[] body) throws Exception {
    Map<String, List<String>> signed =
        cluster.signedHeaders(
            method,
            path,
            headers,
            body,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\n");
    signed.forEach((name, values) -> values.forEach(v -> head.append(name + ": " + v + "\r\n")));
    if (signed.keySet().stream().noneMatch(n -> n.equalsIgnoreCase("host"))) {
      head.append("Host: " + cluster.endpoint.getAuthority() + "\r\n");
    }
    head.append("Content-Length: " + (body == null ? 0 : body.length) + "\r\n");
    head.append("Connection: close\r\n\r\n");
    try (java.net.Socket socket =
        new java.net.Socket(cluster.endpoint.getHost(), cluster.endpoint.getPort())) {
      socket.setSoTimeout(30_000);
      var out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.UTF_8));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      String answer =
          new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
      int end = answer.indexOf("\r\n\r\n");
      return end < 0 ? answer : answer.substring(0, end);
    }
  }

  @Test
  void keysWithSpacesUnicodeAndReservedCharactersRoundTrip() throws Exception {
    List<String> keys =
        List.of(
            "with space",
            "unicode-ü-日本語-😀",
            "plus+sign",
            "a+b c+d",
            "percent%20literal",
            "percent%2Fslash",
            "equals=and&amp",
            "q?mark#hash",
            "semi;colon",
            "tilde~star*paren()",
            "nested dir/with space/and+plus/x=1&y=2",
            "trailing.dot.",
            "quote'double\"",
            "back\\slash",
            "comma,colon:at@dollar$");
    s3.createBucket(b -> b.bucket("keys"));
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      byte[] data = ("content of " + key).getBytes(StandardCharsets.UTF_8);
      boolean chunked = i % 2 == 1;
      S3Client c = client(i % 3 == 2, chunked);
      c.putObject(b -> b.bucket("keys").key(key), RequestBody.fromBytes(data));
      assertArrayEquals(
          data, c.getObjectAsBytes(b -> b.bucket("keys").key(key)).asByteArray(), key);
      assertEquals(data.length, c.headObject(b -> b.bucket("keys").key(key)).contentLength(), key);
      // The key is the file's path below the bucket, character for character.
      assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/keys/" + key)), key);
    }
    List<String> expected = keys.stream().sorted(S3ProxyObjectsTest::utf8Compare).toList();
    List<String> listed =
        s3.listObjectsV2(b -> b.bucket("keys")).contents().stream().map(S3Object::key).toList();
    assertEquals(expected, listed);
    List<String> listedUrl =
        s3.listObjectsV2(b -> b.bucket("keys").encodingType("url")).contents().stream()
            .map(S3Object::key)
            .toList();
    assertEquals(expected, listedUrl);
    assertEquals(keys.stream().sorted().toList(), cluster.namespaceKeys("/keys"));
    for (String key : keys) {
      s3.deleteObject(b -> b.bucket("keys").key(key));
    }
    s3.deleteBucket(b -> b.bucket("keys"));
    assertFalse(Files.exists(cluster.ufs("/keys")));
  }

  static int utf8Compare(String a, String b) {
    return Arrays.compareUnsigned(
        a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void invalidKeysGetAnS3ErrorAndWriteNothingOutsideTheBucket() throws Exception {
    s3.createBucket(b -> b.bucket("jail"));
    List<String> before = S3ProxyTestCluster.ufsFiles(cluster.cluster.underStoreRoot());
    record Case(String key, String code) {}
    List<Case> cases =
        List.of(
            new Case("a//b", "InvalidArgument"),
            new Case("../x", "InvalidArgument"),
            new Case("a/../../escape", "InvalidArgument"),
            new Case("./x", "InvalidArgument"),
            new Case("a/./b", "InvalidArgument"),
            new Case("/leading", "InvalidArgument"),
            new Case("..", "InvalidArgument"),
            new Case(".strata-uploads/x", "InvalidArgument"),
            new Case("seg/" + "s".repeat(256), "KeyTooLongError"),
            new Case("k".repeat(1025), "KeyTooLongError"),
            new Case("é".repeat(513), "KeyTooLongError"));
    for (Case c : cases) {
      // Signed by the SDK's signer and sent as it is, so that no client normalises the path.
      String raw = "/jail/" + encodePath(c.key());
      S3ProxyTestCluster.Response put =
          cluster.signed(
              "PUT",
              raw,
              Map.of(),
              "x".getBytes(StandardCharsets.UTF_8),
              S3ProxyTestCluster.ACCESS_KEY,
              S3ProxyTestCluster.SECRET_KEY,
              Clock.systemUTC());
      assertEquals(400, put.status(), c.key() + ": " + put.text());
      assertEquals(c.code(), put.errorCode(), c.key());
      S3ProxyTestCluster.Response get =
          cluster.signed(
              "GET",
              raw,
              Map.of(),
              null,
              S3ProxyTestCluster.ACCESS_KEY,
              S3ProxyTestCluster.SECRET_KEY,
              Clock.systemUTC());
      assertEquals(400, get.status(), c.key() + ": " + get.text());
      S3ProxyTestCluster.Response mpu =
          cluster.signed(
              "POST",
              raw + "?uploads",
              Map.of(),
              null,
              S3ProxyTestCluster.ACCESS_KEY,
              S3ProxyTestCluster.SECRET_KEY,
              Clock.systemUTC());
      assertEquals(400, mpu.status(), c.key() + ": " + mpu.text());
    }
    // The same through the SDK, for keys it sends as they are.
    for (String key : List.of("a//b", "../x", "sdk/../../escape")) {
      S3Exception e =
          assertThrows(
              S3Exception.class,
              () -> s3.putObject(b -> b.bucket("jail").key(key), RequestBody.fromString("x")),
              key);
      assertEquals(400, e.statusCode(), key);
    }
    // Percent-encoded slashes and dots decode to the same refused keys.
    S3ProxyTestCluster.Response encoded =
        cluster.signed(
            "PUT",
            "/jail/../../escape",
            "/jail/..%2F..%2Fescape",
            Map.of(),
            "x".getBytes(StandardCharsets.UTF_8),
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(400, encoded.status(), encoded.text());
    assertEquals("InvalidArgument", encoded.errorCode());
    assertEquals(before, S3ProxyTestCluster.ufsFiles(cluster.cluster.underStoreRoot()));
    assertEquals(List.of(), cluster.namespaceKeys("/jail"));
    assertFalse(Files.exists(cluster.cluster.base().resolve("escape")));
    assertFalse(Files.exists(cluster.cluster.base().resolve("x")));
    // The longest key S3 allows is stored, in segments no longer than a file name.
    String longest = ("s".repeat(254) + "/").repeat(4) + "k".repeat(1024 - 255 * 4);
    assertEquals(1024, longest.length());
    s3.putObject(b -> b.bucket("jail").key(longest), RequestBody.fromString("long"));
    assertEquals(
        "long",
        new String(Files.readAllBytes(cluster.ufs("/jail/" + longest)), StandardCharsets.UTF_8));
    s3.deleteObject(b -> b.bucket("jail").key(longest));
    s3.deleteBucket(b -> b.bucket("jail"));
  }

  /** Percent-encodes a key for a request path as SigV4 canonicalises it ('/' kept). */
  static String encodePath(String key) {
    StringBuilder out = new StringBuilder();
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      char c = (char) (b & 0xff);
      if ((c >= 'A' && c <= 'Z')
          || (c >= 'a' && c <= 'z')
          || (c >= '0' && c <= '9')
          || c == '-'
          || c == '_'
          || c == '.'
          || c == '~'
          || c == '/') {
        out.append(c);
      } else {
        out.append('%').append(String.format("%02X", b & 0xff));
      }
    }
    return out.toString();
  }

  @Test
  void emptyObjectsAreStoredAndReadAsEmpty() throws Exception {
    for (boolean chunked : new boolean[] {false, true}) {
      S3Client c = client(false, chunked);
      String key = "empty/" + chunked;
      PutObjectResponse put = c.putObject(b -> b.bucket(BUCKET).key(key), RequestBody.empty());
      assertEquals("\"d41d8cd98f00b204e9800998ecf8427e\"", put.eTag());
      ResponseBytes<GetObjectResponse> got =
          c.getObjectAsBytes(b -> b.bucket(BUCKET).key(key).checksumMode(ChecksumMode.ENABLED));
      assertEquals(0, got.asByteArray().length);
      assertEquals(0L, got.response().contentLength());
      assertEquals(put.eTag(), got.response().eTag());
      assertEquals(0L, c.headObject(b -> b.bucket(BUCKET).key(key)).contentLength());
      assertTrue(Files.isRegularFile(cluster.ufs("/" + BUCKET + "/" + key)));
      assertEquals(0, Files.size(cluster.ufs("/" + BUCKET + "/" + key)));
      assertEquals(0L, cluster.fs().getStatus("/" + BUCKET + "/" + key).getLength());
      assertS3Error(
          "InvalidRange",
          416,
          () -> c.getObjectAsBytes(b -> b.bucket(BUCKET).key(key).range("bytes=0-0")));
      c.deleteObject(b -> b.bucket(BUCKET).key(key));
    }
  }

  @Test
  void aDeleteOfAKeyLeavesTheOtherKeysOfItsFolders() throws Exception {
    for (String k : List.of("del/a/1", "del/a/2", "del/b")) {
      s3.putObject(b -> b.bucket(BUCKET).key(k), RequestBody.fromString(k));
    }
    s3.deleteObject(b -> b.bucket(BUCKET).key("del/a/1"));
    // A key that names a folder, or a folder prefix, deletes nothing.
    s3.deleteObject(b -> b.bucket(BUCKET).key("del/a"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("del/a/"));
    assertEquals(
        List.of("del/a/2", "del/b"),
        s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("del/")).contents().stream()
            .map(S3Object::key)
            .toList());
    assertEquals(
        List.of("a/2", "b"), S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/del")));
    s3.deleteObject(b -> b.bucket(BUCKET).key("del/a/2"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("del/b"));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/del")));
    assertFalse(cluster.fs().exists("/" + BUCKET + "/del"));
  }

  @Test
  void aKeyCannotBeBothAnObjectAndAFolder() throws Exception {
    s3.putObject(b -> b.bucket(BUCKET).key("conflict/file"), RequestBody.fromString("f"));
    assertS3Error(
        "KeyConflict",
        409,
        () ->
            s3.putObject(
                b -> b.bucket(BUCKET).key("conflict/file/below"), RequestBody.fromString("x")));
    s3.putObject(b -> b.bucket(BUCKET).key("conflict/dir/below"), RequestBody.fromString("d"));
    assertS3Error(
        "KeyConflict",
        409,
        () -> s3.putObject(b -> b.bucket(BUCKET).key("conflict/dir"), RequestBody.fromString("x")));
    assertArrayEquals("f".getBytes(StandardCharsets.UTF_8), get("conflict/file"));
    assertArrayEquals("d".getBytes(StandardCharsets.UTF_8), get("conflict/dir/below"));
    assertEquals(
        List.of("conflict/dir/below", "conflict/file"),
        cluster.namespaceKeys("/" + BUCKET).stream()
            .filter(k -> k.startsWith("conflict/"))
            .toList());
    s3.deleteObject(b -> b.bucket(BUCKET).key("conflict/file"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("conflict/dir/below"));
  }

  @Test
  void readsOfMissingObjectsAreNoSuchKey() {
    assertS3Error(
        "NoSuchKey", 404, () -> s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("missing/key")));
    NoSuchKeyException e =
        assertThrows(
            NoSuchKeyException.class,
            () -> s3.headObject(b -> b.bucket(BUCKET).key("missing/key")));
    assertEquals(404, e.statusCode());
    assertS3Error(
        "NoSuchKey", 404, () -> s3.getObjectTagging(b -> b.bucket(BUCKET).key("missing/key")));
    assertNotNull(s3.deleteObject(b -> b.bucket(BUCKET).key("missing/key")));
  }

  // ---- POST Object: browser form uploads ----

  private static final String POST_BUCKET = "post-uploads";
  private static final String FORM_BOUNDARY = "----StrataFormBoundary1x2y3z";
  private static final DateTimeFormatter AMZ_DATE =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);

  private static synchronized void createPostBucket() {
    try {
      s3.headBucket(b -> b.bucket(POST_BUCKET));
    } catch (S3Exception e) {
      s3.createBucket(b -> b.bucket(POST_BUCKET));
    }
  }

  private static byte[] hmac(byte[] key, String data) throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256"));
    return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
  }

  /** The hex SigV4 signature of a base64 policy, with the signing key of the date's scope. */
  static String postSignature(String secret, String date, String policy) throws Exception {
    byte[] k = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), date);
    k = hmac(k, "us-east-1");
    k = hmac(k, "s3");
    k = hmac(k, "aws4_request");
    return java.util.HexFormat.of().formatHex(hmac(k, policy));
  }

  /**
   * The fields of a form signed by an access key: {@code fields} in order, then the credential,
   * algorithm and date fields, the policy (expiring at {@code expiration}, its conditions the
   * bucket's, {@code conditions} and one exact match for each of the added fields) and its
   * signature.
   */
  static List<String[]> signedForm(
      String accessKey,
      String secret,
      Instant expiration,
      List<String> conditions,
      List<String[]> fields)
      throws Exception {
    Instant now = Instant.now();
    String amzDate = AMZ_DATE.format(now);
    String credential = accessKey + "/" + amzDate.substring(0, 8) + "/us-east-1/s3/aws4_request";
    List<String> all = new java.util.ArrayList<>();
    all.add("{\"bucket\": \"" + POST_BUCKET + "\"}");
    all.addAll(conditions);
    all.add("{\"x-amz-credential\": \"" + credential + "\"}");
    all.add("[\"eq\", \"$x-amz-algorithm\", \"AWS4-HMAC-SHA256\"]");
    all.add("{\"x-amz-date\": \"" + amzDate + "\"}");
    String policyJson =
        "{\"expiration\": \""
            + DateTimeFormatter.ISO_INSTANT.format(expiration.truncatedTo(ChronoUnit.MILLIS))
            + "\", \"conditions\": ["
            + String.join(", ", all)
            + "]}";
    String policy =
        java.util.Base64.getEncoder().encodeToString(policyJson.getBytes(StandardCharsets.UTF_8));
    List<String[]> out = new java.util.ArrayList<>(fields);
    // Field names in any case, as the SDKs and the documentation spell them.
    out.add(new String[] {"X-Amz-Credential", credential});
    out.add(new String[] {"X-Amz-Algorithm", "AWS4-HMAC-SHA256"});
    out.add(new String[] {"X-Amz-Date", amzDate});
    out.add(new String[] {"Policy", policy});
    out.add(
        new String[] {"X-Amz-Signature", postSignature(secret, amzDate.substring(0, 8), policy)});
    return out;
  }

  static List<String[]> signedForm(List<String> conditions, List<String[]> fields)
      throws Exception {
    return signedForm(
        S3ProxyTestCluster.ACCESS_KEY,
        S3ProxyTestCluster.SECRET_KEY,
        Instant.now().plus(1, ChronoUnit.HOURS),
        conditions,
        fields);
  }

  static String[] field(String name, String value) {
    return new String[] {name, value};
  }

  /**
   * A multipart/form-data body as a browser sends it: the fields, the file part (null for none),
   * then the fields after it.
   */
  static byte[] formBody(
      List<String[]> fields, String filename, byte[] file, List<String[]> after) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    Consumer<String> text = t -> out.writeBytes(t.getBytes(StandardCharsets.UTF_8));
    for (String[] f : fields) {
      text.accept(
          "--"
              + FORM_BOUNDARY
              + "\r\nContent-Disposition: form-data; name=\""
              + f[0]
              + "\"\r\n\r\n"
              + f[1]
              + "\r\n");
    }
    if (file != null) {
      text.accept(
          "--"
              + FORM_BOUNDARY
              + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
              + filename
              + "\"\r\nContent-Type: application/octet-stream\r\n\r\n");
      out.writeBytes(file);
      text.accept("\r\n");
    }
    for (String[] f : after) {
      text.accept(
          "--"
              + FORM_BOUNDARY
              + "\r\nContent-Disposition: form-data; name=\""
              + f[0]
              + "\"\r\n\r\n"
              + f[1]
              + "\r\n");
    }
    text.accept("--" + FORM_BOUNDARY + "--\r\n");
    return out.toByteArray();
  }

  /** Posts a form to a bucket, path-style, with java.net.http. */
  static S3ProxyTestCluster.Response post(String bucket, byte[] body) throws Exception {
    return cluster.send(
        "POST",
        java.net.URI.create(cluster.endpoint + "/" + bucket),
        Map.of("Content-Type", "multipart/form-data; boundary=" + FORM_BOUNDARY),
        body);
  }

  static S3ProxyTestCluster.Response post(List<String[]> fields, String filename, byte[] file)
      throws Exception {
    return post(POST_BUCKET, formBody(fields, filename, file, List.of()));
  }

  static void assertPostError(
      S3ProxyTestCluster.Response r, int status, String code, String messagePart) {
    assertEquals(status, r.status(), r::text);
    assertEquals(code, r.errorCode(), r::text);
    if (messagePart != null) {
      // The error document writes quotes as &quot;, as S3 writes them.
      String text = r.text().replace("&quot;", "\"");
      assertTrue(text.contains(messagePart), r::text);
    }
  }

  /** Whether the key has an object, and no staged upload of the bucket is left behind. */
  static boolean postedObjectExists(String key) throws Exception {
    String uploads = "/" + POST_BUCKET + "/" + io.strata.common.PathNames.UPLOADS_FOLDER;
    try (var it = cluster.fs().listStatus(uploads)) {
      while (it.hasNext()) {
        String name = it.next().getName();
        assertFalse(name.startsWith("put-"), "a staged upload was left: " + name);
      }
    } catch (io.strata.common.error.StrataException e) {
      if (e.code() != io.strata.common.error.ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
    try {
      s3.headObject(b -> b.bucket(POST_BUCKET).key(key));
      return true;
    } catch (NoSuchKeyException e) {
      return false;
    }
  }

  @Test
  void aSignedFormUploadsItsFileWithItsMetadataAnd204() throws Exception {
    createPostBucket();
    byte[] data = "hello from a browser\r\n--not a boundary\r\n".getBytes(StandardCharsets.UTF_8);
    List<String[]> form =
        signedForm(
            List.of(
                "[\"starts-with\", \"$key\", \"photos/\"]",
                "{\"acl\": \"private\"}",
                "[\"starts-with\", \"$Content-Type\", \"text/\"]",
                "[\"starts-with\", \"$x-amz-meta-colour\", \"\"]",
                "[\"content-length-range\", 1, 1048576]"),
            List.<String[]>of(
                field("key", "photos/${filename}"),
                field("acl", "private"),
                field("Content-Type", "text/plain; charset=utf-8"),
                field("x-amz-meta-colour", "bleu clair")));
    S3ProxyTestCluster.Response r =
        post(
            POST_BUCKET,
            formBody(
                form,
                "C:\\fakepath\\hello.txt",
                data,
                List.<String[]>of(
                    field("x-amz-meta-after", "ignored"), field("submit", "Upload"))));
    assertEquals(204, r.status(), r::text);
    assertEquals("\"" + md5Hex(data) + "\"", r.header("ETag"));
    assertEquals(
        cluster.endpoint.getHost() + ":" + cluster.endpoint.getPort(),
        java.net.URI.create(r.header("Location")).getAuthority());
    assertTrue(r.header("Location").endsWith("/" + POST_BUCKET + "/photos/hello.txt"));
    ResponseBytes<GetObjectResponse> got =
        s3.getObjectAsBytes(b -> b.bucket(POST_BUCKET).key("photos/hello.txt"));
    assertArrayEquals(data, got.asByteArray());
    assertEquals("text/plain; charset=utf-8", got.response().contentType());
    assertEquals(Map.of("colour", "bleu clair"), got.response().metadata());
    assertEquals("\"" + md5Hex(data) + "\"", got.response().eTag());
    // The test user owns it, as a PUT's object.
    assertEquals(
        System.getProperty("user.name"),
        cluster.fs().getStatus("/" + POST_BUCKET + "/photos/hello.txt").getOwner());
  }

  @Test
  void successActionStatusAndRedirectChooseTheAnswer() throws Exception {
    createPostBucket();
    byte[] data = random(5000, 31);
    List<String[]> created =
        signedForm(
            List.of(
                "{\"key\": \"answers/created.bin\"}",
                "{\"success_action_status\": \"201\"}",
                "[\"starts-with\", \"$tagging\", \"\"]"),
            List.<String[]>of(
                field("key", "answers/created.bin"),
                field("success_action_status", "201"),
                field(
                    "tagging",
                    "<Tagging><TagSet><Tag><Key>team</Key><Value>ml</Value></Tag></TagSet>"
                        + "</Tagging>")));
    S3ProxyTestCluster.Response r = post(created, "created.bin", data);
    assertEquals(201, r.status(), r::text);
    String xml = r.text();
    assertTrue(xml.contains("<PostResponse>"), xml);
    assertTrue(
        xml.contains(
            "<Location>http://"
                + cluster.endpoint.getAuthority()
                + "/"
                + POST_BUCKET
                + "/answers/created.bin</Location>"),
        xml);
    assertTrue(xml.contains("<Bucket>" + POST_BUCKET + "</Bucket>"), xml);
    assertTrue(xml.contains("<Key>answers/created.bin</Key>"), xml);
    assertTrue(xml.contains("<ETag>&quot;" + md5Hex(data) + "&quot;</ETag>"), xml);
    assertArrayEquals(
        data,
        s3.getObjectAsBytes(b -> b.bucket(POST_BUCKET).key("answers/created.bin")).asByteArray());
    assertEquals(
        "team",
        s3.getObjectTagging(b -> b.bucket(POST_BUCKET).key("answers/created.bin"))
            .tagSet()
            .get(0)
            .key());

    List<String[]> ok =
        signedForm(
            List.of("{\"key\": \"answers/ok.bin\"}", "{\"success_action_status\": \"200\"}"),
            List.<String[]>of(
                field("key", "answers/ok.bin"), field("success_action_status", "200")));
    S3ProxyTestCluster.Response r200 = post(ok, "ok.bin", data);
    assertEquals(200, r200.status(), r200::text);
    assertEquals(0, r200.body().length);

    String target = "https://uploads.example.com/done.html?from=form";
    List<String[]> redirected =
        signedForm(
            List.of(
                "[\"starts-with\", \"$key\", \"answers/\"]",
                "[\"starts-with\", \"$success_action_redirect\", \"https://uploads.example.com/\"]"),
            List.<String[]>of(
                field("key", "answers/${filename}"), field("success_action_redirect", target)));
    S3ProxyTestCluster.Response r303 = post(redirected, "a b.bin", data);
    assertEquals(303, r303.status(), r303::text);
    assertEquals(
        target
            + "&bucket="
            + POST_BUCKET
            + "&key=answers%2Fa%20b.bin&etag=%22"
            + md5Hex(data)
            + "%22",
        r303.header("Location"));
    assertTrue(postedObjectExists("answers/a b.bin"));
  }

  @Test
  void aFileLargerThanASmallObjectStreamsToItsKey() throws Exception {
    createPostBucket();
    byte[] data = random(3 << 20, 32);
    List<String[]> form =
        signedForm(
            List.of("{\"key\": \"large/blob\"}", "[\"content-length-range\", 0, 4194304]"),
            List.<String[]>of(field("key", "large/blob")));
    S3ProxyTestCluster.Response r = post(form, "blob", data);
    assertEquals(204, r.status(), r::text);
    assertEquals("\"" + md5Hex(data) + "\"", r.header("ETag"));
    assertArrayEquals(
        data, s3.getObjectAsBytes(b -> b.bucket(POST_BUCKET).key("large/blob")).asByteArray());
    assertArrayEquals(data, Files.readAllBytes(cluster.ufs("/" + POST_BUCKET + "/large/blob")));
  }

  @Test
  void aFormThePolicyDoesNotAllowIsRefusedAndLeavesNoObject() throws Exception {
    createPostBucket();
    byte[] data = random(2000, 33);
    // A key outside the prefix the policy allows.
    List<String[]> outside =
        signedForm(
            List.of("[\"starts-with\", \"$key\", \"allowed/\"]"),
            List.<String[]>of(field("key", "elsewhere/${filename}")));
    assertPostError(
        post(outside, "x.bin", data),
        403,
        "AccessDenied",
        "Invalid according to Policy: Policy Condition failed: [\"starts-with\", \"$key\","
            + " \"allowed/\"]");
    assertFalse(postedObjectExists("elsewhere/x.bin"));

    // An expired policy.
    List<String[]> expired =
        signedForm(
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Instant.now().minus(1, ChronoUnit.MINUTES),
            List.of("{\"key\": \"expired.bin\"}"),
            List.<String[]>of(field("key", "expired.bin")));
    assertPostError(
        post(expired, "x.bin", data),
        403,
        "AccessDenied",
        "Invalid according to Policy: Policy expired.");
    assertFalse(postedObjectExists("expired.bin"));

    // A field no condition names.
    List<String[]> extra =
        signedForm(
            List.of("{\"key\": \"extra.bin\"}"),
            List.<String[]>of(field("key", "extra.bin"), field("x-amz-meta-secret", "1")));
    assertPostError(
        post(extra, "x.bin", data),
        403,
        "AccessDenied",
        "Invalid according to Policy: Extra input fields: x-amz-meta-secret");
    assertFalse(postedObjectExists("extra.bin"));

    // A file over the content-length-range: held whole (small) or streamed, never kept.
    for (int length : new int[] {2000, 3 << 20}) {
      List<String[]> tooLarge =
          signedForm(
              List.of("{\"key\": \"too-large.bin\"}", "[\"content-length-range\", 1, 1024]"),
              List.<String[]>of(field("key", "too-large.bin")));
      S3ProxyTestCluster.Response r = post(tooLarge, "x.bin", random(length, 34));
      assertPostError(r, 400, "EntityTooLarge", "<MaxSizeAllowed>1024</MaxSizeAllowed>");
      assertFalse(postedObjectExists("too-large.bin"));
    }
    List<String[]> tooSmall =
        signedForm(
            List.of("{\"key\": \"too-small.bin\"}", "[\"content-length-range\", 10, 1024]"),
            List.<String[]>of(field("key", "too-small.bin")));
    assertPostError(
        post(tooSmall, "x.bin", new byte[3]), 400, "EntityTooSmall", "<MinSizeAllowed>10<");
    assertFalse(postedObjectExists("too-small.bin"));
  }

  @Test
  void aFormThatIsNotAuthenticIsRefused() throws Exception {
    createPostBucket();
    byte[] data = random(100, 35);
    List<String[]> form =
        signedForm(
            List.of("{\"key\": \"forged.bin\"}"), List.<String[]>of(field("key", "forged.bin")));
    // Another signature.
    List<String[]> forged = new java.util.ArrayList<>(form);
    forged.set(forged.size() - 1, field("X-Amz-Signature", "0".repeat(64)));
    assertPostError(post(forged, "x.bin", data), 403, "SignatureDoesNotMatch", null);
    // Signed with another secret for the same key.
    List<String[]> otherSecret =
        signedForm(
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.ALICE_SECRET,
            Instant.now().plus(1, ChronoUnit.HOURS),
            List.of("{\"key\": \"forged.bin\"}"),
            List.<String[]>of(field("key", "forged.bin")));
    assertPostError(post(otherSecret, "x.bin", data), 403, "SignatureDoesNotMatch", null);
    // An access key the proxy does not know.
    List<String[]> unknown =
        signedForm(
            "AKUNKNOWNKEY00000001",
            S3ProxyTestCluster.SECRET_KEY,
            Instant.now().plus(1, ChronoUnit.HOURS),
            List.of("{\"key\": \"forged.bin\"}"),
            List.<String[]>of(field("key", "forged.bin")));
    assertPostError(post(unknown, "x.bin", data), 403, "InvalidAccessKeyId", null);
    assertFalse(postedObjectExists("forged.bin"));
  }

  @Test
  void aFormWithoutItsKeyOrFileOrNotAFormIsRefused() throws Exception {
    createPostBucket();
    List<String[]> noKey = signedForm(List.of(), List.of());
    assertPostError(
        post(noKey, "x.bin", new byte[1]),
        400,
        "InvalidArgument",
        "<ArgumentName>key</ArgumentName>");
    List<String[]> noFile =
        signedForm(List.of("{\"key\": \"nofile\"}"), List.<String[]>of(field("key", "nofile")));
    assertPostError(
        post(noFile, null, null), 400, "InvalidArgument", "<ArgumentName>file</ArgumentName>");
    S3ProxyTestCluster.Response notForm =
        cluster.send(
            "POST",
            java.net.URI.create(cluster.endpoint + "/" + POST_BUCKET),
            Map.of("Content-Type", "application/x-www-form-urlencoded"),
            "key=a&file=b".getBytes(StandardCharsets.UTF_8));
    assertPostError(
        notForm,
        412,
        "PreconditionFailed",
        "<Condition>Bucket POST must be of the enclosure-type multipart/form-data</Condition>");
    S3ProxyTestCluster.Response garbled =
        cluster.send(
            "POST",
            java.net.URI.create(cluster.endpoint + "/" + POST_BUCKET),
            Map.of("Content-Type", "multipart/form-data; boundary=" + FORM_BOUNDARY),
            "this is no multipart body".getBytes(StandardCharsets.UTF_8));
    assertPostError(garbled, 400, "MalformedPOSTRequest", null);
    // A customer's encryption key is refused in a form as in a PUT's headers.
    List<String[]> customerKey =
        signedForm(
            List.of(
                "{\"key\": \"sse-c.bin\"}",
                "{\"x-amz-server-side-encryption-customer-algorithm\": \"AES256\"}"),
            List.of(
                field("key", "sse-c.bin"),
                field("x-amz-server-side-encryption-customer-algorithm", "AES256")));
    assertPostError(post(customerKey, "x.bin", new byte[1]), 501, "NotImplemented", null);
    assertFalse(postedObjectExists("sse-c.bin"));
  }

  @Test
  void anUnsignedFormWritesOnlyIntoAPublicReadWriteBucket() throws Exception {
    createPostBucket();
    byte[] data = random(300, 36);
    List<String[]> form = List.<String[]>of(field("key", "anonymous.bin"));
    assertPostError(post(form, "x.bin", data), 403, "AccessDenied", null);
    assertFalse(postedObjectExists("anonymous.bin"));

    String open = "post-uploads-open";
    s3.createBucket(
        b ->
            b.bucket(open)
                .acl(software.amazon.awssdk.services.s3.model.BucketCannedACL.PUBLIC_READ_WRITE));
    S3ProxyTestCluster.Response r = post(open, formBody(form, "x.bin", data, List.of()));
    assertEquals(204, r.status(), r::text);
    assertArrayEquals(
        data, s3.getObjectAsBytes(b -> b.bucket(open).key("anonymous.bin")).asByteArray());
    assertEquals("nobody", cluster.fs().getStatus("/" + open + "/anonymous.bin").getOwner());
    s3.deleteObject(b -> b.bucket(open).key("anonymous.bin"));
    s3.deleteBucket(b -> b.bucket(open));
  }

  @Test
  void aVirtualHostStyleFormNamesItsBucketByHost() throws Exception {
    createPostBucket();
    byte[] data = random(700, 37);
    List<String[]> form =
        signedForm(
            List.of("{\"key\": \"virtual/host.bin\"}", "{\"success_action_status\": \"201\"}"),
            List.<String[]>of(
                field("key", "virtual/host.bin"), field("success_action_status", "201")));
    byte[] body = formBody(form, "host.bin", data, List.of());
    // java.net.http does not let a request set Host: the request is written by hand.
    String host = POST_BUCKET + "." + S3ProxyTestCluster.DOMAIN + ":" + cluster.endpoint.getPort();
    String head =
        "POST / HTTP/1.1\r\nHost: "
            + host
            + "\r\nContent-Type: multipart/form-data; boundary="
            + FORM_BOUNDARY
            + "\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    String answer;
    try (java.net.Socket socket =
        new java.net.Socket(cluster.endpoint.getHost(), cluster.endpoint.getPort())) {
      socket.setSoTimeout(30_000);
      socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().write(body);
      socket.getOutputStream().flush();
      answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
    assertTrue(answer.startsWith("HTTP/1.1 201"), answer);
    assertTrue(
        answer.contains("<Location>http://" + host + "/virtual/host.bin</Location>"), answer);
    assertArrayEquals(
        data,
        s3.getObjectAsBytes(b -> b.bucket(POST_BUCKET).key("virtual/host.bin")).asByteArray());
  }

  @Test
  void anObjectWhoseCachedBlockChangedAtRestIsReadRightAgain() throws Exception {
    String bucket = "damaged-blocks";
    s3.createBucket(b -> b.bucket(bucket));
    byte[] body = random(200_000, 7);
    Files.createDirectories(cluster.ufs("/" + bucket));
    Files.write(cluster.ufs("/" + bucket + "/obj"), body);
    cluster.loadFromUnderStore("/" + bucket);
    assertArrayEquals(body, s3.getObjectAsBytes(b -> b.bucket(bucket).key("obj")).asByteArray());
    long id =
        cluster
            .fs()
            .getStatus("/" + bucket + "/obj", io.strata.client.SyncOption.NEVER, true)
            .getBlocks(0)
            .getBlockId();
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (cluster.cluster.blockFiles(id).isEmpty()) {
      assertTrue(System.nanoTime() < deadline, "block " + id + " is cached within 30 s");
      Thread.sleep(100);
    }
    for (Path block : cluster.cluster.blockFiles(id)) {
      byte[] b = Files.readAllBytes(block);
      b[150_000] ^= 0x04;
      Files.write(block, b);
    }
    // The proxy sends a local block file's bytes with sendfile: it verifies them first.
    assertArrayEquals(body, s3.getObjectAsBytes(b -> b.bucket(bucket).key("obj")).asByteArray());
    assertArrayEquals(
        Arrays.copyOfRange(body, 149_990, 150_010),
        s3.getObjectAsBytes(b -> b.bucket(bucket).key("obj").range("bytes=149990-150009"))
            .asByteArray());
  }
}
