package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.proto.FileInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.Bucket;
import software.amazon.awssdk.services.s3.model.BucketLocationConstraint;
import software.amazon.awssdk.services.s3.model.GetBucketLocationResponse;
import software.amazon.awssdk.services.s3.model.ListBucketsResponse;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;

/** Bucket operations of the S3 proxy, with the AWS SDK, against the namespace they map to. */
class S3ProxyBucketsTest {
  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.start(dir.resolve("cluster"));
    s3 = cluster.client();
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

  @Test
  void listBucketsShowsTheTopLevelFoldersOfTheNamespace() throws Exception {
    for (String b : List.of("list-b", "list-a", "list.c")) {
      s3.createBucket(r -> r.bucket(b));
    }
    // A folder made in the namespace is a bucket too.
    cluster.fs().createDirectory("/list-d", false, false);
    ListBucketsResponse listed = s3.listBuckets();
    List<String> names = listed.buckets().stream().map(Bucket::name).toList();
    List<String> folders = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = cluster.fs().listStatus("/")) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (f.getDirectory()) {
          folders.add(f.getName());
        }
      }
    }
    assertEquals(folders.stream().sorted().toList(), names);
    assertTrue(names.containsAll(List.of("list-a", "list-b", "list.c", "list-d")), names::toString);
    assertEquals(names.stream().sorted().toList(), names, "buckets are listed by name");
    assertEquals(System.getProperty("user.name"), listed.owner().displayName());
    for (Bucket b : listed.buckets()) {
      assertTrue(b.creationDate() != null, b::toString);
    }
  }

  @Test
  void createBucketChecksS3NamingRulesAndOwnership() throws Exception {
    for (String bad :
        List.of(
            "ab",
            "Upper-case",
            "under_score",
            "-leading",
            "trailing-",
            "192.168.5.4",
            "two..dots",
            "dot.-dash",
            "xn--punycode",
            "bucket-s3alias",
            "a".repeat(64))) {
      // Sent as signed by the SDK's signer: the SDK itself refuses some of these names.
      S3ProxyTestCluster.Response r =
          cluster.signed(
              "PUT",
              "/" + bad,
              Map.of(),
              null,
              S3ProxyTestCluster.ACCESS_KEY,
              S3ProxyTestCluster.SECRET_KEY,
              Clock.systemUTC());
      assertEquals(400, r.status(), bad);
      assertEquals("InvalidBucketName", r.errorCode(), bad);
      assertFalse(Files.exists(cluster.ufs("/" + bad)), bad);
      assertFalse(cluster.fs().exists("/" + bad), bad);
    }
    String longest = "a".repeat(63);
    s3.createBucket(r -> r.bucket(longest));
    s3.createBucket(r -> r.bucket("abc"));
    s3.createBucket(r -> r.bucket("dotted.name-1"));
    for (String good : List.of(longest, "abc", "dotted.name-1")) {
      assertTrue(cluster.fs().getStatus("/" + good).getDirectory(), good);
      assertTrue(Files.isDirectory(cluster.ufs("/" + good)), good);
      s3.headBucket(r -> r.bucket(good));
    }
    assertS3Error("BucketAlreadyOwnedByYou", 409, () -> s3.createBucket(r -> r.bucket("abc")));
    // A location constraint of another region is refused; this proxy's is accepted.
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            s3.createBucket(
                r ->
                    r.bucket("elsewhere")
                        .createBucketConfiguration(
                            c -> c.locationConstraint(BucketLocationConstraint.EU_WEST_1))));
    assertFalse(cluster.fs().exists("/elsewhere"));
  }

  @Test
  void headBucketAnswers404ForAMissingBucket() throws Exception {
    NoSuchBucketException e =
        assertThrows(
            NoSuchBucketException.class, () -> s3.headBucket(r -> r.bucket("no-such-bucket")));
    assertEquals(404, e.statusCode());
    s3.createBucket(r -> r.bucket("head-me"));
    assertEquals("us-east-1", s3.headBucket(r -> r.bucket("head-me")).bucketRegion());
    assertS3Error("NoSuchBucket", 404, () -> s3.listObjectsV2(r -> r.bucket("no-such-bucket")));
    assertS3Error(
        "NoSuchBucket",
        404,
        () -> s3.getObject(r -> r.bucket("no-such-bucket").key("k"), (resp, in) -> null));
    assertS3Error(
        "NoSuchBucket",
        404,
        () -> s3.putObject(r -> r.bucket("no-such-bucket").key("k"), RequestBody.fromString("x")));
    assertS3Error("NoSuchBucket", 404, () -> s3.deleteBucket(r -> r.bucket("no-such-bucket")));
    assertFalse(Files.exists(cluster.ufs("/no-such-bucket")));
  }

  @Test
  void deleteBucketRefusesUntilEveryObjectIsDeletedThroughS3() throws Exception {
    String b = "to-delete";
    s3.createBucket(r -> r.bucket(b));
    List<String> keys =
        List.of("top", "a/one", "a/b/two", "a/b/c/three", "x/y/z/deep", "folder/", "folder/inside");
    for (String k : keys) {
      s3.putObject(r -> r.bucket(b).key(k), RequestBody.fromString(k.endsWith("/") ? "" : k));
    }
    // A replaced object and a completed multipart upload leave hidden staging folders.
    s3.putObject(r -> r.bucket(b).key("top"), RequestBody.fromString("top, replaced"));
    String id = s3.createMultipartUpload(r -> r.bucket(b).key("a/b/mpu")).uploadId();
    String etag =
        s3.uploadPart(
                r -> r.bucket(b).key("a/b/mpu").uploadId(id).partNumber(1),
                RequestBody.fromString("parts"))
            .eTag();
    s3.completeMultipartUpload(
        r ->
            r.bucket(b)
                .key("a/b/mpu")
                .uploadId(id)
                .multipartUpload(m -> m.parts(p -> p.partNumber(1).eTag(etag))));
    assertS3Error("BucketNotEmpty", 409, () -> s3.deleteBucket(r -> r.bucket(b)));
    assertEquals(
        List.of("a/b/c/three", "a/b/mpu", "a/b/two", "a/one", "folder/inside", "top", "x/y/z/deep"),
        S3ProxyTestCluster.ufsFiles(cluster.ufs("/" + b)));
    assertEquals("top, replaced", Files.readString(cluster.ufs("/" + b + "/top")));
    // One key deleted alone, the rest in one request; the bucket is still not empty until
    // the last one goes.
    s3.deleteObject(r -> r.bucket(b).key("a/b/c/three"));
    assertS3Error("BucketNotEmpty", 409, () -> s3.deleteBucket(r -> r.bucket(b)));
    List<ObjectIdentifier> rest = new ArrayList<>();
    for (String k : keys) {
      if (!k.equals("a/b/c/three") && !k.equals("folder/")) {
        rest.add(ObjectIdentifier.builder().key(k).build());
      }
    }
    rest.add(ObjectIdentifier.builder().key("a/b/mpu").build());
    s3.deleteObjects(r -> r.bucket(b).delete(d -> d.objects(rest)));
    // The folder marker is still an object.
    assertEquals(
        List.of("folder/"),
        s3.listObjectsV2(r -> r.bucket(b)).contents().stream().map(o -> o.key()).toList());
    assertS3Error("BucketNotEmpty", 409, () -> s3.deleteBucket(r -> r.bucket(b)));
    s3.deleteObject(r -> r.bucket(b).key("folder/"));
    assertEquals(0, s3.listObjectsV2(r -> r.bucket(b)).keyCount());
    s3.deleteBucket(r -> r.bucket(b));
    assertFalse(Files.exists(cluster.ufs("/" + b)), "nothing is left in the under store");
    assertFalse(cluster.fs().exists("/" + b));
    assertThrows(NoSuchBucketException.class, () -> s3.headBucket(r -> r.bucket(b)));
    assertFalse(s3.listBuckets().buckets().stream().anyMatch(x -> x.name().equals(b)));
  }

  @Test
  void getBucketLocationIsTheProxysRegion() {
    s3.createBucket(r -> r.bucket("located"));
    GetBucketLocationResponse r = s3.getBucketLocation(b -> b.bucket("located"));
    // us-east-1 is the empty constraint, as S3 answers it.
    String location = r.locationConstraintAsString();
    assertTrue(location == null || location.isEmpty(), location);
    assertS3Error("NoSuchBucket", 404, () -> s3.getBucketLocation(b -> b.bucket("nowhere")));
  }

  @Test
  void bucketFeaturesStrataDoesNotKeepAreNotImplemented() {
    s3.createBucket(r -> r.bucket("features"));
    assertS3Error("NotImplemented", 501, () -> s3.getBucketPolicy(r -> r.bucket("features")));
    assertS3Error(
        "NotImplemented",
        501,
        () ->
            s3.putBucketLifecycleConfiguration(
                r ->
                    r.bucket("features")
                        .lifecycleConfiguration(
                            c ->
                                c.rules(
                                    rule ->
                                        rule.id("x")
                                            .status("Enabled")
                                            .filter(f -> f.prefix(""))
                                            .expiration(e -> e.days(1))))));
    assertS3Error("NotImplemented", 501, () -> s3.getBucketCors(r -> r.bucket("features")));
    assertS3Error(
        "NotImplemented",
        501,
        () ->
            s3.putBucketVersioning(
                r -> r.bucket("features").versioningConfiguration(v -> v.status("Enabled"))));
    assertS3Error("NotImplemented", 501, () -> s3.getBucketTagging(r -> r.bucket("features")));
    // Versioning is reported as never enabled, which is what S3 says of such a bucket.
    assertEquals(null, s3.getBucketVersioning(r -> r.bucket("features")).status());
  }
}
