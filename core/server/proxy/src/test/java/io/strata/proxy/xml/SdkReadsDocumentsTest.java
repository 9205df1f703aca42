package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import io.strata.proxy.checksum.ChecksumValue;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.model.BucketLocationConstraint;
import software.amazon.awssdk.services.s3.model.CompleteMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.CopyObjectResponse;
import software.amazon.awssdk.services.s3.model.CreateMultipartUploadResponse;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListBucketsResponse;
import software.amazon.awssdk.services.s3.model.ListMultipartUploadsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ListPartsResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.UploadPartCopyResponse;

/**
 * Every response document read by the AWS SDK v2 S3 client, as an application would see it: proof
 * that a real client finds every field where it looks.
 */
class SdkReadsDocumentsTest {
  static final Instant T = Instant.parse("2009-10-12T17:50:30.123Z");
  static final Owner OWNER = new Owner("owner-id", "strata");
  static final String ODD_KEY = "dir with space/a+b&c<d>\"e\"%\u00e9\u0001\r\n";

  @Test
  void readsListBuckets() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.listAllMyBuckets(
                    new BucketListing(
                        OWNER, List.of(new BucketListing.Bucket("alpha", T, "eu-west-1")))));
    ListBucketsResponse r = sdk.client.listBuckets();
    assertEquals("owner-id", r.owner().id());
    assertEquals("strata", r.owner().displayName());
    assertEquals("alpha", r.buckets().get(0).name());
    assertEquals(T, r.buckets().get(0).creationDate());
    assertEquals("eu-west-1", r.buckets().get(0).bucketRegion());
  }

  @Test
  void readsAUrlEncodedListObjectsV1WithAnyKey() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.listObjects(
                    new ObjectListingV1(
                        "b",
                        "dir with space/",
                        "dir with space/0 a",
                        "dir with space/zz",
                        2,
                        "/",
                        true,
                        true,
                        List.of(
                            new ObjectEntry(
                                ODD_KEY,
                                T,
                                "9b2cf535f27731c974343645a3985328",
                                42,
                                "STANDARD",
                                OWNER,
                                ChecksumAlgorithm.CRC32C,
                                ChecksumType.FULL_OBJECT)),
                        List.of("dir with space/sub+dir/"))));
    ListObjectsResponse r = sdk.client.listObjects(q -> q.bucket("b").encodingType("url"));
    assertEquals("b", r.name());
    assertEquals("dir with space/", r.prefix());
    assertEquals("dir with space/0 a", r.marker());
    assertEquals("dir with space/zz", r.nextMarker());
    assertEquals(2, r.maxKeys());
    assertEquals("/", r.delimiter());
    assertTrue(r.isTruncated());
    assertEquals("url", r.encodingTypeAsString());
    var o = r.contents().get(0);
    assertEquals(ODD_KEY, o.key());
    assertEquals(T, o.lastModified());
    assertEquals("\"9b2cf535f27731c974343645a3985328\"", o.eTag());
    assertEquals(42L, o.size());
    assertEquals("STANDARD", o.storageClassAsString());
    assertEquals("owner-id", o.owner().id());
    assertEquals(List.of("CRC32C"), o.checksumAlgorithmAsStrings());
    assertEquals("FULL_OBJECT", o.checksumTypeAsString());
    assertEquals("dir with space/sub+dir/", r.commonPrefixes().get(0).prefix());
  }

  @Test
  void readsListObjectsV2() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.listObjectsV2(
                    new ObjectListingV2(
                        "b",
                        "p/",
                        "p/0",
                        "token-1",
                        "token-2",
                        1,
                        "/",
                        true,
                        false,
                        true,
                        List.of(new ObjectEntry("p/a&b", T, "e", 7, "STANDARD", OWNER, null, null)),
                        List.of("p/d/"))));
    ListObjectsV2Response r = sdk.client.listObjectsV2(q -> q.bucket("b"));
    assertEquals("b", r.name());
    assertEquals("p/", r.prefix());
    assertEquals("p/0", r.startAfter());
    assertEquals("token-1", r.continuationToken());
    assertEquals("token-2", r.nextContinuationToken());
    assertEquals(2, r.keyCount());
    assertEquals(1, r.maxKeys());
    assertEquals("/", r.delimiter());
    assertTrue(r.isTruncated());
    assertEquals("p/a&b", r.contents().get(0).key());
    assertEquals("\"e\"", r.contents().get(0).eTag());
    assertEquals("strata", r.contents().get(0).owner().displayName());
    assertEquals("p/d/", r.commonPrefixes().get(0).prefix());
  }

  @Test
  void readsCopyResults() {
    ChecksumValue crc =
        new ChecksumValue(ChecksumAlgorithm.CRC64NVME, "r/7LBH/0eeA=", ChecksumType.FULL_OBJECT);
    SdkStub sdk =
        new SdkStub().answer(200, S3XmlWriter.copyObjectResult(new CopyResult("abc", T, crc)));
    CopyObjectResponse o =
        sdk.client.copyObject(
            q -> q.sourceBucket("b").sourceKey("s").destinationBucket("b").destinationKey("d"));
    assertEquals("\"abc\"", o.copyObjectResult().eTag());
    assertEquals(T, o.copyObjectResult().lastModified());
    assertEquals("r/7LBH/0eeA=", o.copyObjectResult().checksumCRC64NVME());
    assertEquals("FULL_OBJECT", o.copyObjectResult().checksumTypeAsString());

    sdk.answer(
        200,
        S3XmlWriter.copyPartResult(
            new CopyResult(
                "def",
                T,
                new ChecksumValue(
                    ChecksumAlgorithm.SHA1,
                    "+PvrrDgXZR6qjUWArKXJ3ePWB7Q=",
                    ChecksumType.FULL_OBJECT))));
    UploadPartCopyResponse p =
        sdk.client.uploadPartCopy(
            q ->
                q.sourceBucket("b")
                    .sourceKey("s")
                    .destinationBucket("b")
                    .destinationKey("d")
                    .uploadId("u")
                    .partNumber(1));
    assertEquals("\"def\"", p.copyPartResult().eTag());
    assertEquals(T, p.copyPartResult().lastModified());
    assertEquals("+PvrrDgXZR6qjUWArKXJ3ePWB7Q=", p.copyPartResult().checksumSHA1());
  }

  @Test
  void readsCreateAndCompleteMultipartUpload() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.initiateMultipartUploadResult(
                    new InitiatedUpload("b", "k&<>", "upload-1")));
    CreateMultipartUploadResponse c =
        sdk.client.createMultipartUpload(q -> q.bucket("b").key("k&<>"));
    assertEquals("b", c.bucket());
    assertEquals("k&<>", c.key());
    assertEquals("upload-1", c.uploadId());

    sdk.answer(
        200,
        S3XmlWriter.completeMultipartUploadResult(
            new CompletedUpload(
                "http://localhost/b/k",
                "b",
                "k",
                "3858f62230ac3c915f300c664312c11f-9",
                new ChecksumValue(
                    ChecksumAlgorithm.SHA256,
                    "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3",
                    ChecksumType.COMPOSITE))));
    CompleteMultipartUploadResponse d =
        sdk.client.completeMultipartUpload(q -> q.bucket("b").key("k").uploadId("upload-1"));
    assertEquals("http://localhost/b/k", d.location());
    assertEquals("b", d.bucket());
    assertEquals("k", d.key());
    assertEquals("\"3858f62230ac3c915f300c664312c11f-9\"", d.eTag());
    assertEquals("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", d.checksumSHA256());
    assertEquals("COMPOSITE", d.checksumTypeAsString());
  }

  @Test
  void readsListParts() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.listPartsResult(
                    new PartListing(
                        "b",
                        "k",
                        "u",
                        0,
                        1,
                        1,
                        true,
                        new Owner("init", null),
                        OWNER,
                        "STANDARD",
                        ChecksumAlgorithm.CRC32,
                        ChecksumType.COMPOSITE,
                        List.of(
                            new PartListing.Part(
                                1,
                                T,
                                "e1",
                                5242880,
                                new ChecksumValue(
                                    ChecksumAlgorithm.CRC32,
                                    "+SDIDA==",
                                    ChecksumType.FULL_OBJECT))))));
    ListPartsResponse r = sdk.client.listParts(q -> q.bucket("b").key("k").uploadId("u"));
    assertEquals("b", r.bucket());
    assertEquals("k", r.key());
    assertEquals("u", r.uploadId());
    assertEquals("0", r.partNumberMarker().toString());
    assertEquals(1, r.nextPartNumberMarker());
    assertEquals(1, r.maxParts());
    assertTrue(r.isTruncated());
    assertEquals("init", r.initiator().id());
    assertNull(r.initiator().displayName());
    assertEquals("owner-id", r.owner().id());
    assertEquals("STANDARD", r.storageClassAsString());
    assertEquals("CRC32", r.checksumAlgorithmAsString());
    assertEquals("COMPOSITE", r.checksumTypeAsString());
    var p = r.parts().get(0);
    assertEquals(1, p.partNumber());
    assertEquals(T, p.lastModified());
    assertEquals("\"e1\"", p.eTag());
    assertEquals(5242880L, p.size());
    assertEquals("+SDIDA==", p.checksumCRC32());
  }

  @Test
  void readsAUrlEncodedListMultipartUploads() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.listMultipartUploadsResult(
                    new UploadListing(
                        "b",
                        "a b",
                        "m",
                        "a b/next",
                        "n",
                        "a ",
                        "/",
                        1,
                        true,
                        true,
                        List.of(
                            new UploadListing.Upload(
                                ODD_KEY,
                                "u1",
                                new Owner("init", null),
                                OWNER,
                                "STANDARD",
                                T,
                                ChecksumAlgorithm.CRC64NVME,
                                ChecksumType.FULL_OBJECT)),
                        List.of("a c/"))));
    ListMultipartUploadsResponse r =
        sdk.client.listMultipartUploads(q -> q.bucket("b").encodingType("url"));
    assertEquals("b", r.bucket());
    assertEquals("a b", r.keyMarker());
    assertEquals("m", r.uploadIdMarker());
    assertEquals("a b/next", r.nextKeyMarker());
    assertEquals("n", r.nextUploadIdMarker());
    assertEquals("a ", r.prefix());
    assertEquals("/", r.delimiter());
    assertEquals(1, r.maxUploads());
    assertTrue(r.isTruncated());
    assertEquals("url", r.encodingTypeAsString());
    var u = r.uploads().get(0);
    assertEquals(ODD_KEY, u.key());
    assertEquals("u1", u.uploadId());
    assertEquals("init", u.initiator().id());
    assertEquals("strata", u.owner().displayName());
    assertEquals("STANDARD", u.storageClassAsString());
    assertEquals(T, u.initiated());
    assertEquals("CRC64NVME", u.checksumAlgorithmAsString());
    assertEquals("FULL_OBJECT", u.checksumTypeAsString());
    assertEquals("a c/", r.commonPrefixes().get(0).prefix());
  }

  @Test
  void readsDeleteResults() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.deleteResult(
                    new DeleteResult(
                        false,
                        List.of(new DeleteResult.Deleted("gone&", "v1")),
                        List.of(
                            new DeleteResult.Failure(
                                "kept<", null, "AccessDenied", "Access Denied")))));
    DeleteObjectsResponse r =
        sdk.client.deleteObjects(
            q -> q.bucket("b").delete(d -> d.objects(o -> o.key("gone&"), o -> o.key("kept<"))));
    assertEquals("gone&", r.deleted().get(0).key());
    assertEquals("v1", r.deleted().get(0).versionId());
    assertEquals("kept<", r.errors().get(0).key());
    assertEquals("AccessDenied", r.errors().get(0).code());
    assertEquals("Access Denied", r.errors().get(0).message());
  }

  @Test
  void readsTaggingAndLocation() {
    SdkStub sdk =
        new SdkStub().answer(200, S3XmlWriter.tagging(TagSet.fromHeader("team=data%20eng&empty=")));
    var tags = sdk.client.getObjectTagging(q -> q.bucket("b").key("k")).tagSet();
    assertEquals(
        Map.of("team", "data eng", "empty", ""),
        Map.of(tags.get(0).key(), tags.get(0).value(), tags.get(1).key(), tags.get(1).value()));

    sdk.answer(200, S3XmlWriter.locationConstraint("us-east-1"));
    // As for S3's own answer for us-east-1: no region string.
    String usEast1 = sdk.client.getBucketLocation(q -> q.bucket("b")).locationConstraintAsString();
    assertTrue(usEast1 == null || usEast1.isEmpty(), usEast1);
    sdk.answer(200, S3XmlWriter.locationConstraint("eu-west-1"));
    assertEquals(
        BucketLocationConstraint.EU_WEST_1,
        sdk.client.getBucketLocation(q -> q.bucket("b")).locationConstraint());
  }

  @Test
  void readsErrorsAsTheirExceptions() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                404,
                S3XmlWriter.error(
                    ErrorResponse.of(
                            new io.strata.proxy.s3.S3Exception(
                                io.strata.proxy.s3.S3ErrorCode.NO_SUCH_KEY),
                            "/b/k",
                            "REQ123")
                        .with("Key", "k")));
    NoSuchKeyException e =
        assertThrows(
            NoSuchKeyException.class, () -> sdk.client.getObjectAcl(q -> q.bucket("b").key("k")));
    assertEquals("NoSuchKey", e.awsErrorDetails().errorCode());
    assertEquals("The specified key does not exist.", e.awsErrorDetails().errorMessage());
    assertEquals(404, e.statusCode());

    sdk.answer(
        400,
        S3XmlWriter.error(
            new ErrorResponse(
                "InvalidTag",
                "The TagKey you have " + "provided is invalid",
                null,
                "REQ9",
                "HOST9",
                null)));
    S3Exception tag =
        assertThrows(
            S3Exception.class,
            () ->
                sdk.client.putObjectTagging(
                    q ->
                        q.bucket("b").key("k").tagging(t -> t.tagSet(s -> s.key("k").value("v")))));
    assertEquals("InvalidTag", tag.awsErrorDetails().errorCode());
    assertEquals("The TagKey you have provided is invalid", tag.awsErrorDetails().errorMessage());
  }
}
