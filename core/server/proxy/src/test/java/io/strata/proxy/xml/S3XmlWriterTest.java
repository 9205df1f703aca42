package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumType;
import io.strata.proxy.checksum.ChecksumValue;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class S3XmlWriterTest {
  static final String NS = "http://s3.amazonaws.com/doc/2006-03-01/";
  static final Instant T1 = Instant.parse("2009-10-12T17:50:30.123456789Z");
  static final Instant T2 = Instant.parse("2024-02-29T00:00:00Z");
  static final Owner OWNER = new Owner("75aa57f09aa0c8caeab4f8c24e99d10f", "strata");
  static final Owner INITIATOR = new Owner("arn:aws:iam::111122223333:user/someone", null);
  static final String TRICKY = "a<b>&c\"d'e f+g%h/i\u00e9";

  private static String string(byte[] doc) {
    return new String(doc, StandardCharsets.UTF_8);
  }

  private static void assertOwner(ParsedXml owner, Owner expected) {
    assertEquals(expected.id(), owner.text("ID"));
    if (expected.displayName() == null) {
      assertFalse(owner.has("DisplayName"));
    } else {
      assertEquals(expected.displayName(), owner.text("DisplayName"));
    }
  }

  @Test
  void writesTimestampsInUtcWithMilliseconds() {
    assertEquals("2009-10-12T17:50:30.123Z", XmlOut.timestamp(T1));
    assertEquals("2024-02-29T00:00:00.000Z", XmlOut.timestamp(T2));
  }

  @Test
  void writesTheErrorDocumentWithoutNamespaceAndWithItsExtraFields() {
    Map<String, String> details = new LinkedHashMap<>();
    details.put("Key", TRICKY);
    details.put("BucketName", "b");
    details.put("UploadId", "u-1");
    details.put("StringToSign", "AWS4-HMAC-SHA256\n20240229T000000Z\nscope\nhash");
    details.put("CanonicalRequest", "GET\n/\n\nhost:x\n\nhost\nUNSIGNED-PAYLOAD");
    details.put("ArgumentName", "partNumber");
    details.put("ArgumentValue", "0");
    byte[] doc =
        S3XmlWriter.error(
            new ErrorResponse(
                "NoSuchKey",
                "The specified key does not " + "exist.",
                "/b/" + TRICKY,
                "4442587FB7D0A2F9",
                "host/id==",
                details));
    ParsedXml e = ParsedXml.parse(doc);
    assertEquals("Error", e.name());
    assertEquals("", e.namespace() == null ? "" : e.namespace());
    assertEquals(
        List.of(
            "Code",
            "Message",
            "Key",
            "BucketName",
            "UploadId",
            "StringToSign",
            "CanonicalRequest",
            "ArgumentName",
            "ArgumentValue",
            "Resource",
            "RequestId",
            "HostId"),
        e.childNames());
    assertEquals("NoSuchKey", e.text("Code"));
    assertEquals("The specified key does not exist.", e.text("Message"));
    assertEquals(TRICKY, e.text("Key"));
    assertEquals("AWS4-HMAC-SHA256\n20240229T000000Z\nscope\nhash", e.text("StringToSign"));
    assertEquals("GET\n/\n\nhost:x\n\nhost\nUNSIGNED-PAYLOAD", e.text("CanonicalRequest"));
    assertEquals("0", e.text("ArgumentValue"));
    assertEquals("/b/" + TRICKY, e.text("Resource"));
    assertEquals("4442587FB7D0A2F9", e.text("RequestId"));
    assertEquals("host/id==", e.text("HostId"));
  }

  @Test
  void writesAnErrorOfAnException() {
    ErrorResponse r =
        ErrorResponse.of(new S3Exception(S3ErrorCode.NO_SUCH_BUCKET), "/b", "R1")
            .with("BucketName", "b");
    assertEquals(
        ParsedXml.DECLARATION
            + "\n<Error><Code>NoSuchBucket</Code><Message>The "
            + "specified bucket does not exist.</Message><BucketName>b</BucketName><Resource>/b"
            + "</Resource><RequestId>R1</RequestId></Error>",
        string(S3XmlWriter.error(r)));
    assertThrows(IllegalArgumentException.class, () -> r.with("Code", "x"));
    assertThrows(IllegalArgumentException.class, () -> r.with("<bad>", "x"));
  }

  @Test
  void writesListAllMyBuckets() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listAllMyBuckets(
                new BucketListing(
                    OWNER,
                    List.of(
                        new BucketListing.Bucket("alpha", T1, null),
                        new BucketListing.Bucket("beta", T2, "eu-west-1")))));
    assertEquals("ListAllMyBucketsResult", r.name());
    assertEquals(NS, r.namespace());
    assertOwner(r.child("Owner"), OWNER);
    List<ParsedXml> buckets = r.child("Buckets").all("Bucket");
    assertEquals(2, buckets.size());
    assertEquals("alpha", buckets.get(0).text("Name"));
    assertEquals("2009-10-12T17:50:30.123Z", buckets.get(0).text("CreationDate"));
    assertFalse(buckets.get(0).has("BucketRegion"));
    assertEquals("beta", buckets.get(1).text("Name"));
    assertEquals("2024-02-29T00:00:00.000Z", buckets.get(1).text("CreationDate"));
    assertEquals("eu-west-1", buckets.get(1).text("BucketRegion"));

    ParsedXml empty =
        ParsedXml.parse(S3XmlWriter.listAllMyBuckets(new BucketListing(OWNER, List.of())));
    assertTrue(empty.child("Buckets").children().isEmpty());
  }

  private static ObjectEntry entry(String key, Owner owner) {
    return new ObjectEntry(
        key,
        T1,
        "9b2cf535f27731c974343645a3985328",
        434234,
        "STANDARD",
        owner,
        ChecksumAlgorithm.CRC64NVME,
        ChecksumType.FULL_OBJECT);
  }

  private static void assertEntry(ParsedXml c, String key, boolean withOwner) {
    assertEquals(
        List.of(
                "Key",
                "LastModified",
                "ETag",
                "ChecksumAlgorithm",
                "ChecksumType",
                "Size",
                "Owner",
                "StorageClass")
            .stream()
            .filter(n -> withOwner || !n.equals("Owner"))
            .toList(),
        c.childNames());
    assertEquals(key, c.text("Key"));
    assertEquals("2009-10-12T17:50:30.123Z", c.text("LastModified"));
    assertEquals("\"9b2cf535f27731c974343645a3985328\"", c.text("ETag"));
    assertEquals("CRC64NVME", c.text("ChecksumAlgorithm"));
    assertEquals("FULL_OBJECT", c.text("ChecksumType"));
    assertEquals("434234", c.text("Size"));
    assertEquals("STANDARD", c.text("StorageClass"));
    if (withOwner) {
      assertOwner(c.child("Owner"), OWNER);
    }
  }

  @Test
  void writesListObjectsV1() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listObjects(
                new ObjectListingV1(
                    "bucket",
                    "photos/",
                    "photos/2005",
                    "photos/2006/b",
                    2,
                    "/",
                    true,
                    false,
                    List.of(entry("photos/2006/a" + TRICKY, OWNER)),
                    List.of("photos/2006/"))));
    assertEquals("ListBucketResult", r.name());
    assertEquals(NS, r.namespace());
    assertEquals(
        List.of(
            "Name",
            "Prefix",
            "Marker",
            "NextMarker",
            "MaxKeys",
            "Delimiter",
            "IsTruncated",
            "Contents",
            "CommonPrefixes"),
        r.childNames());
    assertEquals("bucket", r.text("Name"));
    assertEquals("photos/", r.text("Prefix"));
    assertEquals("photos/2005", r.text("Marker"));
    assertEquals("photos/2006/b", r.text("NextMarker"));
    assertEquals("2", r.text("MaxKeys"));
    assertEquals("/", r.text("Delimiter"));
    assertEquals("true", r.text("IsTruncated"));
    assertEntry(r.child("Contents"), "photos/2006/a" + TRICKY, true);
    assertEquals("photos/2006/", r.child("CommonPrefixes").text("Prefix"));
  }

  @Test
  void writesNextMarkerOnlyForATruncatedPageWithADelimiter() {
    List<ObjectEntry> one = List.of(ObjectEntry.of("k", T1, "e", 1));
    ParsedXml noDelimiter =
        ParsedXml.parse(
            S3XmlWriter.listObjects(
                new ObjectListingV1("b", null, null, "k", 1, null, true, false, one, List.of())));
    assertFalse(noDelimiter.has("NextMarker"));
    assertFalse(noDelimiter.has("Delimiter"));
    assertEquals("", noDelimiter.text("Prefix"));
    assertEquals("", noDelimiter.text("Marker"));
    assertFalse(noDelimiter.child("Contents").has("Owner"));

    ParsedXml notTruncated =
        ParsedXml.parse(
            S3XmlWriter.listObjects(
                new ObjectListingV1("b", "", "", "k", 1, "/", false, false, one, List.of())));
    assertFalse(notTruncated.has("NextMarker"));
    assertEquals("false", notTruncated.text("IsTruncated"));

    ParsedXml emptyDelimiter =
        ParsedXml.parse(
            S3XmlWriter.listObjects(
                new ObjectListingV1("b", "", "", "k", 1, "", true, false, one, List.of())));
    assertFalse(emptyDelimiter.has("NextMarker"));
    assertFalse(emptyDelimiter.has("Delimiter"));
  }

  @Test
  void urlEncodesV1KeysPrefixesMarkersAndDelimiter() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listObjects(
                new ObjectListingV1(
                    "b",
                    "a b/",
                    "a b/\u0001",
                    "a b/+",
                    10,
                    "+",
                    true,
                    true,
                    List.of(ObjectEntry.of("a b/\u0001x\r", T1, "e", 0)),
                    List.of("a b/c+"))));
    assertEquals("a%20b/", r.text("Prefix"));
    assertEquals("a%20b/%01", r.text("Marker"));
    assertEquals("a%20b/%2B", r.text("NextMarker"));
    assertEquals("%2B", r.text("Delimiter"));
    assertEquals("url", r.text("EncodingType"));
    assertEquals("a%20b/%01x%0D", r.child("Contents").text("Key"));
    assertEquals("a%20b/c%2B", r.child("CommonPrefixes").text("Prefix"));
  }

  @Test
  void writesListObjectsV2() {
    ObjectListingV2 l =
        new ObjectListingV2(
            "bucket",
            "p/",
            "p/0",
            "tok+/=",
            "next+/=",
            1000,
            "/",
            true,
            false,
            true,
            List.of(entry("p/1", OWNER)),
            List.of("p/dir/", "p/e/"));
    assertEquals(3, l.keyCount());
    ParsedXml r = ParsedXml.parse(S3XmlWriter.listObjectsV2(l));
    assertEquals(NS, r.namespace());
    assertEquals(
        List.of(
            "Name",
            "Prefix",
            "ContinuationToken",
            "NextContinuationToken",
            "KeyCount",
            "MaxKeys",
            "Delimiter",
            "IsTruncated",
            "StartAfter",
            "Contents",
            "CommonPrefixes",
            "CommonPrefixes"),
        r.childNames());
    assertEquals("bucket", r.text("Name"));
    assertEquals("p/", r.text("Prefix"));
    assertEquals("tok+/=", r.text("ContinuationToken"));
    assertEquals("next+/=", r.text("NextContinuationToken"));
    assertEquals("3", r.text("KeyCount"));
    assertEquals("1000", r.text("MaxKeys"));
    assertEquals("/", r.text("Delimiter"));
    assertEquals("true", r.text("IsTruncated"));
    assertEquals("p/0", r.text("StartAfter"));
    assertEntry(r.child("Contents"), "p/1", true);
    assertEquals(
        List.of("p/dir/", "p/e/"),
        r.all("CommonPrefixes").stream().map(c -> c.text("Prefix")).toList());
  }

  @Test
  void writesV2OwnersOnlyWithFetchOwnerAndEncodesButNotTokens() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listObjectsV2(
                new ObjectListingV2(
                    "b",
                    "a b",
                    "a b/\u0002",
                    "tok en",
                    null,
                    1,
                    null,
                    false,
                    true,
                    false,
                    List.of(entry("a b/1", OWNER)),
                    List.of())));
    assertEntry(r.child("Contents"), "a%20b/1", false);
    assertEquals("a%20b", r.text("Prefix"));
    assertEquals("a%20b/%02", r.text("StartAfter"));
    assertEquals("tok en", r.text("ContinuationToken"));
    assertFalse(r.has("NextContinuationToken"));
    assertFalse(r.has("Delimiter"));
    assertEquals("url", r.text("EncodingType"));
    assertEquals("1", r.text("KeyCount"));

    ParsedXml plain =
        ParsedXml.parse(
            S3XmlWriter.listObjectsV2(
                new ObjectListingV2(
                    "b", null, null, null, null, 1000, null, false, false, false, List.of(),
                    List.of())));
    assertEquals(
        List.of("Name", "Prefix", "KeyCount", "MaxKeys", "IsTruncated"), plain.childNames());
    assertEquals("0", plain.text("KeyCount"));
  }

  @Test
  void writesCopyResultsWithTheirChecksums() {
    ChecksumValue crc =
        new ChecksumValue(ChecksumAlgorithm.CRC32C, "yZRlqg==", ChecksumType.FULL_OBJECT);
    ParsedXml o = ParsedXml.parse(S3XmlWriter.copyObjectResult(new CopyResult("\"abc\"", T1, crc)));
    assertEquals("CopyObjectResult", o.name());
    assertEquals(NS, o.namespace());
    assertEquals(List.of("ETag", "LastModified", "ChecksumCRC32C", "ChecksumType"), o.childNames());
    assertEquals("\"abc\"", o.text("ETag"));
    assertEquals("2009-10-12T17:50:30.123Z", o.text("LastModified"));
    assertEquals("yZRlqg==", o.text("ChecksumCRC32C"));
    assertEquals("FULL_OBJECT", o.text("ChecksumType"));

    ParsedXml p = ParsedXml.parse(S3XmlWriter.copyPartResult(new CopyResult("abc", T2, crc)));
    assertEquals("CopyPartResult", p.name());
    assertEquals(List.of("ETag", "LastModified", "ChecksumCRC32C"), p.childNames());
    assertEquals("\"abc\"", p.text("ETag"));

    ParsedXml none = ParsedXml.parse(S3XmlWriter.copyPartResult(new CopyResult("abc", T2, null)));
    assertEquals(List.of("ETag", "LastModified"), none.childNames());
  }

  @Test
  void writesInitiateAndCompleteMultipartUpload() {
    ParsedXml i =
        ParsedXml.parse(
            S3XmlWriter.initiateMultipartUploadResult(
                new InitiatedUpload("b", TRICKY, "VXBsb2FkIElE")));
    assertEquals("InitiateMultipartUploadResult", i.name());
    assertEquals(NS, i.namespace());
    assertEquals(List.of("Bucket", "Key", "UploadId"), i.childNames());
    assertEquals("b", i.text("Bucket"));
    assertEquals(TRICKY, i.text("Key"));
    assertEquals("VXBsb2FkIElE", i.text("UploadId"));

    ChecksumValue composite =
        new ChecksumValue(
            ChecksumAlgorithm.SHA256,
            "rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3",
            ChecksumType.COMPOSITE);
    ParsedXml c =
        ParsedXml.parse(
            S3XmlWriter.completeMultipartUploadResult(
                new CompletedUpload(
                    "http://localhost/b/k",
                    "b",
                    "k",
                    "3858f62230ac3c915f300c664312c11f-9",
                    composite)));
    assertEquals("CompleteMultipartUploadResult", c.name());
    assertEquals(
        List.of("Location", "Bucket", "Key", "ETag", "ChecksumSHA256", "ChecksumType"),
        c.childNames());
    assertEquals("http://localhost/b/k", c.text("Location"));
    assertEquals("\"3858f62230ac3c915f300c664312c11f-9\"", c.text("ETag"));
    assertEquals("rVWtNbadtsaKXJAcgWPWjifHzJaXde/iV4jaJAOdivc=-3", c.text("ChecksumSHA256"));
    assertEquals("COMPOSITE", c.text("ChecksumType"));
  }

  @Test
  void writesListParts() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listPartsResult(
                new PartListing(
                    "b",
                    "k",
                    "up",
                    1,
                    3,
                    2,
                    true,
                    INITIATOR,
                    OWNER,
                    "STANDARD",
                    ChecksumAlgorithm.CRC32,
                    ChecksumType.COMPOSITE,
                    List.of(
                        new PartListing.Part(
                            2,
                            T1,
                            "7778aef83f66abc1fa1e8477f296d394",
                            10485760,
                            new ChecksumValue(
                                ChecksumAlgorithm.CRC32, "+SDIDA==", ChecksumType.FULL_OBJECT)),
                        new PartListing.Part(
                            3, T2, "\"aaaaef83f66abc1fa1e8477f296d394\"", 5, null)))));
    assertEquals("ListPartsResult", r.name());
    assertEquals(NS, r.namespace());
    assertEquals(
        List.of(
            "Bucket",
            "Key",
            "UploadId",
            "PartNumberMarker",
            "NextPartNumberMarker",
            "MaxParts",
            "IsTruncated",
            "Part",
            "Part",
            "Initiator",
            "Owner",
            "StorageClass",
            "ChecksumAlgorithm",
            "ChecksumType"),
        r.childNames());
    assertEquals("b", r.text("Bucket"));
    assertEquals("k", r.text("Key"));
    assertEquals("up", r.text("UploadId"));
    assertEquals("1", r.text("PartNumberMarker"));
    assertEquals("3", r.text("NextPartNumberMarker"));
    assertEquals("2", r.text("MaxParts"));
    assertEquals("true", r.text("IsTruncated"));
    ParsedXml p = r.all("Part").get(0);
    assertEquals(
        List.of("PartNumber", "LastModified", "ETag", "Size", "ChecksumCRC32"), p.childNames());
    assertEquals("2", p.text("PartNumber"));
    assertEquals("2009-10-12T17:50:30.123Z", p.text("LastModified"));
    assertEquals("\"7778aef83f66abc1fa1e8477f296d394\"", p.text("ETag"));
    assertEquals("10485760", p.text("Size"));
    assertEquals("+SDIDA==", p.text("ChecksumCRC32"));
    assertEquals("\"aaaaef83f66abc1fa1e8477f296d394\"", r.all("Part").get(1).text("ETag"));
    assertOwner(r.child("Initiator"), INITIATOR);
    assertOwner(r.child("Owner"), OWNER);
    assertEquals("STANDARD", r.text("StorageClass"));
    assertEquals("CRC32", r.text("ChecksumAlgorithm"));
    assertEquals("COMPOSITE", r.text("ChecksumType"));
  }

  @Test
  void writesListMultipartUploads() {
    UploadListing.Upload u =
        new UploadListing.Upload(
            "a b/\u0003",
            "up1",
            INITIATOR,
            OWNER,
            "STANDARD",
            T1,
            ChecksumAlgorithm.CRC64NVME,
            ChecksumType.FULL_OBJECT);
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listMultipartUploadsResult(
                new UploadListing(
                    "b",
                    "a b",
                    "m1",
                    "a b/\u0003",
                    "up1",
                    "a ",
                    "/",
                    1,
                    true,
                    true,
                    List.of(u),
                    List.of("a c/"))));
    assertEquals("ListMultipartUploadsResult", r.name());
    assertEquals(NS, r.namespace());
    assertEquals(
        List.of(
            "Bucket",
            "KeyMarker",
            "UploadIdMarker",
            "NextKeyMarker",
            "NextUploadIdMarker",
            "Delimiter",
            "Prefix",
            "MaxUploads",
            "IsTruncated",
            "Upload",
            "CommonPrefixes",
            "EncodingType"),
        r.childNames());
    assertEquals("b", r.text("Bucket"));
    assertEquals("a%20b", r.text("KeyMarker"));
    assertEquals("m1", r.text("UploadIdMarker"));
    assertEquals("a%20b/%03", r.text("NextKeyMarker"));
    assertEquals("up1", r.text("NextUploadIdMarker"));
    assertEquals("/", r.text("Delimiter"));
    assertEquals("a%20", r.text("Prefix"));
    assertEquals("1", r.text("MaxUploads"));
    assertEquals("true", r.text("IsTruncated"));
    ParsedXml up = r.child("Upload");
    assertEquals(
        List.of(
            "Key",
            "UploadId",
            "Initiator",
            "Owner",
            "StorageClass",
            "Initiated",
            "ChecksumAlgorithm",
            "ChecksumType"),
        up.childNames());
    assertEquals("a%20b/%03", up.text("Key"));
    assertEquals("up1", up.text("UploadId"));
    assertOwner(up.child("Initiator"), INITIATOR);
    assertOwner(up.child("Owner"), OWNER);
    assertEquals("STANDARD", up.text("StorageClass"));
    assertEquals("2009-10-12T17:50:30.123Z", up.text("Initiated"));
    assertEquals("CRC64NVME", up.text("ChecksumAlgorithm"));
    assertEquals("a%20c/", r.child("CommonPrefixes").text("Prefix"));
    assertEquals("url", r.text("EncodingType"));

    ParsedXml plain =
        ParsedXml.parse(
            S3XmlWriter.listMultipartUploadsResult(
                new UploadListing(
                    "b", null, null, null, null, null, null, 1000, false, false, List.of(),
                    List.of())));
    assertEquals(
        List.of(
            "Bucket",
            "KeyMarker",
            "UploadIdMarker",
            "NextKeyMarker",
            "NextUploadIdMarker",
            "Prefix",
            "MaxUploads",
            "IsTruncated"),
        plain.childNames());
  }

  @Test
  void writesVersionsAndDeleteMarkersInTheirOrderWithTheNextMarkers() {
    Owner owner = new Owner("alice", "alice");
    ObjectVersionListing l =
        new ObjectVersionListing(
            "b",
            "",
            "",
            "",
            "k",
            "7ffe000000000000aaaaaaaa",
            2,
            "",
            true,
            false,
            List.of(
                new VersionEntry(entry("k", owner), "7fff000000000000bbbbbbbb", true, true),
                new VersionEntry(entry("k", owner), "7ffe000000000000aaaaaaaa", false, false)),
            List.of());
    ParsedXml doc = ParsedXml.parse(S3XmlWriter.listObjectVersions(l));
    assertEquals("k", doc.text("NextKeyMarker"));
    assertEquals("7ffe000000000000aaaaaaaa", doc.text("NextVersionIdMarker"));
    ParsedXml marker = doc.child("DeleteMarker");
    assertEquals(
        List.of("Key", "VersionId", "IsLatest", "LastModified", "Owner"), marker.childNames());
    assertEquals("true", marker.text("IsLatest"));
    ParsedXml version = doc.child("Version");
    assertEquals("7ffe000000000000aaaaaaaa", version.text("VersionId"));
    assertEquals("false", version.text("IsLatest"));
    List<String> names = doc.childNames();
    assertTrue(names.indexOf("DeleteMarker") < names.indexOf("Version"), names.toString());
  }

  @Test
  void writesTheVersioningStatusAndDeletedMarkers() {
    ParsedXml enabled = ParsedXml.parse(S3XmlWriter.versioning("Enabled"));
    assertEquals("Enabled", enabled.text("Status"));
    ParsedXml deleted =
        ParsedXml.parse(
                S3XmlWriter.deleteResult(
                    new DeleteResult(
                        false,
                        List.of(
                            new DeleteResult.Deleted("k", null, true, "7fff00000000000012345678")),
                        List.of())))
            .child("Deleted");
    assertEquals(List.of("Key", "DeleteMarker", "DeleteMarkerVersionId"), deleted.childNames());
    assertEquals("true", deleted.text("DeleteMarker"));
  }

  @Test
  void writesDeleteResultListingOnlyErrorsWhenQuiet() {
    List<DeleteResult.Deleted> deleted =
        List.of(
            new DeleteResult.Deleted("a&b", null),
            new DeleteResult.Deleted("v", "3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY"));
    List<DeleteResult.Failure> errors =
        List.of(new DeleteResult.Failure("c<d", null, "AccessDenied", "Access Denied"));
    ParsedXml loud =
        ParsedXml.parse(S3XmlWriter.deleteResult(new DeleteResult(false, deleted, errors)));
    assertEquals("DeleteResult", loud.name());
    assertEquals(NS, loud.namespace());
    assertEquals(List.of("Deleted", "Deleted", "Error"), loud.childNames());
    assertEquals("a&b", loud.all("Deleted").get(0).text("Key"));
    assertFalse(loud.all("Deleted").get(0).has("VersionId"));
    assertEquals("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY", loud.all("Deleted").get(1).text("VersionId"));
    ParsedXml error = loud.child("Error");
    assertEquals(List.of("Key", "Code", "Message"), error.childNames());
    assertEquals("c<d", error.text("Key"));
    assertEquals("AccessDenied", error.text("Code"));
    assertEquals("Access Denied", error.text("Message"));

    ParsedXml quiet =
        ParsedXml.parse(S3XmlWriter.deleteResult(new DeleteResult(true, deleted, errors)));
    assertEquals(List.of("Error"), quiet.childNames());
    ParsedXml quietAllGood =
        ParsedXml.parse(S3XmlWriter.deleteResult(new DeleteResult(true, deleted, List.of())));
    assertTrue(quietAllGood.children().isEmpty());
  }

  @Test
  void writesTagging() {
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.tagging(
                new TagSet(
                    List.of(new TagSet.Tag("project", "x&y"), new TagSet.Tag("empty", "")))));
    assertEquals("Tagging", r.name());
    assertEquals(NS, r.namespace());
    List<ParsedXml> tags = r.child("TagSet").all("Tag");
    assertEquals(2, tags.size());
    assertEquals("project", tags.get(0).text("Key"));
    assertEquals("x&y", tags.get(0).text("Value"));
    assertEquals("", tags.get(1).text("Value"));
    assertTrue(
        ParsedXml.parse(S3XmlWriter.tagging(TagSet.empty())).child("TagSet").children().isEmpty());
  }

  @Test
  void writesAnEmptyLocationConstraintForUsEast1() {
    String empty =
        ParsedXml.DECLARATION
            + "\n<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>";
    assertEquals(empty, string(S3XmlWriter.locationConstraint("us-east-1")));
    assertEquals(empty, string(S3XmlWriter.locationConstraint(null)));
    assertEquals(
        ParsedXml.DECLARATION
            + "\n<LocationConstraint xmlns=\"http://s3.amazonaws.com"
            + "/doc/2006-03-01/\">eu-west-1</LocationConstraint>",
        string(S3XmlWriter.locationConstraint("eu-west-1")));
  }

  @Test
  void escapesMarkupQuotesAndCarriageReturnsExactly() {
    byte[] doc =
        S3XmlWriter.initiateMultipartUploadResult(
            new InitiatedUpload("b", "<a>&\"b\"'\r\n\tc", "u"));
    String s = string(doc);
    assertTrue(s.contains("<Key>&lt;a&gt;&amp;&quot;b&quot;'&#xd;\n\tc</Key>"), s);
    assertEquals("<a>&\"b\"'\r\n\tc", ParsedXml.parse(doc).text("Key"));
  }

  @Test
  void writesCharactersXmlCannotCarryAsReferencesAsS3Does() {
    String key = "x\u0001y\u001bz\u0000\uFFFE\uFFFF";
    String s =
        string(S3XmlWriter.initiateMultipartUploadResult(new InitiatedUpload("b", key, "u")));
    assertTrue(s.contains("<Key>x&#x1;y&#x1b;z&#x0;&#xfffe;&#xffff;</Key>"), s);
    // The same key in a listing with encoding-type=url is plain XML.
    ParsedXml r =
        ParsedXml.parse(
            S3XmlWriter.listObjectsV2(
                new ObjectListingV2(
                    "b",
                    null,
                    null,
                    null,
                    null,
                    1,
                    null,
                    false,
                    true,
                    false,
                    List.of(ObjectEntry.of(key, T1, "e", 0)),
                    List.of())));
    assertEquals("x%01y%1Bz%00%EF%BF%BE%EF%BF%BF", r.child("Contents").text("Key"));
  }

  @Test
  void keepsSupplementaryCharactersAndReplacesLoneSurrogates() {
    String key = "emoji \uD83D\uDE00 lone \uD800 end \uDC00";
    byte[] doc = S3XmlWriter.initiateMultipartUploadResult(new InitiatedUpload("b", key, "u"));
    assertEquals("emoji \uD83D\uDE00 lone \uFFFD end \uFFFD", ParsedXml.parse(doc).text("Key"));
  }
}
