package io.strata.proxy.xml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.checksum.BodyDigests;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.model.BucketLocationConstraint;
import software.amazon.awssdk.services.s3.model.CompletedMultipartUpload;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.Delete;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.Tag;
import software.amazon.awssdk.services.s3.model.Tagging;

class S3XmlParserTest {
  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static S3Exception refused(S3ErrorCode code, Function<byte[], ?> parser, String doc) {
    S3Exception e = assertThrows(S3Exception.class, () -> parser.apply(utf8(doc)), doc);
    assertEquals(code, e.code(), e.getMessage());
    return e;
  }

  // ---- documents as the AWS SDK v2 sends them ----

  @Test
  void parsesCompleteMultipartUploadAsTheSdkSendsIt() {
    SdkStub sdk =
        new SdkStub()
            .answer(
                200,
                S3XmlWriter.completeMultipartUploadResult(
                    new CompletedUpload("http://x/b/k", "b", "k", "e-2", null)));
    sdk.client.completeMultipartUpload(
        r ->
            r.bucket("b")
                .key("k")
                .uploadId("u")
                .multipartUpload(
                    CompletedMultipartUpload.builder()
                        .parts(
                            CompletedPart.builder()
                                .partNumber(1)
                                .eTag("\"0cc175b9c0f1b6a831c399e269772661\"")
                                .checksumCRC32("6b9cMw==")
                                .build(),
                            CompletedPart.builder()
                                .partNumber(3)
                                .eTag("92eb5ffee6ae2fec3ad71c777531578f")
                                .checksumCRC32("HNugeA==")
                                .build())
                        .build()));
    CompleteMultipartUpload c = S3XmlParser.completeMultipartUpload(sdk.last().body());
    assertEquals(2, c.parts().size());
    assertEquals(1, c.parts().get(0).partNumber());
    assertEquals("0cc175b9c0f1b6a831c399e269772661", c.parts().get(0).etag());
    assertEquals(Map.of(ChecksumAlgorithm.CRC32, "6b9cMw=="), c.parts().get(0).checksums());
    assertEquals(3, c.parts().get(1).partNumber());
    assertEquals("92eb5ffee6ae2fec3ad71c777531578f", c.parts().get(1).etag());
    assertEquals(Map.of(ChecksumAlgorithm.CRC32, "HNugeA=="), c.parts().get(1).checksums());
  }

  @Test
  void parsesDeleteAsTheSdkSendsItAndTheSdkChecksumAgrees() {
    SdkStub sdk =
        new SdkStub()
            .answer(200, S3XmlWriter.deleteResult(new DeleteResult(true, List.of(), List.of())));
    String odd = "dir/a&b<c>\"d\" 'e'\r\n\tf+%20";
    sdk.client.deleteObjects(
        r ->
            r.bucket("b")
                .delete(
                    Delete.builder()
                        .quiet(true)
                        .objects(
                            ObjectIdentifier.builder().key(odd).build(),
                            ObjectIdentifier.builder()
                                .key("v")
                                .versionId("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")
                                .build(),
                            ObjectIdentifier.builder().key("\u00e9\u4e2d\uD83D\uDE00").build())
                        .build()));
    byte[] body = sdk.last().body();
    DeleteRequest d = S3XmlParser.deleteRequest(body);
    assertTrue(d.quiet());
    assertEquals(
        List.of(
            new DeleteRequest.ObjectId(odd, Optional.empty()),
            new DeleteRequest.ObjectId("v", Optional.of("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")),
            new DeleteRequest.ObjectId("\u00e9\u4e2d\uD83D\uDE00", Optional.empty())),
        d.objects());

    // DeleteObjects must carry an integrity checksum; whichever the SDK chose, ours agrees.
    var headers = sdk.last().request().headers();
    Optional<ChecksumAlgorithm> algorithm = ChecksumAlgorithm.fromHeaderNames(headers.keySet());
    assertTrue(algorithm.isPresent() || headers.containsKey("Content-MD5"), headers.toString());
    BodyDigests digests = BodyDigests.of(false, algorithm.orElse(null));
    digests.update(body, 0, body.length);
    if (algorithm.isPresent()) {
      digests.verifyChecksum(algorithm.get(), headers.get(algorithm.get().headerName()).get(0));
    } else {
      digests.verifyContentMd5(headers.get("Content-MD5").get(0));
    }
  }

