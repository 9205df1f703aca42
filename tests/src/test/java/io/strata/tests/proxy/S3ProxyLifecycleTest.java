package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CreateOptions;
import io.strata.client.FileOutStream;
import io.strata.proto.FileInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.BucketLifecycleConfiguration;
import software.amazon.awssdk.services.s3.model.BucketVersioningStatus;
import software.amazon.awssdk.services.s3.model.ExpirationStatus;
import software.amazon.awssdk.services.s3.model.GetBucketLifecycleConfigurationResponse;
import software.amazon.awssdk.services.s3.model.LifecycleRule;
import software.amazon.awssdk.services.s3.model.ListObjectVersionsResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;
import software.amazon.awssdk.services.s3.model.Tag;
import software.amazon.awssdk.services.s3.model.TransitionStorageClass;

/**
 * Bucket lifecycle configurations through the S3 proxy with the AWS SDK, against the shared cluster
 * whose lifecycle day lasts {@link S3ProxyTestCluster#LIFECYCLE_DAY} and whose master acts on times
 * to live every second: objects a rule selects (by prefix, by tag) are gone from the bucket and the
 * under store once their days passed, also those written through the namespace rather than the
 * proxy; noncurrent versions expire and a lone delete marker goes; a versioned bucket's expired
 * current version stays as a noncurrent one behind a delete marker; incomplete uploads are aborted.
 */
class S3ProxyLifecycleTest {
  /** Long enough for a few days, a sweep and a TTL round on a loaded machine. */
  private static final Duration PATIENCE = Duration.ofSeconds(60);

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

