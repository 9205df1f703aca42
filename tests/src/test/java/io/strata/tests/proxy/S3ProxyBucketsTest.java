package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.proto.FileInfo;
import java.nio.file.Files;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.Bucket;
import software.amazon.awssdk.services.s3.model.BucketLocationConstraint;
import software.amazon.awssdk.services.s3.model.CORSRule;
import software.amazon.awssdk.services.s3.model.ChecksumAlgorithm;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetBucketLocationResponse;
import software.amazon.awssdk.services.s3.model.GetObjectAttributesParts;
import software.amazon.awssdk.services.s3.model.GetObjectAttributesResponse;
import software.amazon.awssdk.services.s3.model.ListBucketsResponse;
import software.amazon.awssdk.services.s3.model.NoSuchBucketException;
import software.amazon.awssdk.services.s3.model.ObjectAttributes;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.ObjectPart;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.StorageClass;
import software.amazon.awssdk.services.s3.model.Tag;

/** Bucket operations of the S3 proxy, with the AWS SDK, against the namespace they map to. */
class S3ProxyBucketsTest {
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
                                            .transitions(
                                                t -> t.days(1).storageClass("GLACIER"))))));
    assertS3Error("NotImplemented", 501, () -> s3.getBucketWebsite(r -> r.bucket("features")));
    assertS3Error(
        "NotImplemented",
        501,
        () ->
            s3.putBucketVersioning(
                r ->
                    r.bucket("features")
                        .versioningConfiguration(v -> v.status("Enabled").mfaDelete("Enabled"))));
    assertS3Error("NotImplemented", 501, () -> s3.getBucketEncryption(r -> r.bucket("features")));
    // MFA delete is refused, and versioning stays never enabled, which is what S3 says of such a
    // bucket.
    assertEquals(null, s3.getBucketVersioning(r -> r.bucket("features")).status());
  }

  @Test
  void bucketTagsAreKeptOnTheBucketsFolderWithS3sRules() throws Exception {
    String b = "tagged";
    s3.createBucket(r -> r.bucket(b));
    assertS3Error("NoSuchTagSet", 404, () -> s3.getBucketTagging(r -> r.bucket(b)));
    List<Tag> two =
        List.of(
            Tag.builder().key("team").value("data eng").build(),
            Tag.builder().key("empty").value("").build());
    s3.putBucketTagging(r -> r.bucket(b).tagging(t -> t.tagSet(two)));
    assertEquals(two, s3.getBucketTagging(r -> r.bucket(b)).tagSet());
    assertTrue(
        cluster.fs().getStatus("/" + b).getXattrsMap().containsKey("strata.s3.bucket-tagging"),
        "the tags are an extended attribute of the bucket's folder");
    // A bucket takes 50 tags, five times what an object takes.
    List<Tag> fifty = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      fifty.add(Tag.builder().key("k" + i).value("v" + i).build());
    }
    s3.putBucketTagging(r -> r.bucket(b).tagging(t -> t.tagSet(fifty)));
    assertEquals(fifty, s3.getBucketTagging(r -> r.bucket(b)).tagSet());
    List<Tag> fiftyOne = new ArrayList<>(fifty);
    fiftyOne.add(Tag.builder().key("one-more").value("v").build());
    List<List<Tag>> refused =
        List.of(
            fiftyOne,
            List.of(
                Tag.builder().key("same").value("1").build(),
                Tag.builder().key("same").value("2").build()),
            List.of(Tag.builder().key("k".repeat(129)).value("v").build()),
            List.of(Tag.builder().key("k").value("v".repeat(257)).build()));
    for (List<Tag> tags : refused) {
      assertS3Error(
          "InvalidTag",
          400,
          () -> s3.putBucketTagging(r -> r.bucket(b).tagging(t -> t.tagSet(tags))));
    }
    assertEquals(
        fifty, s3.getBucketTagging(r -> r.bucket(b)).tagSet(), "a refused set changes nothing");
    s3.deleteBucketTagging(r -> r.bucket(b));
    assertS3Error("NoSuchTagSet", 404, () -> s3.getBucketTagging(r -> r.bucket(b)));
    assertFalse(
        cluster.fs().getStatus("/" + b).getXattrsMap().containsKey("strata.s3.bucket-tagging"));
    assertS3Error(
        "NoSuchBucket", 404, () -> s3.getBucketTagging(r -> r.bucket("untagged-nowhere")));
    assertS3Error(
        "NoSuchBucket",
        404,
        () -> s3.putBucketTagging(r -> r.bucket("untagged-nowhere").tagging(t -> t.tagSet(two))));
  }

  @Test
  void getObjectAttributesAnswersWhatTheObjectsMetadataKeeps() throws Exception {
    String b = "attributes";
    s3.createBucket(r -> r.bucket(b));
    PutObjectResponse put =
        s3.putObject(
            r -> r.bucket(b).key("simple").checksumAlgorithm(ChecksumAlgorithm.SHA256),
            RequestBody.fromString("twelve bytes"));
    GetObjectAttributesResponse a =
        s3.getObjectAttributes(
            r ->
                r.bucket(b)
                    .key("simple")
                    .objectAttributes(
                        ObjectAttributes.E_TAG,
                        ObjectAttributes.CHECKSUM,
                        ObjectAttributes.OBJECT_PARTS,
                        ObjectAttributes.STORAGE_CLASS,
                        ObjectAttributes.OBJECT_SIZE));
    assertEquals(put.eTag().replace("\"", ""), a.eTag(), "the ETag, without its quotes");
    assertEquals(12L, a.objectSize());
    assertEquals(StorageClass.STANDARD, a.storageClass());
    assertEquals(put.checksumSHA256(), a.checksum().checksumSHA256());
    assertEquals(ChecksumType.FULL_OBJECT, a.checksum().checksumType());
    assertEquals(null, a.objectParts(), "an object of one PUT has no parts");
    assertEquals(s3.headObject(r -> r.bucket(b).key("simple")).lastModified(), a.lastModified());
    // Only what is asked for is answered.
    GetObjectAttributesResponse sizeOnly =
        s3.getObjectAttributes(
            r -> r.bucket(b).key("simple").objectAttributes(ObjectAttributes.OBJECT_SIZE));
    assertEquals(12L, sizeOnly.objectSize());
    assertEquals(null, sizeOnly.eTag());
    assertEquals(null, sizeOnly.checksum());
    // A name S3 does not define is InvalidArgument; none at all is InvalidRequest, as in S3.
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            s3.getObjectAttributes(
                r -> r.bucket(b).key("simple").objectAttributesWithStrings("ETag", "Size")));
    S3ProxyTestCluster.Response none =
        cluster.signed(
            "GET",
            "/" + b + "/simple?attributes",
            Map.of(),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(400, none.status(), none::text);
    assertEquals("InvalidRequest", none.errorCode());
    assertS3Error(
        "NoSuchKey",
        404,
        () ->
            s3.getObjectAttributes(
                r -> r.bucket(b).key("missing").objectAttributes(ObjectAttributes.E_TAG)));
  }

  @Test
  void getObjectAttributesPagesTheLengthsOfAMultipartObjectsParts() throws Exception {
    String b = "attributes-mpu";
    s3.createBucket(r -> r.bucket(b));
    String key = "three-parts";
    String id = s3.createMultipartUpload(r -> r.bucket(b).key(key)).uploadId();
    int[] lengths = {5 << 20, 5 << 20, 1024};
    List<CompletedPart> parts = new ArrayList<>();
    for (int i = 0; i < lengths.length; i++) {
      int number = i + 1;
      String etag =
          s3.uploadPart(
                  r -> r.bucket(b).key(key).uploadId(id).partNumber(number),
                  RequestBody.fromBytes(S3ProxyTestCluster.random(lengths[number - 1], number)))
              .eTag();
      parts.add(CompletedPart.builder().partNumber(number).eTag(etag).build());
    }
    s3.completeMultipartUpload(
        r -> r.bucket(b).key(key).uploadId(id).multipartUpload(m -> m.parts(parts)));
    GetObjectAttributesResponse first =
        s3.getObjectAttributes(
            r ->
                r.bucket(b)
                    .key(key)
                    .maxParts(2)
                    .objectAttributes(
                        ObjectAttributes.E_TAG,
                        ObjectAttributes.OBJECT_PARTS,
                        ObjectAttributes.OBJECT_SIZE));
    assertTrue(first.eTag().endsWith("-3"), first::eTag);
    assertEquals((10L << 20) + 1024, first.objectSize());
    GetObjectAttributesParts page = first.objectParts();
    assertEquals(3, page.totalPartsCount());
    assertEquals(2, page.maxParts());
    assertTrue(page.isTruncated());
    assertEquals(2, page.nextPartNumberMarker());
    assertEquals(List.of(1, 2), page.parts().stream().map(ObjectPart::partNumber).toList());
    assertEquals(List.of(5L << 20, 5L << 20), page.parts().stream().map(ObjectPart::size).toList());
    GetObjectAttributesParts rest =
        s3.getObjectAttributes(
                r ->
                    r.bucket(b)
                        .key(key)
                        .partNumberMarker(2)
                        .objectAttributes(ObjectAttributes.OBJECT_PARTS))
            .objectParts();
    assertEquals(3, rest.totalPartsCount());
    assertEquals(false, rest.isTruncated());
    assertEquals(2, rest.partNumberMarker());
    assertEquals(List.of(3), rest.parts().stream().map(ObjectPart::partNumber).toList());
    assertEquals(List.of(1024L), rest.parts().stream().map(ObjectPart::size).toList());
  }

  private static final String APP = "https://app.example.com";

  private S3ProxyTestCluster.Response preflight(String path, Map<String, String> headers)
      throws Exception {
    return cluster.send("OPTIONS", cluster.endpoint.resolve(path), headers, (byte[]) null);
  }

  @Test
  void corsRulesAnswerPreflightsAndActualRequests() throws Exception {
    String b = "cors";
    s3.createBucket(r -> r.bucket(b));
    s3.putObject(r -> r.bucket(b).key("page.html"), RequestBody.fromString("<p>hi</p>"));
    Map<String, String> uploadPreflight =
        Map.of(
            "Origin", APP,
            "Access-Control-Request-Method", "PUT",
            "Access-Control-Request-Headers", "Content-Type, X-Amz-Date");
    // No configuration: every preflight is refused, and GetBucketCors says there is none.
    assertS3Error("NoSuchCORSConfiguration", 404, () -> s3.getBucketCors(r -> r.bucket(b)));
    S3ProxyTestCluster.Response unconfigured = preflight("/" + b + "/page.html", uploadPreflight);
    assertEquals(403, unconfigured.status(), unconfigured::text);
    assertEquals("AccessForbidden", unconfigured.errorCode());
    assertTrue(unconfigured.text().contains("CORSResponse"), unconfigured::text);

    List<CORSRule> rules =
        List.of(
            CORSRule.builder()
                .id("uploads")
                .allowedOrigins("https://*.example.com")
                .allowedMethods("PUT", "GET")
                .allowedHeaders("content-type", "x-amz-*")
                .exposeHeaders("ETag")
                .maxAgeSeconds(3000)
                .build(),
            CORSRule.builder().allowedOrigins("*").allowedMethods("HEAD").build());
    s3.putBucketCors(r -> r.bucket(b).corsConfiguration(c -> c.corsRules(rules)));
    assertEquals(rules, s3.getBucketCors(r -> r.bucket(b)).corsRules());
    assertTrue(cluster.fs().getStatus("/" + b).getXattrsMap().containsKey("strata.s3.cors"));

    S3ProxyTestCluster.Response allowed = preflight("/" + b + "/page.html", uploadPreflight);
    assertEquals(200, allowed.status(), allowed::text);
    assertEquals(APP, allowed.header("Access-Control-Allow-Origin"));
    assertEquals("PUT, GET", allowed.header("Access-Control-Allow-Methods"));
    assertEquals("content-type, x-amz-date", allowed.header("Access-Control-Allow-Headers"));
    assertEquals("ETag", allowed.header("Access-Control-Expose-Headers"));
    assertEquals("3000", allowed.header("Access-Control-Max-Age"));
    assertEquals(
        "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
        allowed.header("Vary"));
    // The second rule allows any origin, for HEAD only.
    S3ProxyTestCluster.Response anyOrigin =
        preflight(
            "/" + b + "/page.html",
            Map.of("Origin", "http://other.test", "Access-Control-Request-Method", "HEAD"));
    assertEquals(200, anyOrigin.status(), anyOrigin::text);
    assertEquals("*", anyOrigin.header("Access-Control-Allow-Origin"));

    for (Map<String, String> disallowed :
        List.of(
            Map.of("Origin", "https://evil.test", "Access-Control-Request-Method", "PUT"),
            Map.of("Origin", APP, "Access-Control-Request-Method", "DELETE"),
            Map.of(
                "Origin", APP,
                "Access-Control-Request-Method", "PUT",
                "Access-Control-Request-Headers", "authorization"))) {
      S3ProxyTestCluster.Response refused = preflight("/" + b + "/page.html", disallowed);
      assertEquals(403, refused.status(), disallowed::toString);
      assertEquals("AccessForbidden", refused.errorCode(), disallowed::toString);
      assertEquals(null, refused.header("Access-Control-Allow-Origin"));
    }
    S3ProxyTestCluster.Response noOrigin =
        preflight("/" + b + "/page.html", Map.of("Access-Control-Request-Method", "PUT"));
    assertEquals(400, noOrigin.status(), noOrigin::text);
    assertEquals("BadRequest", noOrigin.errorCode());
    S3ProxyTestCluster.Response noMethod = preflight("/" + b + "/page.html", Map.of("Origin", APP));
    assertEquals(400, noMethod.status(), noMethod::text);

    // An actual request with Origin carries the headers of the first rule that allows it.
    S3ProxyTestCluster.Response get =
        cluster.signed(
            "GET",
            "/" + b + "/page.html",
            Map.of("Origin", APP),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(200, get.status(), get::text);
    assertEquals("<p>hi</p>", get.text());
    assertEquals(APP, get.header("Access-Control-Allow-Origin"));
    assertEquals("ETag", get.header("Access-Control-Expose-Headers"));
    S3ProxyTestCluster.Response foreign =
        cluster.signed(
            "GET",
            "/" + b + "/page.html",
            Map.of("Origin", "https://evil.test"),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(200, foreign.status(), foreign::text);
    assertEquals(null, foreign.header("Access-Control-Allow-Origin"));

    // S3's rules for the document.
    assertS3Error(
        "InvalidRequest",
        400,
        () ->
            s3.putBucketCors(
                r ->
                    r.bucket(b)
                        .corsConfiguration(
                            c -> c.corsRules(x -> x.allowedOrigins("*").allowedMethods("PATCH")))));
    assertS3Error(
        "InvalidRequest",
        400,
        () ->
            s3.putBucketCors(
                r ->
                    r.bucket(b)
                        .corsConfiguration(
                            c ->
                                c.corsRules(
                                    x ->
                                        x.allowedOrigins("https://*.*.test")
                                            .allowedMethods("GET")))));
    assertEquals(
        rules, s3.getBucketCors(r -> r.bucket(b)).corsRules(), "a refused one changes nothing");

    s3.deleteBucketCors(r -> r.bucket(b));
    assertS3Error("NoSuchCORSConfiguration", 404, () -> s3.getBucketCors(r -> r.bucket(b)));
    assertEquals(403, preflight("/" + b + "/page.html", uploadPreflight).status());
  }
}
