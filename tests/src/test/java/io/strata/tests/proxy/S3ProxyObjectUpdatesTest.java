package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static io.strata.tests.proxy.S3ProxyTestCluster.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.MetadataDirective;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.Tag;
import software.amazon.awssdk.services.s3.model.TaggingDirective;
import software.amazon.awssdk.services.s3.presigner.model.PresignedPutObjectRequest;

/**
 * Changes to existing objects through the S3 proxy with the AWS SDK: copies (directives,
 * conditions, onto themselves), tags, batch deletes, and concurrent writers of one key.
 */
class S3ProxyObjectUpdatesTest {
  private static final String BUCKET = "updates";

  static S3ProxyTestCluster cluster;
  static S3Client s3;
  static S3Client chunked;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
    chunked =
        cluster.client(S3ProxyTestCluster.ACCESS_KEY, S3ProxyTestCluster.SECRET_KEY, false, true);
    s3.createBucket(b -> b.bucket(BUCKET));
  }

  @AfterAll
  static void stop() {
    for (S3Client c : new S3Client[] {s3, chunked}) {
      if (c != null) {
        c.close();
      }
    }
  }

  private static byte[] ufsBytes(String bucket, String key) throws IOException {
    return Files.readAllBytes(cluster.ufs("/" + bucket + "/" + key));
  }

  private static Map<String, String> tags(String key) {
    Map<String, String> out = new LinkedHashMap<>();
    s3.getObjectTagging(b -> b.bucket(BUCKET).key(key))
        .tagSet()
        .forEach(t -> out.put(t.key(), t.value()));
    return out;
  }

  @Test
  void copyObjectCopiesBytesAndMetadataOrReplacesTheMetadata() throws Exception {
    s3.createBucket(b -> b.bucket("copy-target"));
    byte[] data = random(400_000, 1);
    s3.putObject(
        b ->
            b.bucket(BUCKET)
                .key("copy/src")
                .contentType("text/x-source")
                .cacheControl("max-age=5")
                .metadata(Map.of("origin", "source"))
                .tagging("stage=raw&owner=strata")
                .checksumAlgorithm(ChecksumAlgorithm.SHA256),
        RequestBody.fromBytes(data));
    String etag = "\"" + Checksums.md5Hex(data) + "\"";

    // COPY, the default directive: bytes, metadata and tags come along.
    CopyObjectResponse copied =
        s3.copyObject(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("copy/src")
                    .destinationBucket("copy-target")
                    .destinationKey("nested/copy of src"));
    assertEquals(etag, copied.copyObjectResult().eTag());
    assertEquals(
        Checksums.of(ChecksumAlgorithm.SHA256, data), copied.copyObjectResult().checksumSHA256());
    ResponseBytes<GetObjectResponse> got =
        s3.getObjectAsBytes(
            b ->
                b.bucket("copy-target")
                    .key("nested/copy of src")
                    .checksumMode(ChecksumMode.ENABLED));
    assertArrayEquals(data, got.asByteArray());
    assertArrayEquals(data, ufsBytes("copy-target", "nested/copy of src"));
    assertEquals(etag, got.response().eTag());
    assertEquals("text/x-source", got.response().contentType());
    assertEquals("max-age=5", got.response().cacheControl());
    assertEquals(Map.of("origin", "source"), got.response().metadata());
    assertEquals(2, got.response().tagCount());
    assertEquals(Checksums.of(ChecksumAlgorithm.SHA256, data), got.response().checksumSHA256());

    // REPLACE: the request's metadata and tags, the source's bytes.
    s3.copyObject(
        b ->
            b.sourceBucket(BUCKET)
                .sourceKey("copy/src")
                .destinationBucket(BUCKET)
                .destinationKey("copy/replaced")
                .metadataDirective(MetadataDirective.REPLACE)
                .contentType("application/x-new")
                .metadata(Map.of("origin", "replaced", "extra", "1"))
                .taggingDirective(TaggingDirective.REPLACE)
                .tagging("stage=copied"));
    GetObjectResponse replaced =
        s3.getObject(
            b -> b.bucket(BUCKET).key("copy/replaced"),
            (resp, in) -> {
              assertArrayEquals(data, in.readAllBytes());
              return resp;
            });
    assertEquals("application/x-new", replaced.contentType());
    assertNull(replaced.cacheControl());
    assertEquals(Map.of("origin", "replaced", "extra", "1"), replaced.metadata());
    assertEquals(Map.of("stage", "copied"), tags("copy/replaced"));
    assertArrayEquals(data, ufsBytes(BUCKET, "copy/replaced"));

    // Source keys that need encoding in x-amz-copy-source, and a checksum asked for anew.
    String odd = "copy/src key+é&=%.bin";
    s3.putObject(b -> b.bucket(BUCKET).key(odd), RequestBody.fromBytes(data));
    CopyObjectResponse oddCopy =
        s3.copyObject(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey(odd)
                    .destinationBucket(BUCKET)
                    .destinationKey("copy/odd copy+")
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32_C));
    assertEquals(
        Checksums.of(ChecksumAlgorithm.CRC32_C, data), oddCopy.copyObjectResult().checksumCRC32C());
    assertArrayEquals(data, ufsBytes(BUCKET, "copy/odd copy+"));
    // REPLACE of the metadata alone keeps the tags (the tagging directive is COPY).
    s3.copyObject(
        b ->
            b.sourceBucket(BUCKET)
                .sourceKey("copy/src")
                .destinationBucket(BUCKET)
                .destinationKey("copy/odd copy+")
                .metadataDirective(MetadataDirective.REPLACE)
                .metadata(Map.of("only", "this")));
    assertEquals(Map.of("stage", "raw", "owner", "strata"), tags("copy/odd copy+"));
    assertEquals(
        Map.of("only", "this"),
        s3.headObject(b -> b.bucket(BUCKET).key("copy/odd copy+")).metadata());
    s3.deleteObject(b -> b.bucket(BUCKET).key(odd));
    s3.deleteObject(b -> b.bucket(BUCKET).key("copy/odd copy+"));

    // A copy replaces what was at the destination.
    s3.putObject(b -> b.bucket(BUCKET).key("copy/dst"), RequestBody.fromString("old"));
    s3.copyObject(
        b ->
            b.sourceBucket(BUCKET)
                .sourceKey("copy/src")
                .destinationBucket(BUCKET)
                .destinationKey("copy/dst"));
    assertArrayEquals(data, ufsBytes(BUCKET, "copy/dst"));
    assertArrayEquals(
        data, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("copy/dst")).asByteArray());

    // An object written by another client of the namespace has no S3 metadata and no
    // checksum; it is copied all the same.
    byte[] plain = random(70_000, 4);
    try (var out = cluster.fs().createFile("/" + BUCKET + "/copy/plain")) {
      out.write(plain);
    }
    CopyObjectResponse fromPlain =
        s3.copyObject(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("copy/plain")
                    .destinationBucket(BUCKET)
                    .destinationKey("copy/from plain"));
    assertEquals("\"" + Checksums.md5Hex(plain) + "\"", fromPlain.copyObjectResult().eTag());
    assertNull(fromPlain.copyObjectResult().checksumCRC32());
    assertArrayEquals(plain, ufsBytes(BUCKET, "copy/from plain"));
    assertArrayEquals(
        plain, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("copy/from plain")).asByteArray());
    s3.deleteObject(b -> b.bucket(BUCKET).key("copy/plain"));
    s3.deleteObject(b -> b.bucket(BUCKET).key("copy/from plain"));

    // Sources that are not there.
    assertS3Error(
        "NoSuchKey",
        404,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("copy/missing")
                        .destinationBucket(BUCKET)
                        .destinationKey("copy/x")));
    assertS3Error(
        "NoSuchBucket",
        404,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket("no-bucket")
                        .sourceKey("k")
                        .destinationBucket(BUCKET)
                        .destinationKey("copy/x")));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/copy/x")));
    assertEquals(
        List.of("copy/dst", "copy/replaced", "copy/src"),
        s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("copy/")).contents().stream()
            .map(S3Object::key)
            .toList());
  }

  @Test
  void copyOntoItselfNeedsReplaceAndKeepsTheBytes() throws Exception {
    byte[] data = random(100_000, 2);
    s3.putObject(
        b -> b.bucket(BUCKET).key("self/obj").contentType("text/plain").metadata(Map.of("v", "1")),
        RequestBody.fromBytes(data));
    HeadObjectResponse before = s3.headObject(b -> b.bucket(BUCKET).key("self/obj"));
    assertS3Error(
        "InvalidRequest",
        400,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("self/obj")
                        .destinationBucket(BUCKET)
                        .destinationKey("self/obj")));
    assertS3Error(
        "InvalidRequest",
        400,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("self/obj")
                        .destinationBucket(BUCKET)
                        .destinationKey("self/obj")
                        .metadataDirective(MetadataDirective.COPY)));
    CopyObjectResponse r =
        s3.copyObject(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("self/obj")
                    .destinationBucket(BUCKET)
                    .destinationKey("self/obj")
                    .metadataDirective(MetadataDirective.REPLACE)
                    .contentType("application/x-changed")
                    .metadata(Map.of("v", "2")));
    assertEquals(before.eTag(), r.copyObjectResult().eTag());
    HeadObjectResponse after = s3.headObject(b -> b.bucket(BUCKET).key("self/obj"));
    assertEquals("application/x-changed", after.contentType());
    assertEquals(Map.of("v", "2"), after.metadata());
    assertEquals(before.eTag(), after.eTag());
    assertFalse(after.lastModified().isBefore(before.lastModified()));
    assertArrayEquals(
        data, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("self/obj")).asByteArray());
    assertArrayEquals(data, ufsBytes(BUCKET, "self/obj"));
  }

  @Test
  void copySourceConditionsFailWith412AndRangesAreRefused() throws Exception {
    byte[] data = random(5000, 3);
    String etag =
        s3.putObject(b -> b.bucket(BUCKET).key("cond/src"), RequestBody.fromBytes(data)).eTag();
    Instant modified = s3.headObject(b -> b.bucket(BUCKET).key("cond/src")).lastModified();
    Instant past = modified.minus(1, ChronoUnit.DAYS);
    Instant future = modified.plus(1, ChronoUnit.DAYS);
    String other = "\"00000000000000000000000000000000\"";
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("cond/src")
                        .destinationBucket(BUCKET)
                        .destinationKey("cond/dst")
                        .copySourceIfMatch(other)));
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("cond/src")
                        .destinationBucket(BUCKET)
                        .destinationKey("cond/dst")
                        .copySourceIfNoneMatch(etag)));
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("cond/src")
                        .destinationBucket(BUCKET)
                        .destinationKey("cond/dst")
                        .copySourceIfModifiedSince(future)));
    assertS3Error(
        "PreconditionFailed",
        412,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("cond/src")
                        .destinationBucket(BUCKET)
                        .destinationKey("cond/dst")
                        .copySourceIfUnmodifiedSince(past)));
    // CopyObject copies whole objects: a source range is for UploadPartCopy.
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            s3.copyObject(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("cond/src")
                        .destinationBucket(BUCKET)
                        .destinationKey("cond/dst")
                        .overrideConfiguration(
                            o -> o.putHeader("x-amz-copy-source-range", "bytes=0-9"))));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/cond/dst")));
    assertS3Error("NoSuchKey", 404, () -> s3.headObject(b -> b.bucket(BUCKET).key("cond/dst")));

    // Conditions that hold.
    s3.copyObject(
        b ->
            b.sourceBucket(BUCKET)
                .sourceKey("cond/src")
                .destinationBucket(BUCKET)
                .destinationKey("cond/dst")
                .copySourceIfMatch(etag)
                .copySourceIfNoneMatch(other)
                .copySourceIfModifiedSince(past)
                .copySourceIfUnmodifiedSince(future));
    assertArrayEquals(data, ufsBytes(BUCKET, "cond/dst"));
    // A true If-Match wins over a false If-Unmodified-Since, as for reads.
    s3.copyObject(
        b ->
            b.sourceBucket(BUCKET)
                .sourceKey("cond/src")
                .destinationBucket(BUCKET)
                .destinationKey("cond/dst2")
                .copySourceIfMatch(etag)
                .copySourceIfUnmodifiedSince(past));
    assertArrayEquals(data, ufsBytes(BUCKET, "cond/dst2"));
  }

  @Test
  void tagsArePutReadCountedAndDeleted() throws Exception {
    s3.putObject(
        b ->
            b.bucket(BUCKET)
                .key("tags/obj")
                .tagging("project=strata&team=cache%20team" + "&empty="),
        RequestBody.fromString("tagged"));
    assertEquals(Map.of("project", "strata", "team", "cache team", "empty", ""), tags("tags/obj"));
    assertEquals(3, s3.getObject(b -> b.bucket(BUCKET).key("tags/obj"), (r, in) -> r).tagCount());

    s3.putObjectTagging(
        b ->
            b.bucket(BUCKET)
                .key("tags/obj")
                .tagging(
                    t ->
                        t.tagSet(
                            Tag.builder().key("ключ").value("значение / + & =").build(),
                            Tag.builder().key("k2").value("v2").build())));
    assertEquals(Map.of("ключ", "значение / + & =", "k2", "v2"), tags("tags/obj"));
    assertEquals(2, s3.getObject(b -> b.bucket(BUCKET).key("tags/obj"), (r, in) -> r).tagCount());
    // The object itself is unchanged.
    assertEquals(
        "tagged", s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("tags/obj")).asUtf8String());

    List<Tag> eleven = new ArrayList<>();
    for (int i = 0; i < 11; i++) {
      eleven.add(Tag.builder().key("k" + i).value("v").build());
    }
    assertS3Error(
        "InvalidTag",
        400,
        () ->
            s3.putObjectTagging(
                b -> b.bucket(BUCKET).key("tags/obj").tagging(t -> t.tagSet(eleven))));
    // S3 answers a header with a key twice as a bad argument rather than a bad tag.
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            s3.putObject(
                b -> b.bucket(BUCKET).key("tags/bad").tagging("a=1&a=2"),
                RequestBody.fromString("x")));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/tags/bad")));
    assertEquals(2, tags("tags/obj").size());

    s3.deleteObjectTagging(b -> b.bucket(BUCKET).key("tags/obj"));
    assertEquals(Map.of(), tags("tags/obj"));
    assertNull(s3.getObject(b -> b.bucket(BUCKET).key("tags/obj"), (r, in) -> r).tagCount());
    assertS3Error(
        "NoSuchKey",
        404,
        () ->
            s3.putObjectTagging(
                b ->
                    b.bucket(BUCKET)
                        .key("tags/missing")
                        .tagging(t -> t.tagSet(Tag.builder().key("a").value("b").build()))));
  }

  @Test
  void deleteObjectsRemovesUpTo1000KeysExistingOrNot() throws Exception {
    String bucket = "bulk";
    s3.createBucket(b -> b.bucket(bucket));
    // 600 objects written straight into the under store, taken in by the namespace.
    Path root = cluster.ufs("/" + bucket);
    List<String> existing = new ArrayList<>();
    for (int i = 0; i < 600; i++) {
      String key = "d" + (i % 7) + "/sub" + (i % 3) + "/key-" + i;
      Path f = root.resolve(key);
      Files.createDirectories(f.getParent());
      Files.writeString(f, key);
      existing.add(key);
    }
    cluster.loadFromUnderStore("/" + bucket);
    assertEquals(existing.stream().sorted().toList(), cluster.namespaceKeys("/" + bucket));

    // 500 existing and 500 missing keys; S3 reports a missing key as deleted.
    List<String> first = new ArrayList<>(existing.subList(0, 500));
    for (int i = 0; i < 500; i++) {
      first.add("missing/key-" + i);
    }
    DeleteObjectsResponse r =
        s3.deleteObjects(
            b ->
                b.bucket(bucket)
                    .delete(
                        d ->
                            d.objects(
                                first.stream()
                                    .map(k -> ObjectIdentifier.builder().key(k).build())
                                    .toList())));
    assertEquals(List.of(), r.errors());
    assertEquals(
        first.stream().sorted().toList(), r.deleted().stream().map(x -> x.key()).sorted().toList());
    for (String k : existing.subList(0, 500)) {
      assertFalse(Files.exists(root.resolve(k)), k);
    }

    // Quiet mode answers with the errors only; an invalid key is one.
    List<String> second = new ArrayList<>(existing.subList(500, 600));
    second.add("missing/again");
    second.add("bad//key");
    DeleteObjectsResponse quiet =
        s3.deleteObjects(
            b ->
                b.bucket(bucket)
                    .delete(
                        d ->
                            d.quiet(true)
                                .objects(
                                    second.stream()
                                        .map(k -> ObjectIdentifier.builder().key(k).build())
                                        .toList())));
    assertEquals(List.of(), quiet.deleted());
    assertEquals(List.of("bad//key"), quiet.errors().stream().map(e -> e.key()).toList());
    assertEquals("InvalidArgument", quiet.errors().get(0).code());

    // Keys with the characters XML escapes, both ways.
    String xmlKey = "x&y<z>'\"é";
    s3.putObject(b -> b.bucket(bucket).key(xmlKey), RequestBody.fromString("x"));
    DeleteObjectsResponse escaped =
        s3.deleteObjects(
            b ->
                b.bucket(bucket)
                    .delete(d -> d.objects(ObjectIdentifier.builder().key(xmlKey).build())));
    assertEquals(List.of(xmlKey), escaped.deleted().stream().map(x -> x.key()).toList());
    assertFalse(Files.exists(root.resolve(xmlKey)));

    // More than 1000 keys is refused whole.
    List<ObjectIdentifier> tooMany = new ArrayList<>();
    for (int i = 0; i < 1001; i++) {
      tooMany.add(ObjectIdentifier.builder().key("k" + i).build());
    }
    assertS3Error(
        "MalformedXML",
        400,
        () -> s3.deleteObjects(b -> b.bucket(bucket).delete(d -> d.objects(tooMany))));

    assertEquals(0, s3.listObjectsV2(b -> b.bucket(bucket)).keyCount());
    assertEquals(List.of(), cluster.namespaceKeys("/" + bucket));
    assertEquals(List.of(), S3ProxyTestCluster.ufsFiles(root));
    s3.deleteBucket(b -> b.bucket(bucket));
    assertFalse(Files.exists(root));
  }

  @Test
  void concurrentUploadsOfOneKeyEndWithOneOfThemWhole() throws Exception {
    int size = 3 << 20;
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      for (int round = 0; round < 3; round++) {
        String key = "race/obj-" + round;
        byte[] a = random(size, 100 + round);
        byte[] b = random(size, 200 + round);
        CountDownLatch go = new CountDownLatch(1);
        AtomicBoolean writing = new AtomicBoolean(true);
        Future<?> wa =
            pool.submit(
                () -> {
                  go.await();
                  return s3.putObject(r -> r.bucket(BUCKET).key(key), RequestBody.fromBytes(a));
                });
        Future<?> wb =
            pool.submit(
                () -> {
                  go.await();
                  return chunked.putObject(
                      r -> r.bucket(BUCKET).key(key), RequestBody.fromBytes(b));
                });
        // A reader meanwhile sees no object or one of the two whole, never a mix.
        Future<?> reader =
            pool.submit(
                () -> {
                  go.await();
                  while (writing.get()) {
                    try {
                      byte[] seen =
                          s3.getObjectAsBytes(r -> r.bucket(BUCKET).key(key)).asByteArray();
                      assertTrue(Arrays.equals(seen, a) || Arrays.equals(seen, b), "a mixed read");
                    } catch (NoSuchKeyException e) {
                      // not written yet
                    }
                  }
                  return null;
                });
        go.countDown();
        wa.get(60, TimeUnit.SECONDS);
        wb.get(60, TimeUnit.SECONDS);
        writing.set(false);
        reader.get(60, TimeUnit.SECONDS);
        byte[] got = s3.getObjectAsBytes(r -> r.bucket(BUCKET).key(key)).asByteArray();
        byte[] stored = ufsBytes(BUCKET, key);
        assertTrue(Arrays.equals(got, a) || Arrays.equals(got, b), "one of the two");
        assertArrayEquals(got, stored, "the under store holds what is read");
        assertEquals(
            "\"" + Checksums.md5Hex(got) + "\"",
            s3.headObject(r -> r.bucket(BUCKET).key(key)).eTag());
      }
      // Nothing is left of the losing uploads.
      assertEquals(
          List.of("obj-0", "obj-1", "obj-2"),
          S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/race")));
      assertEquals(
          List.of(), S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/.strata-uploads")));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aReplacementKeepsTheOldObjectReadableUntilItCompletes() throws Exception {
    byte[] old = random(300_000, 5);
    byte[] fresh = random(300_000, 6);
    s3.putObject(b -> b.bucket(BUCKET).key("slow/obj"), RequestBody.fromBytes(old));
    URI url;
    try (var presigner = cluster.presigner()) {
      PresignedPutObjectRequest presigned =
          presigner.presignPutObject(
              p ->
                  p.signatureDuration(Duration.ofMinutes(5))
                      .putObjectRequest(r -> r.bucket(BUCKET).key("slow/obj")));
      url = URI.create(presigned.url().toString());
    }
    // The new bytes arrive in two halves; the second waits until the old object was read.
    CountDownLatch halfSent = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    InputStream body =
        new InputStream() {
          private int pos;

          @Override
          public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
          }

          @Override
          public int read(byte[] b, int off, int len) {
            if (pos == fresh.length) {
              return -1;
            }
            if (pos == fresh.length / 2) {
              halfSent.countDown();
              try {
                if (!release.await(30, TimeUnit.SECONDS)) {
                  throw new IllegalStateException("never released");
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return -1;
              }
            }
            int n = Math.min(len, (pos < fresh.length / 2 ? fresh.length / 2 : fresh.length) - pos);
            System.arraycopy(fresh, pos, b, off, n);
            pos += n;
            return n;
          }
        };
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<S3ProxyTestCluster.Response> put =
          pool.submit(
              () ->
                  cluster.send(
                      "PUT",
                      url,
                      Map.of(),
                      HttpRequest.BodyPublishers.fromPublisher(
                          HttpRequest.BodyPublishers.ofInputStream(() -> body), fresh.length)));
      assertTrue(halfSent.await(30, TimeUnit.SECONDS));
      assertArrayEquals(
          old,
          s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("slow/obj")).asByteArray(),
          "the old object while the new one is on its way");
      assertEquals(
          List.of("slow/obj"),
          s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("slow/")).contents().stream()
              .map(S3Object::key)
              .toList());
      release.countDown();
      S3ProxyTestCluster.Response r = put.get(60, TimeUnit.SECONDS);
      assertEquals(200, r.status(), r.text());
      assertArrayEquals(
          fresh, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key("slow/obj")).asByteArray());
      assertArrayEquals(fresh, ufsBytes(BUCKET, "slow/obj"));
      assertEquals("\"" + Checksums.md5Hex(fresh) + "\"", r.header("ETag"));
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  /** A presigned PUT of {@code key} in the test bucket. */
  private static URI presignedPut(String key) {
    try (var presigner = cluster.presigner()) {
      PresignedPutObjectRequest presigned =
          presigner.presignPutObject(
              p ->
                  p.signatureDuration(Duration.ofMinutes(5))
                      .putObjectRequest(r -> r.bucket(BUCKET).key(key)));
      return URI.create(presigned.url().toString());
    }
  }

  /**
   * A body that sends the first half of {@code data}, then runs {@code atHalf} (on the thread that
   * streams it, so the body stays open until it returns) and then sends the rest.
   */
  private static HttpRequest.BodyPublisher bodyPausedAtHalf(byte[] data, Runnable atHalf) {
    InputStream in =
        new InputStream() {
          private int pos;
          private boolean ran;

          @Override
          public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
          }

          @Override
          public int read(byte[] b, int off, int len) {
            if (pos == data.length) {
              return -1;
            }
            int half = data.length / 2;
            if (pos == half && !ran) {
              ran = true;
              atHalf.run();
            }
            int n = Math.min(len, (pos < half ? half : data.length) - pos);
            System.arraycopy(data, pos, b, off, n);
            pos += n;
            return n;
          }
        };
    return HttpRequest.BodyPublishers.fromPublisher(
        HttpRequest.BodyPublishers.ofInputStream(() -> in), data.length);
  }

  @Test
  void aSecondUploadOfAKeyCompletesWhileTheFirstIsStillSendingAndTheLaterCompletionWins()
      throws Exception {
    String key = "overlap/obj";
    byte[] old = random(200_000, 40);
    byte[] first = random((3 << 20) / 2, 41);
    byte[] second = random((3 << 20) / 2, 42);
    s3.putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromBytes(old));
    URI url = presignedPut(key);
    // The second PUT is sent, and answered, from inside the first one's body: it cannot wait
    // for the first to end, or neither would.
    List<String> events = Collections.synchronizedList(new ArrayList<>());
    byte[][] readDuring = new byte[2][];
    S3ProxyTestCluster.Response[] secondAnswer = new S3ProxyTestCluster.Response[1];
    HttpRequest.BodyPublisher firstBody =
        bodyPausedAtHalf(
            first,
            () -> {
              try {
                events.add("first half sent");
                readDuring[0] = s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray();
                secondAnswer[0] = cluster.send("PUT", url, Map.of(), second);
                events.add("second answered " + secondAnswer[0].status());
                readDuring[1] = s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray();
                events.add("first body continues");
              } catch (Exception e) {
                events.add("failed: " + e);
              }
            });
    S3ProxyTestCluster.Response firstAnswer = cluster.send("PUT", url, Map.of(), firstBody);
    events.add("first answered " + firstAnswer.status());

    assertEquals(
        List.of(
            "first half sent", "second answered 200", "first body continues", "first answered 200"),
        events,
        secondAnswer[0] == null ? "" : secondAnswer[0].text());
    assertArrayEquals(old, readDuring[0], "the old object, whole, while both are on their way");
    assertArrayEquals(second, readDuring[1], "the second object once it completed");
    assertEquals("\"" + Checksums.md5Hex(second) + "\"", secondAnswer[0].header("ETag"));
    assertEquals("\"" + Checksums.md5Hex(first) + "\"", firstAnswer.header("ETag"));
    assertArrayEquals(
        first,
        s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray(),
        "the first upload completed last and wins");
    assertArrayEquals(first, ufsBytes(BUCKET, key));
    assertEquals(
        List.of(), S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/.strata-uploads")));
  }

  @Test
  void ofTwoOverlappingCreateOnlyUploadsExactlyOneSucceeds() throws Exception {
    String key = "create-once/obj";
    byte[] first = random((3 << 20) / 2, 43);
    byte[] second = random((3 << 20) / 2, 44);
    URI url = presignedPut(key);
    Map<String, String> createOnly = Map.of("If-None-Match", "*");
    S3ProxyTestCluster.Response[] secondAnswer = new S3ProxyTestCluster.Response[1];
    List<String> failures = Collections.synchronizedList(new ArrayList<>());
    HttpRequest.BodyPublisher firstBody =
        bodyPausedAtHalf(
            first,
            () -> {
              try {
                secondAnswer[0] = cluster.send("PUT", url, createOnly, second);
              } catch (Exception e) {
                failures.add(e.toString());
              }
            });
    S3ProxyTestCluster.Response firstAnswer = cluster.send("PUT", url, createOnly, firstBody);

    assertEquals(List.of(), failures);
    assertEquals(200, secondAnswer[0].status(), secondAnswer[0].text());
    assertEquals(412, firstAnswer.status(), "the key was taken while it was on its way");
    assertTrue(firstAnswer.text().contains("PreconditionFailed"), firstAnswer.text());
    assertArrayEquals(second, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray());
    assertEquals(
        List.of(), S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + BUCKET + "/.strata-uploads")));

    // Started together, many times over: one of each pair wins, the other is refused.
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 5; round++) {
        URI each = presignedPut("create-once/race-" + round);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<S3ProxyTestCluster.Response>> answers = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
          byte[] body = random(1 << 20 | 1, 50 + i);
          answers.add(
              pool.submit(
                  () -> {
                    go.await();
                    return cluster.send("PUT", each, createOnly, body);
                  }));
        }
        go.countDown();
        List<Integer> statuses = new ArrayList<>();
        for (Future<S3ProxyTestCluster.Response> a : answers) {
          statuses.add(a.get(60, TimeUnit.SECONDS).status());
        }
        statuses.sort(null);
        assertEquals(List.of(200, 412), statuses, "round " + round);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