  /** Waits, bounded by {@link #PATIENCE}, until {@code done} holds; fails naming {@code what}. */
  private static void eventually(String what, Callable<Boolean> done) throws Exception {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!done.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("Not within " + PATIENCE + ": " + what);
      }
      Thread.sleep(200);
    }
  }

  private static void put(String bucket, String key) {
    s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString("bytes of " + key));
  }

  private static List<String> keys(String bucket) {
    List<String> out = new ArrayList<>();
    for (S3Object o : s3.listObjectsV2Paginator(b -> b.bucket(bucket)).contents()) {
      out.add(o.key());
    }
    return out;
  }

  private static void rules(String bucket, LifecycleRule... rules) {
    s3.putBucketLifecycleConfiguration(
        b ->
            b.bucket(bucket)
                .lifecycleConfiguration(
                    BucketLifecycleConfiguration.builder().rules(rules).build()));
  }

  private static LifecycleRule expireAfterADay(String id, String prefix) {
    return LifecycleRule.builder()
        .id(id)
        .status(ExpirationStatus.ENABLED)
        .filter(f -> f.prefix(prefix))
        .expiration(e -> e.days(1))
        .build();
  }

  @Test
  void aConfigurationIsPutReadBackAndRemoved() throws Exception {
    s3.createBucket(b -> b.bucket("lc-config"));
    assertS3Error(
        "NoSuchLifecycleConfiguration",
        404,
        () -> s3.getBucketLifecycleConfiguration(b -> b.bucket("lc-config")));
    LifecycleRule tagged =
        LifecycleRule.builder()
            .status(ExpirationStatus.ENABLED)
            .filter(
                f ->
                    f.and(
                        a ->
                            a.prefix("tmp/")
                                .tags(Tag.builder().key("kind").value("scratch").build())
                                .objectSizeGreaterThan(0L)))
            .expiration(e -> e.date(Instant.parse("2099-01-01T00:00:00Z")))
            .build();
    LifecycleRule versions =
        LifecycleRule.builder()
            .id("versions")
            .status(ExpirationStatus.DISABLED)
            .filter(f -> f.prefix(""))
            .noncurrentVersionExpiration(n -> n.noncurrentDays(30).newerNoncurrentVersions(3))
            .abortIncompleteMultipartUpload(a -> a.daysAfterInitiation(7))
            .build();
    rules("lc-config", tagged, versions);
    GetBucketLifecycleConfigurationResponse got =
        s3.getBucketLifecycleConfiguration(b -> b.bucket("lc-config"));
    assertEquals(2, got.rules().size());
    LifecycleRule first = got.rules().get(0);
    // A rule put without an ID gets one, as in S3.
    assertNotNull(first.id());
    assertFalse(first.id().isEmpty());
    assertEquals("tmp/", first.filter().and().prefix());
    assertEquals("scratch", first.filter().and().tags().get(0).value());
    assertEquals(Instant.parse("2099-01-01T00:00:00Z"), first.expiration().date());
    LifecycleRule second = got.rules().get(1);
    assertEquals(ExpirationStatus.DISABLED, second.status());
    assertEquals(30, second.noncurrentVersionExpiration().noncurrentDays());
    assertEquals(3, second.noncurrentVersionExpiration().newerNoncurrentVersions());
    assertEquals(7, second.abortIncompleteMultipartUpload().daysAfterInitiation());

    S3Exception transition =
        assertS3Error(
            "NotImplemented",
            501,
            () ->
                rules(
                    "lc-config",
                    LifecycleRule.builder()
                        .id("cold")
                        .status(ExpirationStatus.ENABLED)
                        .filter(f -> f.prefix(""))
                        .transitions(t -> t.days(30).storageClass(TransitionStorageClass.GLACIER))
                        .build()));
    assertTrue(transition.getMessage().contains("one storage class"), transition.getMessage());
    assertS3Error(
        "InvalidArgument",
        400,
        () ->
            rules(
                "lc-config",
                LifecycleRule.builder()
                    .id("noon")
                    .status(ExpirationStatus.ENABLED)
                    .filter(f -> f.prefix(""))
                    .expiration(e -> e.date(Instant.parse("2099-01-01T12:00:00Z")))
                    .build()));
    // A refused configuration left the one in place.
    assertEquals(2, s3.getBucketLifecycleConfiguration(b -> b.bucket("lc-config")).rules().size());
    assertS3Error(
        "AccessDenied",
        403,
        () -> {
          try (S3Client bob =
              cluster.client(
                  S3ProxyTestCluster.BOB_KEY, S3ProxyTestCluster.BOB_SECRET, false, false)) {
            bob.deleteBucketLifecycle(b -> b.bucket("lc-config"));
          }
        });

    // An object the date rule selects is told when it expires; removing the rules removes that.
    s3.putObject(
        b -> b.bucket("lc-config").key("tmp/a").tagging("kind=scratch"),
        RequestBody.fromString("scratch"));
    String expiration = s3.headObject(b -> b.bucket("lc-config").key("tmp/a")).expiration();
    assertNotNull(expiration);
    assertTrue(expiration.contains("expiry-date=\"Thu, 01 Jan 2099 00:00:00 GMT\""), expiration);
    assertTrue(expiration.contains("rule-id=\"" + first.id() + "\""), expiration);
    s3.deleteBucketLifecycle(b -> b.bucket("lc-config"));
    assertS3Error(
        "NoSuchLifecycleConfiguration",
        404,
        () -> s3.getBucketLifecycleConfiguration(b -> b.bucket("lc-config")));
    eventually(
        "the removed rule's time to live is removed from tmp/a",
        () -> cluster.fs().getStatus("/lc-config/tmp/a").getTtlMs() == 0);
    assertNull(s3.headObject(b -> b.bucket("lc-config").key("tmp/a")).expiration());
  }

  @Test
  void objectsExpireByPrefixAndTagAlsoWhenWrittenOutsideTheProxy() throws Exception {
    String bucket = "lc-expire";
    s3.createBucket(b -> b.bucket(bucket));
    // Written before the rules exist: the sweep after the put gives it its time to live.
    put(bucket, "logs/before");
    rules(
        bucket,
        expireAfterADay("logs", "logs/"),
        LifecycleRule.builder()
            .id("scratch")
            .status(ExpirationStatus.ENABLED)
            .filter(
                f ->
                    f.and(
                        a ->
                            a.prefix("tmp/")
                                .tags(Tag.builder().key("kind").value("scratch").build())))
            .expiration(e -> e.days(1))
            .build());
    put(bucket, "logs/a");
    String expiration = s3.headObject(b -> b.bucket(bucket).key("logs/a")).expiration();
    assertNotNull(expiration, "HEAD of an object a rule expires says when");
    assertTrue(expiration.contains("rule-id=\"logs\""), expiration);
    put(bucket, "logs/2026/11/b");
    put(bucket, "keep/x");
    s3.putObject(
        b -> b.bucket(bucket).key("tmp/t").tagging("kind=scratch"), RequestBody.fromString("t"));
    put(bucket, "tmp/u");
    // Written through the namespace, as the mount or the shell write: the sweep finds it.
    FileOutStream out =
        cluster.fs().createFile("/" + bucket + "/logs/from-mount", CreateOptions.defaults());
    out.write("from the mount".getBytes(StandardCharsets.UTF_8));
    out.close();

    eventually(
        "only keep/x and tmp/u are left", () -> keys(bucket).equals(List.of("keep/x", "tmp/u")));
    // Gone from the under store too, and the folders expiry emptied are gone from listings.
    eventually(
        "the expired objects leave the under store",
        () ->
            !Files.exists(cluster.ufs("/" + bucket + "/logs/a"))
                && !Files.exists(cluster.ufs("/" + bucket + "/logs/2026/11/b")));
    eventually(
        "the folders expiry emptied are removed",
        () ->
            s3.listObjectsV2(b -> b.bucket(bucket).prefix("logs/")).contents().isEmpty()
                && cluster.namespaceKeys("/" + bucket).equals(List.of("keep/x", "tmp/u")));
    assertEquals(
        "bytes of keep/x", s3.getObjectAsBytes(b -> b.bucket(bucket).key("keep/x")).asUtf8String());
  }

  @Test
  void noncurrentVersionsExpireAndThenTheLoneDeleteMarkerGoes() throws Exception {
    String bucket = "lc-versions";
    s3.createBucket(b -> b.bucket(bucket));
    s3.putBucketVersioning(
        b ->
            b.bucket(bucket)
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.ENABLED)));
    rules(
        bucket,
        LifecycleRule.builder()
            .id("old-versions")
            .status(ExpirationStatus.ENABLED)
            .filter(f -> f.prefix(""))
            .noncurrentVersionExpiration(n -> n.noncurrentDays(1))
            .expiration(e -> e.expiredObjectDeleteMarker(true))
            .build());
    String v1 =
        s3.putObject(b -> b.bucket(bucket).key("k"), RequestBody.fromString("one")).versionId();
    String v2 =
        s3.putObject(b -> b.bucket(bucket).key("k"), RequestBody.fromString("two")).versionId();
    assertEquals(2, s3.listObjectVersions(b -> b.bucket(bucket)).versions().size());
    eventually(
        "the noncurrent version " + v1 + " expires",
        () -> {
          ListObjectVersionsResponse r = s3.listObjectVersions(b -> b.bucket(bucket));
          return r.versions().size() == 1 && r.versions().get(0).versionId().equals(v2);
        });
    assertEquals("two", s3.getObjectAsBytes(b -> b.bucket(bucket).key("k")).asUtf8String());

    s3.deleteObject(b -> b.bucket(bucket).key("k"));
    eventually(
        "the version behind the delete marker expires, then the lone marker goes",
        () -> {
          ListObjectVersionsResponse r = s3.listObjectVersions(b -> b.bucket(bucket));
          return r.versions().isEmpty() && r.deleteMarkers().isEmpty();
        });
  }

  @Test
  void anExpiredCurrentVersionOfAVersionedBucketStaysBehindADeleteMarker() throws Exception {
    String bucket = "lc-current";
    s3.createBucket(b -> b.bucket(bucket));
    s3.putBucketVersioning(
        b ->
            b.bucket(bucket)
                .versioningConfiguration(v -> v.status(BucketVersioningStatus.ENABLED)));
    rules(bucket, expireAfterADay("all", ""));
    String v1 =
        s3.putObject(b -> b.bucket(bucket).key("c"), RequestBody.fromString("current")).versionId();
    // The version moves aside, then the marker is written: a listing between sees neither.
    eventually(
        "the current version expires behind a delete marker",
        () ->
            keys(bucket).isEmpty()
                && !s3.listObjectVersions(b -> b.bucket(bucket)).deleteMarkers().isEmpty());
    ListObjectVersionsResponse r = s3.listObjectVersions(b -> b.bucket(bucket));
    assertEquals(1, r.deleteMarkers().size());
    assertTrue(r.deleteMarkers().get(0).isLatest());
    assertEquals(1, r.versions().size());
    assertEquals(v1, r.versions().get(0).versionId());
    assertEquals(
        "current",
        s3.getObjectAsBytes(b -> b.bucket(bucket).key("c").versionId(v1)).asUtf8String());
  }

  @Test
  void incompleteMultipartUploadsAreAborted() throws Exception {
    String bucket = "lc-uploads";
    s3.createBucket(b -> b.bucket(bucket));
    rules(
        bucket,
        LifecycleRule.builder()
            .id("abort")
            .status(ExpirationStatus.ENABLED)
            .filter(f -> f.prefix("big/"))
            .abortIncompleteMultipartUpload(a -> a.daysAfterInitiation(1))
            .build());
    String id = s3.createMultipartUpload(b -> b.bucket(bucket).key("big/one")).uploadId();
    String kept = s3.createMultipartUpload(b -> b.bucket(bucket).key("small/one")).uploadId();
    s3.uploadPart(
        b -> b.bucket(bucket).key("big/one").uploadId(id).partNumber(1),
        RequestBody.fromString("part"));
    eventually(
        "the upload of big/one is aborted",
        () ->
            s3.listMultipartUploads(b -> b.bucket(bucket)).uploads().stream()
                .noneMatch(u -> u.uploadId().equals(id)));
    assertS3Error(
        "NoSuchUpload",
        404,
        () ->
            s3.uploadPart(
                b -> b.bucket(bucket).key("big/one").uploadId(id).partNumber(2),
                RequestBody.fromString("late")));
    // The rule selects big/ only.
    assertTrue(
        s3.listMultipartUploads(b -> b.bucket(bucket)).uploads().stream()
            .anyMatch(u -> u.uploadId().equals(kept)));
    FileInfo uploads = cluster.fs().getStatus("/" + bucket + "/.strata-uploads/" + kept);
    assertEquals(0, uploads.getTtlMs());
  }
}