  @Test
  void parsesTaggingAsTheSdkSendsIt() {
    SdkStub sdk = new SdkStub().answer(200, new byte[0]);
    sdk.client.putObjectTagging(
        r ->
            r.bucket("b")
                .key("k")
                .tagging(
                    Tagging.builder()
                        .tagSet(
                            Tag.builder().key("project").value("a&b <c>").build(),
                            Tag.builder().key("empty").value("").build(),
                            Tag.builder().key("\u00e9t\u00e9").value("\u00e9").build())
                        .build()));
    TagSet tags = S3XmlParser.tagging(sdk.last().body());
    assertEquals(
        List.of(
            new TagSet.Tag("project", "a&b <c>"),
            new TagSet.Tag("empty", ""),
            new TagSet.Tag("\u00e9t\u00e9", "\u00e9")),
        tags.tags());
  }

  @Test
  void parsesCreateBucketConfigurationAsTheSdkSendsIt() {
    SdkStub sdk = new SdkStub().answer(200, new byte[0]);
    sdk.client.createBucket(
        r ->
            r.bucket("bucket-1")
                .createBucketConfiguration(
                    c -> c.locationConstraint(BucketLocationConstraint.EU_WEST_1)));
    assertEquals(
        Optional.of("eu-west-1"),
        S3XmlParser.createBucketConfiguration(sdk.last().body()).locationConstraint());

    sdk.client.createBucket(r -> r.bucket("bucket-1"));
    assertEquals(
        Optional.empty(),
        S3XmlParser.createBucketConfiguration(sdk.last().body()).locationConstraint());
  }

  // ---- documents as other clients write them ----

  @Test
  void acceptsOtherClientsShapes() {
    // Go's encoding/xml (rclone, aws-sdk-go) writes quotes as &#34;; s3cmd sends no namespace
    // and PartNumber first; some clients pretty-print, comment, or use CDATA.
    CompleteMultipartUpload go =
        S3XmlParser.completeMultipartUpload(
            utf8(
                "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Part><ETag>"
                    + "&#34;0cc175b9c0f1b6a831c399e269772661&#34;</ETag><PartNumber>1</PartNumber></Part>"
                    + "</CompleteMultipartUpload>"));
    assertEquals("0cc175b9c0f1b6a831c399e269772661", go.parts().get(0).etag());
    CompleteMultipartUpload s3cmd =
        S3XmlParser.completeMultipartUpload(
            utf8(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<CompleteMultipartUpload>\n  <Part>\n"
                    + "    <PartNumber> 1 </PartNumber>\n    <ETag>\"abc\"</ETag>\n  </Part>\n"
                    + "  <!-- a comment -->\n  <Part><PartNumber>2</PartNumber><ETag><![CDATA[\"def\"]]>"
                    + "</ETag><ChecksumSHA256>x</ChecksumSHA256><ChecksumMD5>ignored</ChecksumMD5></Part>"
                    + "\n</CompleteMultipartUpload>\n"));
    assertEquals(List.of(1, 2), s3cmd.parts().stream().map(p -> p.partNumber()).toList());
    assertEquals(List.of("abc", "def"), s3cmd.parts().stream().map(p -> p.etag()).toList());
    assertEquals(Map.of(ChecksumAlgorithm.SHA256, "x"), s3cmd.parts().get(1).checksums());

    DeleteRequest d =
        S3XmlParser.deleteRequest(
            utf8(
                "<Delete><Object><Key> spaced </Key>"
                    + "</Object><Object><Key></Key></Object><Quiet>TRUE</Quiet></Delete>"));
    assertTrue(d.quiet());
    assertEquals(List.of(" spaced ", ""), d.objects().stream().map(o -> o.key()).toList());
    assertFalse(
        S3XmlParser.deleteRequest(utf8("<Delete><Object><Key>k</Key></Object>" + "</Delete>"))
            .quiet());
    // A CR the client escaped survives; a raw CR/LF pair is normalised to LF by XML itself.
    assertEquals(
        "a\rb\nc",
        S3XmlParser.deleteRequest(
                utf8("<Delete><Object><Key>a&#13;b\r\nc" + "</Key></Object></Delete>"))
            .objects()
            .get(0)
            .key());
  }

