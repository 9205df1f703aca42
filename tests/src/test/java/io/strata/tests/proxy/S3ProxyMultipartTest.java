package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static io.strata.tests.proxy.S3ProxyTestCluster.random;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListPartsResponse;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.Part;
import software.amazon.awssdk.services.s3.model.UploadPartCopyResponse;
import software.amazon.awssdk.services.s3.model.UploadPartResponse;

/**
 * Multipart uploads through the S3 proxy with the AWS SDK: the completed object is the parts' bytes
 * with S3's multipart ETag and checksums, the checks S3 makes at completion, the listings of parts
 * and uploads, and uploads that never show as objects.
 */
class S3ProxyMultipartTest {
  private static final String BUCKET = "multipart";
  private static final int MIB = 1 << 20;

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
    s3.createBucket(b -> b.bucket(BUCKET));
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
  }

  static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  /** S3's multipart ETag: the MD5 of the parts' binary MD5s, "-N". */
  static String multipartEtag(byte[]... parts) throws Exception {
    ByteArrayOutputStream md5s = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      md5s.writeBytes(Checksums.md5(p));
    }
    return "\"" + Checksums.md5Hex(md5s.toByteArray()) + "-" + parts.length + "\"";
  }

  private static String create(String key) {
    return s3.createMultipartUpload(b -> b.bucket(BUCKET).key(key)).uploadId();
  }

  private static UploadPartResponse part(String key, String id, int number, byte[] data) {
    return s3.uploadPart(
        b -> b.bucket(BUCKET).key(key).uploadId(id).partNumber(number),
        RequestBody.fromBytes(data));
  }

  private static CompletedPart done(int number, String etag) {
    return CompletedPart.builder().partNumber(number).eTag(etag).build();
  }

  private static List<String> uploadFolders() throws Exception {
    Path uploads = cluster.ufs("/" + BUCKET + "/.strata-uploads");
    if (!Files.exists(uploads)) {
      return List.of();
    }
    try (var s = Files.list(uploads)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void completedUploadIsThePartsBytesWithTheMultipartEtag() throws Exception {
    byte[] source = random(8 * MIB, 1);
    s3.putObject(b -> b.bucket(BUCKET).key("mpu/source"), RequestBody.fromBytes(source));
    String key = "mpu/assembled object";
    String id =
        s3.createMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .contentType("application/x-assembled")
                        .metadata(Map.of("parts", "three"))
                        .tagging("kind=multipart"))
            .uploadId();
    byte[] p1 = random(5 * MIB, 2);
    byte[] p2 = Arrays.copyOfRange(source, MIB, 6 * MIB + 17);
    byte[] p3 = random(1000, 3);
    UploadPartResponse r1 = part(key, id, 1, p1);
    assertEquals("\"" + Checksums.md5Hex(p1) + "\"", r1.eTag());
    // Part 2 is a range of another object.
    UploadPartCopyResponse r2 =
        s3.uploadPartCopy(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("mpu/source")
                    .destinationBucket(BUCKET)
                    .destinationKey(key)
                    .uploadId(id)
                    .partNumber(2)
                    .copySourceRange("bytes=" + MIB + "-" + (6 * MIB + 16)));
    assertEquals("\"" + Checksums.md5Hex(p2) + "\"", r2.copyPartResult().eTag());
    UploadPartResponse r3 = part(key, id, 3, p3);
    // Not an object until completed.
    assertS3Error("NoSuchKey", 404, () -> s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/" + key)));

    CompleteMultipartUploadResponse c =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(
                        m ->
                            m.parts(
                                done(1, r1.eTag()),
                                done(2, r2.copyPartResult().eTag()),
                                done(3, r3.eTag()))));
    byte[] whole = concat(p1, p2, p3);
    assertEquals(multipartEtag(p1, p2, p3), c.eTag());
    assertEquals(key, c.key());
    assertEquals(BUCKET, c.bucket());
    var got = s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key));
    assertArrayEquals(whole, got.asByteArray());
    assertArrayEquals(whole, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key)));
    GetObjectResponse g = got.response();
    assertEquals(c.eTag(), g.eTag());
    assertEquals("application/x-assembled", g.contentType());
    assertEquals(Map.of("parts", "three"), g.metadata());
    assertEquals(1, g.tagCount());
    assertEquals(whole.length, s3.headObject(b -> b.bucket(BUCKET).key(key)).contentLength());
    // The upload is gone with its parts.
    assertEquals(List.of(), uploadFolders());
    assertS3Error(
        "NoSuchUpload", 404, () -> s3.listParts(b -> b.bucket(BUCKET).key(key).uploadId(id)));
    // A second completion of the same upload (a retry whose answer was lost) is answered with
    // the object it made, as S3 does, and changes nothing.
    CompleteMultipartUploadResponse again =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(m -> m.parts(done(1, r1.eTag()))));
    assertEquals(c.eTag(), again.eTag());
    assertEquals(key, again.key());
    assertArrayEquals(whole, s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray());
    // Once another object replaced it, the upload names nothing any more.
    s3.putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromBytes(p3));
    assertS3Error(
        "NoSuchUpload",
        404,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(1, r1.eTag())))));
  }

  @Test
  void uploadPartCopyTakesWholeObjectsAndChecksRanges() throws Exception {
    byte[] source = random(3000, 4);
    s3.putObject(b -> b.bucket(BUCKET).key("copy/src"), RequestBody.fromBytes(source));
    String key = "copy/dst";
    String id = create(key);
    UploadPartCopyResponse whole =
        s3.uploadPartCopy(
            b ->
                b.sourceBucket(BUCKET)
                    .sourceKey("copy/src")
                    .destinationBucket(BUCKET)
                    .destinationKey(key)
                    .uploadId(id)
                    .partNumber(1));
    assertEquals("\"" + Checksums.md5Hex(source) + "\"", whole.copyPartResult().eTag());
    assertS3Error(
        "InvalidRange",
        416,
        () ->
            s3.uploadPartCopy(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("copy/src")
                        .destinationBucket(BUCKET)
                        .destinationKey(key)
                        .uploadId(id)
                        .partNumber(2)
                        .copySourceRange("bytes=0-3000")));
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            s3.uploadPartCopy(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("copy/src")
                        .destinationBucket(BUCKET)
                        .destinationKey(key)
                        .uploadId(id)
                        .partNumber(2)
                        .copySourceRange("bytes=10-")));
    assertS3Error(
        "NoSuchKey",
        404,
        () ->
            s3.uploadPartCopy(
                b ->
                    b.sourceBucket(BUCKET)
                        .sourceKey("copy/none")
                        .destinationBucket(BUCKET)
                        .destinationKey(key)
                        .uploadId(id)
                        .partNumber(2)));
    ListPartsResponse parts = s3.listParts(b -> b.bucket(BUCKET).key(key).uploadId(id));
    assertEquals(List.of(1), parts.parts().stream().map(Part::partNumber).toList());
    CompleteMultipartUploadResponse c =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(m -> m.parts(done(1, whole.copyPartResult().eTag()))));
    assertEquals(multipartEtag(source), c.eTag());
    assertArrayEquals(source, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key)));
  }

  @Test
  void completionChecksThePartsAsS3Does() throws Exception {
    String key = "checks/obj";
    String id = create(key);
    byte[] small = random(1000, 5);
    byte[] big = random(5 * MIB, 6);
    UploadPartResponse r1 = part(key, id, 1, small);
    UploadPartResponse r2 = part(key, id, 2, big);
    UploadPartResponse r3 = part(key, id, 3, small);
    String wrong = "\"" + Checksums.md5Hex(new byte[1]) + "\"";
    assertS3Error(
        "InvalidPart",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(2, wrong), done(3, r3.eTag())))));
    assertS3Error(
        "InvalidPart",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(2, r2.eTag()), done(4, r3.eTag())))));
    assertS3Error(
        "InvalidPartOrder",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(3, r3.eTag()), done(2, r2.eTag())))));
    // Every part but the last needs 5 MiB.
    assertS3Error(
        "EntityTooSmall",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(1, r1.eTag()), done(2, r2.eTag())))));
    assertS3Error(
        "MalformedXML",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(List.of()))));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/" + key)));
    // After those refusals the upload is still whole: parts 2 and 3 complete it.
    CompleteMultipartUploadResponse c =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(m -> m.parts(done(2, r2.eTag()), done(3, r3.eTag()))));
    assertEquals(multipartEtag(big, small), c.eTag());
    assertArrayEquals(
        concat(big, small), Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key)));

    // An aborted upload is gone for every call.
    String aborted = create("checks/aborted");
    UploadPartResponse a1 = part("checks/aborted", aborted, 1, small);
    assertTrue(uploadFolders().contains(aborted));
    s3.abortMultipartUpload(b -> b.bucket(BUCKET).key("checks/aborted").uploadId(aborted));
    assertFalse(uploadFolders().contains(aborted));
    assertS3Error(
        "NoSuchUpload",
        404,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key("checks/aborted")
                        .uploadId(aborted)
                        .multipartUpload(m -> m.parts(done(1, a1.eTag())))));
    assertS3Error("NoSuchUpload", 404, () -> part("checks/aborted", aborted, 2, small));
    assertS3Error(
        "NoSuchUpload",
        404,
        () -> s3.listParts(b -> b.bucket(BUCKET).key("checks/aborted").uploadId(aborted)));
    assertS3Error(
        "NoSuchUpload",
        404,
        () ->
            s3.abortMultipartUpload(b -> b.bucket(BUCKET).key("checks/aborted").uploadId(aborted)));
    assertS3Error(
        "NoSuchUpload",
        404,
        () ->
            s3.listParts(
                b ->
                    b.bucket(BUCKET)
                        .key("checks/aborted")
                        .uploadId("0123456789abcdef0123456789abcdef")));
    // An upload id belongs to its key.
    String other = create("checks/one");
    assertS3Error("NoSuchUpload", 404, () -> part("checks/two", other, 1, small));
    s3.abortMultipartUpload(b -> b.bucket(BUCKET).key("checks/one").uploadId(other));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/checks/aborted")));
  }

  @Test
  void aPartUploadedAgainReplacesTheEarlierOneAndAFailedResendKeepsIt() throws Exception {
    String key = "resend/obj";
    String id = create(key);
    byte[] firstTry = random(5 * MIB, 60);
    byte[] secondTry = random(5 * MIB, 61);
    byte[] last = random(1000, 62);
    UploadPartResponse old1 = part(key, id, 1, firstTry);
    UploadPartResponse new1 = part(key, id, 1, secondTry);
    UploadPartResponse r2 = part(key, id, 2, last);
    // A re-send whose body does not match its Content-MD5 is refused and leaves part 1 as it was.
    String wrongMd5 = java.util.Base64.getEncoder().encodeToString(Checksums.md5(last));
    assertS3Error(
        "BadDigest",
        400,
        () ->
            s3.uploadPart(
                b -> b.bucket(BUCKET).key(key).uploadId(id).partNumber(1).contentMD5(wrongMd5),
                RequestBody.fromBytes(firstTry)));
    ListPartsResponse listed = s3.listParts(b -> b.bucket(BUCKET).key(key).uploadId(id));
    assertEquals(List.of(1, 2), listed.parts().stream().map(Part::partNumber).toList());
    assertEquals(new1.eTag(), listed.parts().get(0).eTag());
    // The earlier upload of part 1 is gone: naming its ETag fails.
    assertS3Error(
        "InvalidPart",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(m -> m.parts(done(1, old1.eTag()), done(2, r2.eTag())))));
    // Naming part 1 twice is out of order, as S3 answers.
    assertS3Error(
        "InvalidPartOrder",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .multipartUpload(
                            m ->
                                m.parts(
                                    done(1, old1.eTag()),
                                    done(1, new1.eTag()),
                                    done(2, r2.eTag())))));
    CompleteMultipartUploadResponse completed =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(m -> m.parts(done(1, new1.eTag()), done(2, r2.eTag()))));
    assertEquals(multipartEtag(secondTry, last), completed.eTag());
    assertArrayEquals(
        concat(secondTry, last), s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray());
    assertFalse(uploadFolders().contains(id));
  }

  @Test
  void listPartsPagesThroughEveryPart() throws Exception {
    String key = "parts/obj";
    String id = create(key);
    List<String> etags = new ArrayList<>();
    for (int n = 1; n <= 7; n++) {
      byte[] data = random(100 + n, n);
      etags.add(part(key, id, n, data).eTag());
    }
    // Part 4 uploaded again replaces the first one.
    byte[] again = random(555, 44);
    etags.set(3, part(key, id, 4, again).eTag());
    for (int maxParts : new int[] {1, 2, 3, 1000}) {
      List<Part> all = new ArrayList<>();
      Integer marker = null;
      for (int pages = 0; ; pages++) {
        assertTrue(pages < 10);
        Integer m = marker;
        ListPartsResponse r =
            s3.listParts(
                b -> b.bucket(BUCKET).key(key).uploadId(id).maxParts(maxParts).partNumberMarker(m));
        assertTrue(r.parts().size() <= maxParts);
        assertEquals(maxParts, r.maxParts());
        assertEquals(id, r.uploadId());
        assertEquals(System.getProperty("user.name"), r.initiator().id());
        all.addAll(r.parts());
        if (!r.isTruncated()) {
          break;
        }
        assertEquals(r.parts().get(r.parts().size() - 1).partNumber(), r.nextPartNumberMarker());
        marker = r.nextPartNumberMarker();
      }
      assertEquals(
          List.of(1, 2, 3, 4, 5, 6, 7),
          all.stream().map(Part::partNumber).toList(),
          "max-parts " + maxParts);
      assertEquals(etags, all.stream().map(Part::eTag).toList());
      assertEquals(555L, all.get(3).size());
      assertEquals(102L, all.get(1).size());
    }
    s3.abortMultipartUpload(b -> b.bucket(BUCKET).key(key).uploadId(id));
  }

  @Test
  void listMultipartUploadsPagesThroughEveryUpload() throws Exception {
    s3.createBucket(b -> b.bucket("uploads"));
    // Several uploads of one key, listed in the order they were started, resumed after the
    // one a page ended with.
    List<String> keys =
        List.of(
            "u/a", "u/a", "u/a", "u/a", "u/a", "u/a", "u/b", "u/c/d", "u/c/e", "u/c-f", "u/d", "v");
    List<String[]> started = new ArrayList<>();
    for (String k : keys) {
      started.add(
          new String[] {k, s3.createMultipartUpload(b -> b.bucket("uploads").key(k)).uploadId()});
    }
    for (int maxUploads : new int[] {1, 2, 1000}) {
      List<String> seen = new ArrayList<>();
      String keyMarker = null;
      String idMarker = null;
      for (int pages = 0; ; pages++) {
        assertTrue(pages < 20);
        String km = keyMarker;
        String im = idMarker;
        ListMultipartUploadsResponse r =
            s3.listMultipartUploads(
                b -> b.bucket("uploads").maxUploads(maxUploads).keyMarker(km).uploadIdMarker(im));
        assertTrue(r.uploads().size() <= maxUploads);
        for (MultipartUpload u : r.uploads()) {
          seen.add(u.key() + " " + u.uploadId());
        }
        if (!r.isTruncated()) {
          break;
        }
        keyMarker = r.nextKeyMarker();
        idMarker = r.nextUploadIdMarker();
      }
      assertEquals(started.size(), seen.size(), "max-uploads " + maxUploads + ": " + seen);
      assertEquals(started.size(), new HashSet<>(seen).size(), seen::toString);
      List<String> keysSeen = seen.stream().map(s -> s.substring(0, s.indexOf(' '))).toList();
      assertEquals(keys.stream().sorted().toList(), keysSeen, "uploads listed by key");
      List<String> sameKey = seen.stream().filter(s -> s.startsWith("u/a ")).toList();
      assertEquals(
          started.stream().filter(u -> u[0].equals("u/a")).map(u -> u[0] + " " + u[1]).toList(),
          sameKey,
          "uploads of one key by the time they were started");
    }
    // With a prefix and a delimiter, as ListObjects rolls keys up.
    ListMultipartUploadsResponse rolled =
        s3.listMultipartUploads(b -> b.bucket("uploads").prefix("u/").delimiter("/"));
    assertEquals(
        List.of("u/a", "u/a", "u/a", "u/a", "u/a", "u/a", "u/b", "u/c-f", "u/d"),
        rolled.uploads().stream().map(MultipartUpload::key).toList());
    assertEquals(List.of("u/c/"), rolled.commonPrefixes().stream().map(p -> p.prefix()).toList());
    // Paged, a page that ends with a common prefix resumes after every upload below it.
    for (int maxUploads : new int[] {1, 2}) {
      List<String> seen = new ArrayList<>();
      String keyMarker = null;
      String idMarker = null;
      for (int pages = 0; ; pages++) {
        assertTrue(pages < 20, "paging does not end: " + seen);
        String km = keyMarker;
        String im = idMarker;
        ListMultipartUploadsResponse r =
            s3.listMultipartUploads(
                b ->
                    b.bucket("uploads")
                        .prefix("u/")
                        .delimiter("/")
                        .maxUploads(maxUploads)
                        .keyMarker(km)
                        .uploadIdMarker(im));
        List<String> page = new ArrayList<>();
        r.uploads().forEach(u -> page.add(u.key()));
        r.commonPrefixes().forEach(p -> page.add(p.prefix()));
        page.sort(
            (x, y) ->
                Arrays.compareUnsigned(
                    x.getBytes(StandardCharsets.UTF_8), y.getBytes(StandardCharsets.UTF_8)));
        seen.addAll(page);
        if (!r.isTruncated()) {
          break;
        }
        keyMarker = r.nextKeyMarker();
        idMarker = r.nextUploadIdMarker();
      }
      assertEquals(
          List.of("u/a", "u/a", "u/a", "u/a", "u/a", "u/a", "u/b", "u/c-f", "u/c/", "u/d"),
          seen,
          "max-uploads " + maxUploads);
    }
    // Uploads are no objects: neither S3 nor the namespace lists them.
    assertEquals(0, s3.listObjectsV2(b -> b.bucket("uploads")).keyCount());
    assertEquals(0, s3.listObjects(b -> b.bucket("uploads")).contents().size());
    assertEquals(List.of(), cluster.namespaceKeys("/uploads"));
    for (String[] u : started) {
      s3.abortMultipartUpload(b -> b.bucket("uploads").key(u[0]).uploadId(u[1]));
    }
    assertEquals(0, s3.listMultipartUploads(b -> b.bucket("uploads")).uploads().size());
    s3.deleteBucket(b -> b.bucket("uploads"));
  }

  @Test
  void aBucketWithOnlyAnUnfinishedUploadCanBeDeleted() throws Exception {
    String bucket = "unfinished";
    s3.createBucket(b -> b.bucket(bucket));
    String id = s3.createMultipartUpload(b -> b.bucket(bucket).key("dir/never")).uploadId();
    s3.uploadPart(
        b -> b.bucket(bucket).key("dir/never").uploadId(id).partNumber(1),
        RequestBody.fromBytes(random(2000, 7)));
    assertTrue(Files.exists(cluster.ufs("/" + bucket + "/.strata-uploads/" + id)));
    assertEquals(0, s3.listObjectsV2(b -> b.bucket(bucket)).keyCount());
    assertEquals(0, s3.listObjectsV2(b -> b.bucket(bucket).prefix(".strata")).keyCount());
    assertEquals(List.of(), cluster.namespaceKeys("/" + bucket));
    s3.deleteBucket(b -> b.bucket(bucket));
    assertFalse(Files.exists(cluster.ufs("/" + bucket)));
    assertFalse(cluster.fs().exists("/" + bucket));
  }

  @Test
  void compositeCrc32UploadHasTheChecksumOfThePartChecksums() throws Exception {
    String key = "sums/composite";
    String id =
        s3.createMultipartUpload(
                b -> b.bucket(BUCKET).key(key).checksumAlgorithm(ChecksumAlgorithm.CRC32))
            .uploadId();
    byte[] p1 = random(5 * MIB, 8);
    byte[] p2 = random(70_000, 9);
    UploadPartResponse r1 =
        s3.uploadPart(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .partNumber(1)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32),
            RequestBody.fromBytes(p1));
    UploadPartResponse r2 =
        s3.uploadPart(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .partNumber(2)
                    .checksumAlgorithm(ChecksumAlgorithm.CRC32),
            RequestBody.fromBytes(p2));
    assertEquals(Checksums.of(ChecksumAlgorithm.CRC32, p1), r1.checksumCRC32());
    assertEquals(Checksums.of(ChecksumAlgorithm.CRC32, p2), r2.checksumCRC32());
    ListPartsResponse listed = s3.listParts(b -> b.bucket(BUCKET).key(key).uploadId(id));
    assertEquals(
        List.of(r1.checksumCRC32(), r2.checksumCRC32()),
        listed.parts().stream().map(Part::checksumCRC32).toList());
    CompleteMultipartUploadResponse c =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .multipartUpload(
                        m ->
                            m.parts(
                                CompletedPart.builder()
                                    .partNumber(1)
                                    .eTag(r1.eTag())
                                    .checksumCRC32(r1.checksumCRC32())
                                    .build(),
                                CompletedPart.builder()
                                    .partNumber(2)
                                    .eTag(r2.eTag())
                                    .checksumCRC32(r2.checksumCRC32())
                                    .build())));
    // CRC32 of the concatenated binary part CRCs, "-2".
    CRC32 crc = new CRC32();
    crc.update(java.util.Base64.getDecoder().decode(r1.checksumCRC32()));
    crc.update(java.util.Base64.getDecoder().decode(r2.checksumCRC32()));
    String expected =
        Checksums.base64(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array()) + "-2";
    assertEquals(expected, c.checksumCRC32());
    assertEquals("COMPOSITE", c.checksumTypeAsString());
    HeadObjectResponse h =
        s3.headObject(b -> b.bucket(BUCKET).key(key).checksumMode(ChecksumMode.ENABLED));
    assertEquals(expected, h.checksumCRC32());
    assertEquals("COMPOSITE", h.checksumTypeAsString());
    assertArrayEquals(
        concat(p1, p2),
        s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key).checksumMode(ChecksumMode.ENABLED))
            .asByteArray());
    assertArrayEquals(concat(p1, p2), Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key)));
  }

  @Test
  void fullObjectCrc64NvmeUploadHasTheChecksumOfTheWholeObject() throws Exception {
    String key = "sums/full";
    String id =
        s3.createMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .checksumAlgorithm(ChecksumAlgorithm.CRC64_NVME)
                        .checksumType(ChecksumType.FULL_OBJECT))
            .uploadId();
    byte[] p1 = random(5 * MIB + 3, 10);
    byte[] p2 = random(123_457, 11);
    // The SDK computes CRC64NVME only with the CRT library: the values are given to it.
    String c1 = Checksums.of(ChecksumAlgorithm.CRC64_NVME, p1);
    String c2 = Checksums.of(ChecksumAlgorithm.CRC64_NVME, p2);
    UploadPartResponse r1 =
        s3.uploadPart(
            b -> b.bucket(BUCKET).key(key).uploadId(id).partNumber(1).checksumCRC64NVME(c1),
            RequestBody.fromBytes(p1));
    UploadPartResponse r2 =
        s3.uploadPart(
            b -> b.bucket(BUCKET).key(key).uploadId(id).partNumber(2).checksumCRC64NVME(c2),
            RequestBody.fromBytes(p2));
    assertEquals(c1, r1.checksumCRC64NVME());
    byte[] whole = concat(p1, p2);
    String expected = Checksums.of(ChecksumAlgorithm.CRC64_NVME, whole);
    // A whole-object checksum given at completion is checked.
    assertS3Error(
        "BadDigest",
        400,
        () ->
            s3.completeMultipartUpload(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .checksumCRC64NVME(c1)
                        .multipartUpload(m -> m.parts(done(1, r1.eTag()), done(2, r2.eTag())))));
    assertFalse(Files.exists(cluster.ufs("/" + BUCKET + "/" + key)));
    CompleteMultipartUploadResponse c =
        s3.completeMultipartUpload(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .checksumCRC64NVME(expected)
                    .multipartUpload(m -> m.parts(done(1, r1.eTag()), done(2, r2.eTag()))));
    assertEquals(expected, c.checksumCRC64NVME());
    assertEquals("FULL_OBJECT", c.checksumTypeAsString());
    assertEquals(multipartEtag(p1, p2), c.eTag());
    S3ProxyTestCluster.Response got =
        cluster.signed(
            "GET",
            "/" + BUCKET + "/" + key,
            Map.of("x-amz-checksum-mode", "ENABLED"),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(200, got.status());
    assertArrayEquals(whole, got.body());
    assertEquals(expected, got.header("x-amz-checksum-crc64nvme"));
    assertEquals("FULL_OBJECT", got.header("x-amz-checksum-type"));
    assertArrayEquals(whole, Files.readAllBytes(cluster.ufs("/" + BUCKET + "/" + key)));
  }

  @Test
  void aPartWithoutTheUploadsChecksumIsRefused() throws Exception {
    String key = "sums/mismatch";
    String id =
        s3.createMultipartUpload(
                b -> b.bucket(BUCKET).key(key).checksumAlgorithm(ChecksumAlgorithm.SHA256))
            .uploadId();
    assertS3Error(
        "InvalidRequest",
        400,
        () ->
            s3.uploadPart(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .partNumber(1)
                        .checksumAlgorithm(ChecksumAlgorithm.CRC32),
                RequestBody.fromBytes(random(10, 1))));
    assertS3Error(
        "BadDigest",
        400,
        () ->
            s3.uploadPart(
                b ->
                    b.bucket(BUCKET)
                        .key(key)
                        .uploadId(id)
                        .partNumber(1)
                        .checksumSHA256(Checksums.base64(new byte[32])),
                RequestBody.fromBytes(random(10, 1))));
    assertEquals(0, s3.listParts(b -> b.bucket(BUCKET).key(key).uploadId(id)).parts().size());
    byte[] data = random(10, 1);
    UploadPartResponse r =
        s3.uploadPart(
            b ->
                b.bucket(BUCKET)
                    .key(key)
                    .uploadId(id)
                    .partNumber(1)
                    .checksumAlgorithm(ChecksumAlgorithm.SHA256),
            RequestBody.fromBytes(data));
    assertEquals(Checksums.of(ChecksumAlgorithm.SHA256, data), r.checksumSHA256());
    s3.abortMultipartUpload(b -> b.bucket(BUCKET).key(key).uploadId(id));
  }
}
