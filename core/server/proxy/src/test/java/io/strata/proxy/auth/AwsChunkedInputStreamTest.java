package io.strata.proxy.auth;

import static io.strata.proxy.auth.SigV4VerifierTest.refused;
import static io.strata.proxy.auth.Signing.ACCESS_KEY;
import static io.strata.proxy.auth.Signing.SECRET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.checksums.DefaultChecksumAlgorithm;
import software.amazon.awssdk.checksums.spi.ChecksumAlgorithm;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpMethod;
import software.amazon.awssdk.http.auth.aws.signer.AwsV4HttpSigner;
import software.amazon.awssdk.services.s3.S3Client;

class AwsChunkedInputStreamTest {
  private static final int SDK_CHUNK = 128 * 1024;

  private static byte[] data(int size) {
    byte[] b = new byte[size];
    new Random(size).nextBytes(b);
    return b;
  }

  private static String crc32(byte[] data) {
    CRC32 crc = new CRC32();
    crc.update(data);
    return Base64.getEncoder()
        .encodeToString(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
  }

  /** An upload the SDK's signer encodes as aws-chunked, verified as a request. */
  private static Signed sdkChunked(byte[] payload, boolean signChunks, ChecksumAlgorithm checksum) {
    WireRequest req =
        Signing.sign(
            Signing.objectRequest(SdkHttpMethod.PUT, "big/object.bin")
                // The SDK signs chunks whatever the setting over plain http.
                .protocol(signChunks ? "http" : "https")
                .port(signChunks ? 9000 : 443)
                .putHeader("Content-Length", Integer.toString(payload.length))
                .build(),
            payload,
            r -> {
              r.putProperty(AwsV4HttpSigner.CHUNK_ENCODING_ENABLED, true)
                  .putProperty(AwsV4HttpSigner.PAYLOAD_SIGNING_ENABLED, signChunks);
              if (checksum != null) {
                r.putProperty(AwsV4HttpSigner.CHECKSUM_ALGORITHM, checksum);
              }
            });
    return new Signed(req, req.verify(Signing.verifier()));
  }

  private record Signed(WireRequest request, AuthResult auth) {
    AwsChunkedInputStream stream() {
      return stream(request.body());
    }

    AwsChunkedInputStream stream(byte[] body) {
      return new AwsChunkedInputStream(new ByteArrayInputStream(body), auth);
    }
  }

  private static byte[] readAll(InputStream in, int bufferSize) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[bufferSize];
    int n;
    while ((n = in.read(buf)) >= 0) {
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  private static byte[] readByBytes(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) >= 0) {
      out.write(c);
    }
    return out.toByteArray();
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 8191, SDK_CHUNK, 2 * SDK_CHUNK + 7})
  void sdkSignedChunksDecodeToThePayload(int size) throws IOException {
    byte[] payload = data(size);
    Signed s = sdkChunked(payload, true, null);
    assertEquals(PayloadMode.STREAMING_SIGNED, s.auth().payloadMode());
    assertEquals(size, s.auth().decodedContentLength());
    for (int bufferSize : new int[] {7, 4096, 1 << 20}) {
      AwsChunkedInputStream in = s.stream();
      assertArrayEquals(payload, readAll(in, bufferSize));
      assertEquals(size, in.decodedLength());
      assertEquals(Map.of(), in.trailers());
      assertEquals(-1, in.read(), "stays at its end");
    }
  }

  @Test
  void sdkSignedChunksWithSignedChecksumTrailer() throws IOException {
    byte[] payload = data(3 * SDK_CHUNK + 100);
    Signed s = sdkChunked(payload, true, DefaultChecksumAlgorithm.CRC32);
    assertEquals(PayloadMode.STREAMING_SIGNED_TRAILER, s.auth().payloadMode());
    assertEquals(List.of("x-amz-checksum-crc32"), s.auth().declaredTrailers());
    AwsChunkedInputStream in = s.stream();
    assertArrayEquals(payload, readAll(in, 64 * 1024));
    assertEquals(Map.of("x-amz-checksum-crc32", crc32(payload)), in.trailers());
  }

  @Test
  void sdkUnsignedChunksWithChecksumTrailer() throws IOException {
    byte[] payload = data(SDK_CHUNK + 1);
    Signed s = sdkChunked(payload, false, DefaultChecksumAlgorithm.CRC32);
    assertEquals(PayloadMode.STREAMING_UNSIGNED_TRAILER, s.auth().payloadMode());
    AwsChunkedInputStream in = s.stream();
    assertArrayEquals(payload, readByBytes(in));
    assertEquals(crc32(payload), in.trailers().get("x-amz-checksum-crc32"));
  }

  @Test
  void theRealS3ClientsDefaultUploadDecodes() throws IOException {
    byte[] payload = data(300_000);
    CapturingHttpClient http = new CapturingHttpClient();
    try (S3Client s3 = CapturingHttpClient.s3(http, ACCESS_KEY, SECRET, b -> {})) {
      s3.putObject(r -> r.bucket("bucket").key("k"), RequestBody.fromBytes(payload));
    }
    WireRequest req = http.last();
    assertEquals("aws-chunked", req.headers().get("Content-Encoding"));
    AuthResult auth =
        req.verify(new SigV4Verifier(Signing.credentials(), Clock.systemUTC(), false));
    AwsChunkedInputStream in =
        new AwsChunkedInputStream(new ByteArrayInputStream(req.body()), auth);
    assertArrayEquals(payload, readAll(in, 8192));
    assertEquals(crc32(payload), in.trailers().get("x-amz-checksum-crc32"));
  }

  @Test
  void aChangedByteFailsItsChunkAfterItsDataWasReturned() throws IOException {
    byte[] payload = data(2 * SDK_CHUNK);
    Signed s = sdkChunked(payload, true, null);
    byte[] body = s.request().body().clone();
    int dataStart = indexOf(body, "\r\n".getBytes(StandardCharsets.US_ASCII), 0) + 2;
    body[dataStart + SDK_CHUNK - 1] ^= 1; // last byte of the first chunk
    AwsChunkedInputStream in = s.stream(body);
    byte[] first = new byte[SDK_CHUNK];
    assertEquals(
        SDK_CHUNK,
        in.readNBytes(first, 0, SDK_CHUNK),
        "data is handed out before its chunk's signature is checked");
    S3Exception e = refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> in.read());
    assertTrue(e.getMessage().contains("chunk 1"), e.getMessage());
    assertThrows(S3Exception.class, () -> in.read(new byte[10]), "the failure sticks");
    assertThrows(IllegalStateException.class, in::trailers);
  }

  @Test
  void reorderedChunksFailTheChain() {
    byte[] payload = data(3 * SDK_CHUNK);
    Signed s = sdkChunked(payload, true, null);
    byte[] body = s.request().body();
    int blockLength =
        indexOf(body, "\r\n".getBytes(StandardCharsets.US_ASCII), 0) + 2 + SDK_CHUNK + 2;
    byte[] swapped = body.clone();
    System.arraycopy(body, blockLength, swapped, 0, blockLength);
    System.arraycopy(body, 0, swapped, blockLength, blockLength);
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> readAll(s.stream(swapped), 8192));
    // Dropping a chunk breaks it too.
    byte[] dropped = Arrays.copyOfRange(body, blockLength, body.length);
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> readAll(s.stream(dropped), 8192));
  }

  @Test
  void aChangedTrailerFailsTheTrailerSignature() {
    byte[] payload = data(1000);
    Signed s = sdkChunked(payload, true, DefaultChecksumAlgorithm.CRC32);
    String body = new String(s.request().body(), StandardCharsets.ISO_8859_1);
    String good = "x-amz-checksum-crc32:" + crc32(payload);
    assertTrue(body.contains(good + "\r\n"), "the SDK sends its checksum as a trailer");
    byte[] tampered =
        body.replace(good, "x-amz-checksum-crc32:AAAAAA==").getBytes(StandardCharsets.ISO_8859_1);
    refused(S3ErrorCode.SIGNATURE_DOES_NOT_MATCH, () -> readAll(s.stream(tampered), 8192));
    byte[] unsignedTrailers =
        body.replaceAll("x-amz-trailer-signature:[0-9a-f]+\r\n", "")
            .getBytes(StandardCharsets.ISO_8859_1);
    refused(S3ErrorCode.INCOMPLETE_BODY, () -> readAll(s.stream(unsignedTrailers), 8192));
  }

  @Test
  void aTruncatedBodyIsIncomplete() throws IOException {
    byte[] payload = data(SDK_CHUNK + 500);
    Signed s = sdkChunked(payload, true, DefaultChecksumAlgorithm.CRC32);
    byte[] body = s.request().body();
    int[] cuts = {
      0, 10, 100, SDK_CHUNK, SDK_CHUNK + 200, body.length - 150, body.length - 90, body.length - 3
    };
    for (int cut : cuts) {
      byte[] part = Arrays.copyOf(body, cut);
      refused(S3ErrorCode.INCOMPLETE_BODY, () -> readAll(s.stream(part), 8192));
    }
    // Only the closing empty line may be missing.
    assertArrayEquals(payload, readAll(s.stream(Arrays.copyOf(body, body.length - 2)), 8192));
  }

  /** A body as boto3, the AWS CLI and other SDKs send it with an unsigned checksum trailer. */
  private static byte[] unsignedChunked(
      byte[] payload, int chunkSize, String eol, String... trailerLines) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int off = 0; off < payload.length; off += chunkSize) {
      int n = Math.min(chunkSize, payload.length - off);
      out.writeBytes((Integer.toHexString(n) + eol).getBytes(StandardCharsets.US_ASCII));
      out.write(payload, off, n);
      out.writeBytes(eol.getBytes(StandardCharsets.US_ASCII));
    }
    out.writeBytes(("0" + eol).getBytes(StandardCharsets.US_ASCII));
    for (String t : trailerLines) {
      out.writeBytes((t + eol).getBytes(StandardCharsets.US_ASCII));
    }
    out.writeBytes(eol.getBytes(StandardCharsets.US_ASCII));
    return out.toByteArray();
  }

  private static AwsChunkedInputStream unsignedStream(
      byte[] body, List<String> declared, long decodedLength) {
    return new AwsChunkedInputStream(
        new ByteArrayInputStream(body),
        PayloadMode.STREAMING_UNSIGNED_TRAILER,
        null,
        declared,
        decodedLength);
  }

  @ParameterizedTest
  @ValueSource(ints = {8 * 1024, 64 * 1024, 128 * 1024, 1 << 20})
  void handBuiltUnsignedTrailerBodiesOfClientChunkSizesDecode(int chunkSize) throws IOException {
    byte[] payload = data(2 * chunkSize + 333);
    String crc64 = "x-amz-checksum-crc64nvme:u1bRLAQKGDA=";
    byte[] body = unsignedChunked(payload, chunkSize, "\r\n", crc64);
    AwsChunkedInputStream in =
        unsignedStream(body, List.of("x-amz-checksum-crc64nvme"), payload.length);
    assertArrayEquals(payload, readAll(in, 32 * 1024));
    assertEquals(Map.of("x-amz-checksum-crc64nvme", "u1bRLAQKGDA="), in.trailers());
    assertEquals(payload.length, in.decodedLength());
  }

  @Test
  void bareLineFeedsAndAMissingFinalLineAreTolerated() throws IOException {
    byte[] payload = data(5000);
    byte[] lf = unsignedChunked(payload, 1000, "\n", "X-Amz-Checksum-CRC32: abcd==");
    AwsChunkedInputStream in = unsignedStream(lf, List.of("x-amz-checksum-crc32"), -1);
    assertArrayEquals(payload, readAll(in, 4096));
    assertEquals(Map.of("x-amz-checksum-crc32", "abcd=="), in.trailers());

    byte[] crlf = unsignedChunked(payload, 1000, "\r\n", "x-amz-checksum-crc32:abcd==");
    byte[] noFinalLine = Arrays.copyOf(crlf, crlf.length - 2);
    assertArrayEquals(payload, readAll(unsignedStream(noFinalLine, List.of(), -1), 4096));
  }

  @Test
  void malformedFramingIsRefusedWithTheReason() {
    byte[] payload = data(100);
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            readAll(
                unsignedStream(
                    "zz\r\nabc\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII), List.of(), -1),
                100));
    S3Exception big =
        refused(
            S3ErrorCode.INVALID_REQUEST,
            () ->
                unsignedStream("1000001\r\n".getBytes(StandardCharsets.US_ASCII), List.of(), -1)
                    .read());
    assertTrue(big.getMessage().contains("16777216"), big.getMessage());
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            readAll(
                unsignedStream(
                    "5\r\nhelloEXTRA\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII),
                    List.of(),
                    -1),
                100));
    byte[] longLine = new byte[20_000];
    Arrays.fill(longLine, (byte) '1');
    refused(S3ErrorCode.INVALID_REQUEST, () -> unsignedStream(longLine, List.of(), -1).read());
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            readAll(
                unsignedStream(
                    unsignedChunked(payload, 50, "\r\n", "x-amz-checksum-crc32c:abc="),
                    List.of("x-amz-checksum-crc32"),
                    -1),
                100));
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () ->
            readAll(
                unsignedStream(
                    unsignedChunked(payload, 50, "\r\n", "no colon here"), List.of(), -1),
                100));
    refused(
        S3ErrorCode.INCOMPLETE_BODY,
        () ->
            readAll(
                unsignedStream(
                    unsignedChunked(payload, 50, "\r\n"), List.of("x-amz-checksum-crc32"), -1),
                100));
    refused(
        S3ErrorCode.INCOMPLETE_BODY,
        () -> readAll(unsignedStream(unsignedChunked(payload, 50, "\r\n"), List.of(), 101), 100));
    refused(
        S3ErrorCode.INVALID_REQUEST,
        () -> readAll(unsignedStream(unsignedChunked(payload, 50, "\r\n"), List.of(), 99), 100));
  }

  @Test
  void signedModesNeedChunkSignatures() {
    Signed s = sdkChunked(data(10), true, null);
    byte[] plain = unsignedChunked(data(10), 10, "\r\n");
    refused(S3ErrorCode.INVALID_REQUEST, () -> readAll(s.stream(plain), 100));
    // Trailers where the mode has none: the body ends "0;chunk-signature=...\r\n\r\n".
    byte[] body = s.request().body();
    byte[] afterEnd =
        concat(
            Arrays.copyOf(body, body.length - 2),
            "x-amz-checksum-crc32:abc=\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    refused(S3ErrorCode.INVALID_REQUEST, () -> readAll(s.stream(afterEnd), 100));
  }

  @Test
  void bytesAreHandedOutAsTheyArrive() throws IOException {
    byte[] head = "10000\r\n".getBytes(StandardCharsets.US_ASCII);
    byte[] someData = data(100);
    InputStream stalled =
        new InputStream() {
          @Override
          public int read() throws IOException {
            throw new IOException("the client stalled");
          }
        };
    InputStream source =
        new SequenceInputStream(new ByteArrayInputStream(concat(head, someData)), stalled);
    AwsChunkedInputStream in =
        new AwsChunkedInputStream(
            source, PayloadMode.STREAMING_UNSIGNED_TRAILER, null, List.of(), -1);
    byte[] buf = new byte[0x10000];
    int n = in.read(buf, 0, buf.length);
    assertEquals(100, n, "the first 100 bytes of a 64 KiB chunk come without waiting for more");
    assertArrayEquals(someData, Arrays.copyOf(buf, n));
    assertThrows(IOException.class, () -> in.read(buf, 0, buf.length));
  }

  @Test
  void theStreamRefusesModesWithoutChunks() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new AwsChunkedInputStream(
                new ByteArrayInputStream(new byte[0]),
                PayloadMode.SIGNED_SHA256,
                null,
                List.of(),
                -1));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new AwsChunkedInputStream(
                new ByteArrayInputStream(new byte[0]),
                PayloadMode.STREAMING_SIGNED,
                null,
                List.of(),
                -1));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static int indexOf(byte[] hay, byte[] needle, int from) {
    outer:
    for (int i = from; i <= hay.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (hay[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new UncheckedIOException(new IOException("not found"));
  }
}