  @Test
  void acceptsEmptyAndBlankCreateBucketBodies() {
    assertEquals(
        Optional.empty(), S3XmlParser.createBucketConfiguration(new byte[0]).locationConstraint());
    assertEquals(
        Optional.empty(),
        S3XmlParser.createBucketConfiguration(utf8(" \r\n")).locationConstraint());
    assertEquals(
        Optional.empty(),
        S3XmlParser.createBucketConfiguration(
                utf8(
                    "<CreateBucketConfiguration><LocationConstraint/></CreateBucketConfiguration>"))
            .locationConstraint());
    assertEquals(
        Optional.empty(),
        S3XmlParser.createBucketConfiguration(utf8("<CreateBucketConfiguration/>"))
            .locationConstraint());
  }

  // ---- malformed documents ----

  @Test
  void refusesDocumentsThatAreNotWellFormedOrNotTheRightOne() {
    Function<byte[], ?> complete = S3XmlParser::completeMultipartUpload;
    S3Exception e = refused(S3ErrorCode.MALFORMED_XML, complete, "not xml at all");
    assertTrue(e.getMessage().startsWith(S3ErrorCode.MALFORMED_XML.defaultMessage()));
    refused(S3ErrorCode.MALFORMED_XML, complete, "");
    refused(S3ErrorCode.MALFORMED_XML, complete, "<CompleteMultipartUpload><Part>");
    refused(S3ErrorCode.MALFORMED_XML, complete, "<Delete><Object><Key>k</Key></Object></Delete>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload xmlns=\"urn:other\"><Part><PartNumber>1</PartNumber>"
            + "<ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>1"
            + "</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload><Second/>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>1"
            + "<X/></PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload>text<Part>"
            + "<PartNumber>1</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>");
  }

