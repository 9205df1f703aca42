package io.strata.proxy.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import org.junit.jupiter.api.Test;

class ObjectMetadataTest {
  @Test
  void awsChunkedIsHowTheBodyWasSentNotTheObjectsEncoding() {
    assertFalse(
        ObjectMetadata.fromRequest(new DefaultHttpHeaders().set("Content-Encoding", "aws-chunked"))
            .containsKey("strata.s3.content-encoding"));
    assertEquals(
        "gzip",
        ObjectMetadata.fromRequest(
                new DefaultHttpHeaders().set("Content-Encoding", "aws-chunked,gzip"))
            .get("strata.s3.content-encoding")
            .toStringUtf8());
    assertEquals("gzip, br", ObjectMetadata.withoutAwsChunked("gzip, AWS-CHUNKED, br"));
    // Without aws-chunked the value is the client's, spaces and all.
    assertEquals("deflate, gzip", ObjectMetadata.withoutAwsChunked("deflate, gzip"));
    assertEquals("deflate,gzip", ObjectMetadata.withoutAwsChunked("deflate,gzip"));
  }
}
