package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.common.PathNames;
import io.strata.proto.FileInfo;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.BucketVersioningStatus;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.DeleteMarkerEntry;
import software.amazon.awssdk.services.s3.model.DeleteObjectResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectVersionsResponse;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.ObjectVersion;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Bucket versioning through the S3 proxy with the AWS SDK: every write of a versioned bucket makes
 * a version, older ones stay readable by id, a delete leaves a delete marker, a suspended bucket
 * writes the version {@code null}, and ListObjectVersions pages through all of it. Noncurrent
 * versions are hidden from the namespace's own listings.
 */
class S3ProxyVersioningTest {
  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
  }

  private static void versionedBucket(String bucket) {
    s3.createBucket(b -> b.bucket(bucket));
    s3.putBucketVersioning(
        b ->
            b.bucket(bucket)
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.ENABLED)));
  }

  private static String put(String bucket, String key, String content) {
    return s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString(content))
        .versionId();
  }

  private static String get(String bucket, String key, String versionId) {
    return s3.getObjectAsBytes(b -> b.bucket(bucket).key(key).versionId(versionId)).asUtf8String();
  }

  /** Every version and delete marker of a listing, as "key@id" (with "!" for a marker). */
  private static List<String> entries(ListObjectVersionsResponse r) {
    List<String> out = new ArrayList<>();
    for (ObjectVersion v : r.versions()) {
      out.add(v.key() + "@" + v.versionId() + (v.isLatest() ? " latest" : ""));
    }
    for (DeleteMarkerEntry m : r.deleteMarkers()) {
      out.add(m.key() + "@" + m.versionId() + "!" + (m.isLatest() ? " latest" : ""));
    }
    return out;
  }

  private static Optional<String> header(S3Exception e, String name) {
    return e.awsErrorDetails().sdkHttpResponse().firstMatchingHeader(name);
  }

  @Test
  void versioningIsEnabledSuspendedAndReported() {
    s3.createBucket(b -> b.bucket("state"));
    assertNull(s3.getBucketVersioning(b -> b.bucket("state")).status());
    s3.putBucketVersioning(
        b ->
            b.bucket("state")
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.ENABLED)));
    assertEquals(
        BucketVersioningStatus.ENABLED, s3.getBucketVersioning(b -> b.bucket("state")).status());
    s3.putBucketVersioning(
        b ->
            b.bucket("state")
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.SUSPENDED)));
    assertEquals(
        BucketVersioningStatus.SUSPENDED, s3.getBucketVersioning(b -> b.bucket("state")).status());
    S3Exception mfa =
        assertS3Error(
            "NotImplemented",
            501,
            () ->
                s3.putBucketVersioning(
                    b ->
                        b.bucket("state")
                            .versioningConfiguration(
                                v ->
                                    v.status(BucketVersioningStatus.ENABLED)
                                        .mfaDelete("Enabled"))));
    assertTrue(mfa.getMessage().contains("MFA delete"), mfa.getMessage());
    assertS3Error(
        "NoSuchBucket",
        404,
        () -> s3.getBucketVersioning(b -> b.bucket("no-such-versioned-bucket")));
  }

  @Test
  void everyWriteMakesAVersionAndOlderOnesStayReadable() throws Exception {
    versionedBucket("history");
    List<String> ids = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      ids.add(put("history", "dir/doc", "content " + i));
    }
    assertEquals(3, ids.stream().distinct().count(), ids.toString());
    assertFalse(ids.contains("null"));
    for (int i = 1; i <= 3; i++) {
      assertEquals("content " + i, get("history", "dir/doc", ids.get(i - 1)));
      String id = ids.get(i - 1);
      assertEquals(
          id, s3.headObject(b -> b.bucket("history").key("dir/doc").versionId(id)).versionId());
    }
    assertEquals("content 3", get("history", "dir/doc", null));
    ListObjectVersionsResponse r = s3.listObjectVersions(b -> b.bucket("history"));
    assertEquals(
        List.of(
            "dir/doc@" + ids.get(2) + " latest", "dir/doc@" + ids.get(1), "dir/doc@" + ids.get(0)),
        entries(r));
    assertEquals(1, s3.listObjectsV2(b -> b.bucket("history")).contents().size());
    assertS3Error(
        "NoSuchVersion", 404, () -> get("history", "dir/doc", "7fffffffffffffff00000000"));
    assertS3Error("InvalidArgument", 400, () -> get("history", "dir/doc", "not-an-id"));

    // The namespace lists the current object alone; the versions are in the hidden folder.
    List<String> names = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = cluster.fs().listStatus("/history")) {
      it.forEachRemaining(f -> names.add(f.getName()));
    }
    assertEquals(List.of("dir"), names);
    List<String> inDir = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = cluster.fs().listStatus("/history/dir")) {
      it.forEachRemaining(f -> inDir.add(f.getName()));
    }
    assertEquals(List.of("doc"), inDir);
    List<String> hidden = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = cluster.fs().listStatusAfter("/history", "", true)) {
      it.forEachRemaining(f -> hidden.add(f.getName()));
    }
    assertTrue(hidden.contains(PathNames.VERSIONS_FOLDER), hidden.toString());
    assertTrue(
        s3.listObjectsV2(b -> b.bucket("history").prefix(PathNames.VERSIONS_FOLDER + "/"))
            .contents()
            .isEmpty());
  }

  @Test
  void versionListingPagesThroughMarkersOneEntryAtATime() {
    versionedBucket("paged");
    String a1 = put("paged", "a", "a1");
    String a2 = put("paged", "a", "a2");
    String b1 = put("paged", "b/c", "b1");
    String marker = s3.deleteObject(b -> b.bucket("paged").key("b/c")).versionId();
    String d1 = put("paged", "d", "d1");
    List<String> expected =
        List.of(
            "a@" + a2 + " latest",
            "a@" + a1,
            "b/c@" + marker + "! latest",
            "b/c@" + b1,
            "d@" + d1 + " latest");
    // The SDK gives versions and markers apart: the full page's order is checked one entry a
    // page below.
    assertEquals(
        List.of(
            expected.get(0), expected.get(1), expected.get(3), expected.get(4), expected.get(2)),
        entries(s3.listObjectVersions(b -> b.bucket("paged"))));

    List<String> paged = new ArrayList<>();
    String keyMarker = null;
    String versionMarker = null;
    for (int pages = 0; ; pages++) {
      assertTrue(pages < 20, "paging does not end");
      String km = keyMarker;
      String vm = versionMarker;
      ListObjectVersionsResponse r =
          s3.listObjectVersions(
              b -> b.bucket("paged").maxKeys(1).keyMarker(km).versionIdMarker(vm));
      List<String> page = entries(r);
      assertEquals(1, page.size(), page.toString());
      paged.addAll(page);
      if (!r.isTruncated()) {
        break;
      }
      keyMarker = r.nextKeyMarker();
      versionMarker = r.nextVersionIdMarker();
      assertNotNull(versionMarker);
    }
    assertEquals(expected, paged);

    ListObjectVersionsResponse prefixed =
        s3.listObjectVersions(b -> b.bucket("paged").prefix("b/"));
    assertEquals(List.of("b/c@" + b1, "b/c@" + marker + "! latest"), entries(prefixed));
    ListObjectVersionsResponse rolled =
        s3.listObjectVersions(b -> b.bucket("paged").delimiter("/"));
    assertEquals(List.of("b/"), rolled.commonPrefixes().stream().map(p -> p.prefix()).toList());
    assertEquals(List.of("a@" + a2 + " latest", "a@" + a1, "d@" + d1 + " latest"), entries(rolled));
  }

  @Test
  void deleteLeavesAMarkerWhoseRemovalBringsTheObjectBack() {
    versionedBucket("delete-markers");
    String v1 = put("delete-markers", "k", "one");
    DeleteObjectResponse deleted = s3.deleteObject(b -> b.bucket("delete-markers").key("k"));
    assertTrue(deleted.deleteMarker());
    String marker = deleted.versionId();
    assertNotEquals(v1, marker);

    S3Exception missing = assertS3Error("NoSuchKey", 404, () -> get("delete-markers", "k", null));
    assertEquals(Optional.of("true"), header(missing, "x-amz-delete-marker"));
    S3Exception onMarker =
        assertS3Error("MethodNotAllowed", 405, () -> get("delete-markers", "k", marker));
    assertEquals(Optional.of("true"), header(onMarker, "x-amz-delete-marker"));
    assertTrue(s3.listObjectsV2(b -> b.bucket("delete-markers")).contents().isEmpty());
    assertEquals(
        List.of("k@" + v1, "k@" + marker + "! latest"),
        entries(s3.listObjectVersions(b -> b.bucket("delete-markers"))));
    assertEquals("one", get("delete-markers", "k", v1));

    DeleteObjectResponse unmarked =
        s3.deleteObject(b -> b.bucket("delete-markers").key("k").versionId(marker));
    assertTrue(unmarked.deleteMarker());
    assertEquals(marker, unmarked.versionId());
    assertEquals("one", get("delete-markers", "k", null));
    assertEquals(
        List.of("k@" + v1 + " latest"),
        entries(s3.listObjectVersions(b -> b.bucket("delete-markers"))));
  }

  @Test
  void deletingAVersionRemovesItForGoodAndTheNewestLeftIsCurrent() {
    versionedBucket("removal");
    String v1 = put("removal", "k", "one");
    String v2 = put("removal", "k", "two");
    String v3 = put("removal", "k", "three");
    s3.deleteObject(b -> b.bucket("removal").key("k").versionId(v2));
    assertS3Error("NoSuchVersion", 404, () -> get("removal", "k", v2));
    assertEquals("three", get("removal", "k", null));
    s3.deleteObject(b -> b.bucket("removal").key("k").versionId(v3));
    assertEquals("one", get("removal", "k", null));
    assertEquals(
        List.of("k@" + v1 + " latest"), entries(s3.listObjectVersions(b -> b.bucket("removal"))));
    // A version id that names no version deletes nothing.
    s3.deleteObject(b -> b.bucket("removal").key("k").versionId(v3));
    assertEquals("one", get("removal", "k", null));
  }

  @Test
  void aSuspendedBucketWritesTheNullVersion() {
    versionedBucket("suspended");
    String v1 = put("suspended", "k", "one");
    s3.putBucketVersioning(
        b ->
            b.bucket("suspended")
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.SUSPENDED)));
    assertEquals("null", put("suspended", "k", "two"));
    assertEquals("null", put("suspended", "k", "three"));
    assertEquals(
        List.of("k@null latest", "k@" + v1),
        entries(s3.listObjectVersions(b -> b.bucket("suspended"))));
    assertEquals("three", get("suspended", "k", "null"));
    assertEquals("one", get("suspended", "k", v1));

    DeleteObjectResponse deleted = s3.deleteObject(b -> b.bucket("suspended").key("k"));
    assertTrue(deleted.deleteMarker());
    assertEquals("null", deleted.versionId());
    assertEquals(
        List.of("k@" + v1, "k@null! latest"),
        entries(s3.listObjectVersions(b -> b.bucket("suspended"))));
    assertEquals("null", put("suspended", "k", "four"));
    assertEquals(
        List.of("k@null latest", "k@" + v1),
        entries(s3.listObjectVersions(b -> b.bucket("suspended"))));
  }

  @Test
  void copiesAndMultipartCompletionsMakeVersions() {
    versionedBucket("writes");
    String s1 = put("writes", "src", "first");
    put("writes", "src", "second");
    String before = put("writes", "dst", "old");
    CopyObjectResponse copied =
        s3.copyObject(
            b ->
                b.sourceBucket("writes")
                    .sourceKey("src")
                    .sourceVersionId(s1)
                    .destinationBucket("writes")
                    .destinationKey("dst"));
    assertEquals(s1, copied.copySourceVersionId());
    assertNotNull(copied.versionId());
    assertNotEquals(before, copied.versionId());
    assertEquals("first", get("writes", "dst", null));
    assertEquals("old", get("writes", "dst", before));

    String upload = s3.createMultipartUpload(b -> b.bucket("writes").key("dst")).uploadId();
    String etag =
        s3.uploadPart(
                b -> b.bucket("writes").key("dst").uploadId(upload).partNumber(1),
                RequestBody.fromString("parts"))
            .eTag();
    String completed =
        s3.completeMultipartUpload(
                b ->
                    b.bucket("writes")
                        .key("dst")
                        .uploadId(upload)
                        .multipartUpload(m -> m.parts(p -> p.partNumber(1).eTag(etag))))
            .versionId();
    assertNotNull(completed);
    assertEquals("parts", get("writes", "dst", null));
    assertEquals("first", get("writes", "dst", copied.versionId()));
    assertEquals(3, s3.listObjectVersions(b -> b.bucket("writes").prefix("dst")).versions().size());
  }

  @Test
  void aBucketWithVersionsIsEmptiedByVersionIdBeforeItIsDeleted() {
    versionedBucket("emptied");
    put("emptied", "x/1", "a");
    put("emptied", "x/1", "b");
    s3.deleteObject(b -> b.bucket("emptied").key("x/1"));
    assertS3Error("BucketNotEmpty", 409, () -> s3.deleteBucket(b -> b.bucket("emptied")));
    ListObjectVersionsResponse all = s3.listObjectVersions(b -> b.bucket("emptied"));
    List<ObjectIdentifier> ids = new ArrayList<>();
    all.versions()
        .forEach(
            v -> ids.add(ObjectIdentifier.builder().key(v.key()).versionId(v.versionId()).build()));
    all.deleteMarkers()
        .forEach(
            m -> ids.add(ObjectIdentifier.builder().key(m.key()).versionId(m.versionId()).build()));
    assertEquals(3, ids.size());
    DeleteObjectsResponse r =
        s3.deleteObjects(b -> b.bucket("emptied").delete(d -> d.objects(ids)));
    assertEquals(List.of(), r.errors());
    assertEquals(3, r.deleted().size());
    assertEquals(
        1, r.deleted().stream().filter(d -> Boolean.TRUE.equals(d.deleteMarker())).count());
    ListObjectVersionsResponse after = s3.listObjectVersions(b -> b.bucket("emptied"));
    assertTrue(after.versions().isEmpty() && after.deleteMarkers().isEmpty());
    s3.deleteBucket(b -> b.bucket("emptied"));
  }
}