  @Test
  void refusesCompleteMultipartUploadsS3Refuses() {
    Function<byte[], ?> complete = S3XmlParser::completeMultipartUpload;
    refused(S3ErrorCode.MALFORMED_XML, complete, "<CompleteMultipartUpload/>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber></Part>"
            + "</CompleteMultipartUpload>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>one"
            + "</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>1"
            + "</PartNumber><PartNumber>2</PartNumber><ETag>e</ETag></Part>"
            + "</CompleteMultipartUpload>");
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>0"
            + "</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.INVALID_ARGUMENT,
        complete,
        "<CompleteMultipartUpload><Part><PartNumber>"
            + "10001</PartNumber><ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.INVALID_PART_ORDER,
        complete,
        "<CompleteMultipartUpload><Part>"
            + "<PartNumber>2</PartNumber><ETag>e</ETag></Part><Part><PartNumber>1</PartNumber>"
            + "<ETag>e</ETag></Part></CompleteMultipartUpload>");
    refused(
        S3ErrorCode.INVALID_PART_ORDER,
        complete,
        "<CompleteMultipartUpload><Part>"
            + "<PartNumber>1</PartNumber><ETag>e</ETag></Part><Part><PartNumber>1</PartNumber>"
            + "<ETag>e</ETag></Part></CompleteMultipartUpload>");
  }

  @Test
  void acceptsTenThousandPartsWithChecksums() {
    StringBuilder doc =
        new StringBuilder(
            "<CompleteMultipartUpload xmlns=\"" + "http://s3.amazonaws.com/doc/2006-03-01/\">\n");
    for (int i = 1; i <= 10_000; i++) {
      doc.append(
              "  <Part>\n    <ETag>\"0cc175b9c0f1b6a831c399e269772661\"</ETag>\n"
                  + "    <ChecksumSHA256>ypeBEsobvcr6wjGzmiPcTaeG7/gUfE5yuYB3ha/uSLs=</ChecksumSHA256>\n"
                  + "    <PartNumber>")
          .append(i)
          .append("</PartNumber>\n  </Part>\n");
    }
    doc.append("</CompleteMultipartUpload>\n");
    assertEquals(10_000, S3XmlParser.completeMultipartUpload(utf8(doc.toString())).parts().size());
  }

  @Test
  void refusesDeletesS3Refuses() {
    Function<byte[], ?> delete = S3XmlParser::deleteRequest;
    refused(S3ErrorCode.MALFORMED_XML, delete, "<Delete/>");
    refused(S3ErrorCode.MALFORMED_XML, delete, "<Delete><Quiet>true</Quiet></Delete>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        delete,
        "<Delete><Object><VersionId>v</VersionId></Object>" + "</Delete>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        delete,
        "<Delete><Quiet>yes</Quiet><Object><Key>k</Key>" + "</Object></Delete>");
    StringBuilder many = new StringBuilder("<Delete>");
    for (int i = 0; i < 1001; i++) {
      many.append("<Object><Key>k").append(i).append("</Key></Object>");
    }
    String thousandAndOne = many.append("</Delete>").toString();
    S3Exception e = refused(S3ErrorCode.MALFORMED_XML, delete, thousandAndOne);
    assertTrue(e.getMessage().contains("1001"), e.getMessage());
    String thousand = thousandAndOne.replace("<Object><Key>k1000</Key></Object>", "");
    assertEquals(1000, S3XmlParser.deleteRequest(utf8(thousand)).objects().size());
  }

  @Test
  void acceptsAThousandKeysOfTheLongestLength() {
    StringBuilder doc =
        new StringBuilder(
            "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01" + "/\"><Quiet>false</Quiet>");
    String key = "k".repeat(1024);
    for (int i = 0; i < 1000; i++) {
      doc.append("<Object><Key>")
          .append(key)
          .append("</Key><VersionId>")
          .append("3HL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY")
          .append("</VersionId></Object>");
    }
    assertEquals(
        1000, S3XmlParser.deleteRequest(utf8(doc.append("</Delete>").toString())).objects().size());
  }

  @Test
  void refusesTaggingsS3Refuses() {
    Function<byte[], ?> tagging = S3XmlParser::tagging;
    refused(S3ErrorCode.MALFORMED_XML, tagging, "<Tagging/>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        tagging,
        "<Tagging><TagSet><Tag><Key>k</Key></Tag>" + "</TagSet></Tagging>");
    refused(
        S3ErrorCode.MALFORMED_XML,
        tagging,
        "<Tagging><TagSet><Tag><Value>v</Value></Tag>" + "</TagSet></Tagging>");
    assertTrue(S3XmlParser.tagging(utf8("<Tagging><TagSet/></Tagging>")).isEmpty());

    StringBuilder eleven = new StringBuilder("<Tagging><TagSet>");
    for (int i = 0; i < 11; i++) {
      eleven.append("<Tag><Key>k").append(i).append("</Key><Value>v</Value></Tag>");
    }
    S3Exception e =
        refused(S3ErrorCode.INVALID_TAG, tagging, eleven.append("</TagSet></Tagging>").toString());
    assertEquals("InvalidTag", e.code().code());
    assertEquals("Object tags cannot be greater than 10", e.getMessage());
    assertTrue(
        refused(
                S3ErrorCode.INVALID_TAG,
                tagging,
                "<Tagging><TagSet><Tag><Key>k</Key>"
                    + "<Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></TagSet></Tagging>")
            .getMessage()
            .startsWith("Cannot provide multiple Tags with the same key"));
    assertTrue(
        refused(
                S3ErrorCode.INVALID_TAG,
                tagging,
                "<Tagging><TagSet><Tag><Key>"
                    + "k".repeat(129)
                    + "</Key><Value>v</Value></Tag></TagSet></Tagging>")
            .getMessage()
            .startsWith("The TagKey you have provided is invalid"));
    assertTrue(
        refused(
                S3ErrorCode.INVALID_TAG,
                tagging,
                "<Tagging><TagSet><Tag><Key>k</Key>"
                    + "<Value>"
                    + "v".repeat(257)
                    + "</Value></Tag></TagSet></Tagging>")
            .getMessage()
            .startsWith("The TagValue you have provided is invalid"));
    refused(
        S3ErrorCode.INVALID_TAG,
        tagging,
        "<Tagging><TagSet><Tag><Key></Key><Value>v" + "</Value></Tag></TagSet></Tagging>");
  }

  @Test
  void refusesCreateBucketConfigurationsThatAreNotOne() {
    refused(S3ErrorCode.MALFORMED_XML, S3XmlParser::createBucketConfiguration, "eu-west-1");
    refused(
        S3ErrorCode.MALFORMED_XML,
        S3XmlParser::createBucketConfiguration,
        "<LocationConstraint>eu-west-1</LocationConstraint>");
  }

  // ---- hostile documents ----

  @Test
  void neverResolvesExternalEntities(@TempDir Path dir) throws IOException {
    Path secret = dir.resolve("secret.txt");
    Files.writeString(secret, "TOP-SECRET");
    String uri = secret.toUri().toString();
    List<String> attacks =
        new ArrayList<>(
            List.of(
                "<?xml version=\"1.0\"?><!DOCTYPE Delete [<!ENTITY xxe SYSTEM \""
                    + uri
                    + "\">]>"
                    + "<Delete><Object><Key>&xxe;</Key></Object></Delete>",
                "<?xml version=\"1.0\"?><!DOCTYPE Delete [<!ENTITY % p SYSTEM \""
                    + uri
                    + "\"> %p;]>"
                    + "<Delete><Object><Key>k</Key></Object></Delete>",
                "<?xml version=\"1.0\"?><!DOCTYPE Delete SYSTEM \""
                    + uri
                    + "\">"
                    + "<Delete><Object><Key>k</Key></Object></Delete>",
                // A port nothing listens on: were the DTD fetched, the test would see a connect
                // error
                // rather than MalformedXML.
                "<!DOCTYPE Delete SYSTEM \"http://127.0.0.1:9/evil.dtd\">"
                    + "<Delete><Object><Key>k</Key></Object></Delete>",
                "<!DOCTYPE Delete [<!ENTITY harmless \"k\">]>"
                    + "<Delete><Object><Key>&harmless;</Key></Object></Delete>",
                "<Delete><Object><Key>&undeclared;</Key></Object></Delete>"));
    for (String attack : attacks) {
      S3Exception e = refused(S3ErrorCode.MALFORMED_XML, S3XmlParser::deleteRequest, attack);
      assertFalse(e.getMessage().contains("TOP-SECRET"), e.getMessage());
    }
  }

  @Test
  void refusesEntityExpansionQuickly() {
    StringBuilder doc =
        new StringBuilder("<?xml version=\"1.0\"?><!DOCTYPE Tagging [<!ENTITY l0 " + "\"lol\">");
    for (int i = 1; i < 10; i++) {
      doc.append("<!ENTITY l")
          .append(i)
          .append(" \"")
          .append(("&l" + (i - 1) + ";").repeat(10))
          .append("\">");
    }
    doc.append(
        "]><Tagging><TagSet><Tag><Key>k</Key><Value>&l9;</Value></Tag></TagSet>" + "</Tagging>");
    assertTimeoutPreemptively(
        Duration.ofSeconds(5),
        () -> refused(S3ErrorCode.MALFORMED_XML, S3XmlParser::tagging, doc.toString()));
  }

  @Test
  void refusesDocumentsOverTheLimitBeforeParsing() {
    byte[] big = new byte[S3XmlParser.MAX_TAGGING_BYTES + 1];
    java.util.Arrays.fill(big, (byte) ' ');
    S3Exception e = assertThrows(S3Exception.class, () -> S3XmlParser.tagging(big));
    assertEquals(S3ErrorCode.MALFORMED_XML, e.code());
    assertTrue(
        e.getMessage().contains(Integer.toString(S3XmlParser.MAX_TAGGING_BYTES)), e.getMessage());
    assertThrows(
        S3Exception.class,
        () -> S3XmlParser.deleteRequest(new byte[S3XmlParser.MAX_DELETE_BYTES + 1]));
    assertThrows(
        S3Exception.class,
        () ->
            S3XmlParser.completeMultipartUpload(
                new byte[S3XmlParser.MAX_COMPLETE_MULTIPART_UPLOAD_BYTES + 1]));
    assertThrows(
        S3Exception.class,
        () ->
            S3XmlParser.createBucketConfiguration(
                new byte[S3XmlParser.MAX_CREATE_BUCKET_CONFIGURATION_BYTES + 1]));
  }

  @Test
  void refusesDeepNesting() {
    String deep = "<Tagging>" + "<a>".repeat(20) + "</a>".repeat(20) + "<TagSet/></Tagging>";
    refused(S3ErrorCode.MALFORMED_XML, S3XmlParser::tagging, deep);
  }
}
