package io.strata.proxy.s3;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.strata.proxy.auth.AuthResult;
import io.strata.proxy.auth.AwsChunkedInputStream;
import io.strata.proxy.auth.PayloadMode;
import io.strata.proxy.checksum.BodyDigests;
import io.strata.proxy.checksum.ChecksumAlgorithm;
import io.strata.proxy.checksum.ChecksumValue;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The payload of an upload (PutObject, UploadPart) as it streams through: the aws-chunked framing
 * and its signatures taken off, the length counted, and MD5 (the ETag), the signed SHA-256 and the
 * flexible checksum the client names computed on the way. {@link #verify()} then checks all of it
 * -- Content-Length or x-amz-decoded-content-length, Content-MD5, x-amz-content-sha256, and the
 * x-amz-checksum-* value from a header or the body's trailer -- before the caller commits what it
 * wrote; any mismatch is an S3 error and the caller discards the upload, so bytes that fail a check
 * are never visible. The XML documents other requests carry are read and checked the same way
 * ({@link #document}) before anything acts on them.
 */
final class UploadBody {
  /** S3's largest single PUT. */
  static final long MAX_PUT_BYTES = 5L << 30;

  private final S3Request request;
  private final InputStream payload;
  private final AwsChunkedInputStream chunked;
  private final BodyDigests digests;
  private final ChecksumAlgorithm algorithm;
  private final long expectedLength;

  private UploadBody(
      S3Request request,
      InputStream payload,
      AwsChunkedInputStream chunked,
      BodyDigests digests,
      ChecksumAlgorithm algorithm,
      long expectedLength) {
    this.request = request;
    this.payload = payload;
    this.chunked = chunked;
    this.digests = digests;
    this.algorithm = algorithm;
    this.expectedLength = expectedLength;
  }

  /** Opens the body of {@code r}, refusing at once what S3 refuses before reading it. */
  static UploadBody open(S3Request r, long maxBytes) {
    return open(r, maxBytes, true);
  }

  /**
   * The body of a request that carries a document (an XML body) rather than an object's bytes,
   * whole and checked as an upload's is -- its length, Content-MD5, the signed SHA-256, the
   * aws-chunked framing and, with {@code flexibleChecksum}, an x-amz-checksum-* value -- before the
   * operation acts on it: a document changed on its way is refused, not obeyed. A request without a
   * body has an empty document.
   *
   * @param flexibleChecksum whether an x-amz-checksum-* header is the body's (not where it is the
   *     object's, as in CompleteMultipartUpload)
   * @throws S3Exception MalformedXML past {@code maxBytes}; the failed check's error
   */
  static byte[] document(S3Request r, int maxBytes, boolean flexibleChecksum) throws IOException {
    if (r.header("Content-Length") == null
        && !r.headers()
            .containsValue(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED, true)) {
      return new byte[0];
    }
    UploadBody body = open(r, Long.MAX_VALUE, flexibleChecksum);
    if (body.expectedLength > maxBytes) {
      throw tooLong(maxBytes);
    }
    ByteArrayOutputStream out =
        new ByteArrayOutputStream() {
          @Override
          public synchronized void write(byte[] b, int off, int len) {
            if (count + len > maxBytes) {
              throw tooLong(maxBytes);
            }
            super.write(b, off, len);
          }
        };
    body.copyTo(out, new byte[8192]);
    body.verify();
    return out.toByteArray();
  }

  private static S3Exception tooLong(int maxBytes) {
    return new S3Exception(
        S3ErrorCode.MALFORMED_XML,
        "The XML you provided was not"
            + " well-formed or did not validate against our published schema: it is longer than"
            + " the "
            + maxBytes
            + " bytes this request takes");
  }

  private static UploadBody open(S3Request r, long maxBytes, boolean flexibleChecksum) {
    AuthResult auth = r.auth();
    PayloadMode mode = auth.payloadMode();
    String contentEncoding = r.header("Content-Encoding");
    boolean awsChunked =
        mode.streaming()
            || (contentEncoding != null
                && contentEncoding.toLowerCase(Locale.ROOT).contains("aws-chunked"));
    String contentLength = r.header("Content-Length");
    boolean transferChunked =
        r.headers()
            .containsValue(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED, true);
    long expected = -1;
    if (awsChunked) {
      String decoded = r.header("x-amz-decoded-content-length");
      if (decoded != null) {
        expected = parseLength(decoded, "x-amz-decoded-content-length");
      } else if (contentLength == null && !transferChunked) {
        throw new S3Exception(S3ErrorCode.MISSING_CONTENT_LENGTH);
      }
    } else if (contentLength != null) {
      expected = parseLength(contentLength, "Content-Length");
    } else if (!transferChunked) {
      throw new S3Exception(S3ErrorCode.MISSING_CONTENT_LENGTH);
    }
    if (expected > maxBytes) {
      throw new S3Exception(
          S3ErrorCode.ENTITY_TOO_LARGE,
          "Your proposed upload of "
              + expected
              + " bytes exceeds the maximum allowed object size of "
              + maxBytes
              + " bytes");
    }
    ChecksumAlgorithm algorithm = flexibleChecksum ? algorithm(r, auth) : null;
    boolean sha256 = mode == PayloadMode.SIGNED_SHA256;
    BodyDigests digests = BodyDigests.of(sha256, algorithm);
    InputStream raw = r.exchange().body();
    AwsChunkedInputStream chunked = awsChunked ? new AwsChunkedInputStream(raw, auth) : null;
    return new UploadBody(
        r, chunked != null ? chunked : raw, chunked, digests, algorithm, expected);
  }

  private static long parseLength(String v, String header) {
    try {
      long n = Long.parseLong(v.trim());
      if (n < 0) {
        throw new NumberFormatException();
      }
      return n;
    } catch (NumberFormatException e) {
      throw new S3Exception(S3ErrorCode.INVALID_ARGUMENT, header + " is not a length: " + v);
    }
  }

  /** The flexible checksum the request names, by algorithm header, value header or trailer. */
  private static ChecksumAlgorithm algorithm(S3Request r, AuthResult auth) {
    List<String> names = new ArrayList<>();
    for (Map.Entry<String, String> h : r.headers()) {
      names.add(h.getKey());
    }
    names.addAll(auth.declaredTrailers());
    Optional<ChecksumAlgorithm> byValue = ChecksumAlgorithm.fromHeaderNames(names);
    String named = r.header(ChecksumAlgorithm.SDK_ALGORITHM_HEADER);
    if (named == null) {
      named = r.header(ChecksumAlgorithm.ALGORITHM_HEADER);
    }
    ChecksumAlgorithm byName = named == null ? null : ChecksumAlgorithm.fromValue(named);
    if (byName != null && byValue.isPresent() && byValue.get() != byName) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The checksum algorithm "
              + named
              + " does not match the checksum given ("
              + byValue.get().headerName()
              + ")");
    }
    return byName != null ? byName : byValue.orElse(null);
  }

  /** The algorithm of the flexible checksum computed, or null. */
  ChecksumAlgorithm algorithm() {
    return algorithm;
  }

  /**
   * Copies the whole payload to {@code out}, a buffer at a time.
   *
   * @return bytes copied
   */
  long copyTo(OutputStream out, byte[] buffer) throws IOException {
    long total = 0;
    int n;
    while ((n = payload.read(buffer, 0, buffer.length)) > 0) {
      digests.update(buffer, 0, n);
      out.write(buffer, 0, n);
      total += n;
      if (expectedLength >= 0 && total > expectedLength) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "The body is longer than the " + expectedLength + " bytes the request announced");
      }
    }
    return total;
  }

  /** Checks what the payload was announced to be; call after {@link #copyTo}. */
  void verify() {
    long length = digests.length();
    if (expectedLength >= 0 && length != expectedLength) {
      throw new S3Exception(
          S3ErrorCode.INCOMPLETE_BODY,
          "You did not provide the number of"
              + " bytes specified: "
              + length
              + " of "
              + expectedLength);
    }
    String md5 = request.header("Content-MD5");
    if (md5 != null) {
      digests.verifyContentMd5(md5);
    }
    if (request.auth().payloadMode() == PayloadMode.SIGNED_SHA256) {
      digests.verifyPayloadSha256(request.auth().expectedPayloadSha256());
    }
    if (algorithm != null) {
      String expected = request.header(algorithm.headerName());
      if (expected == null && chunked != null) {
        expected = chunked.trailers().get(algorithm.headerName());
      }
      if (expected != null) {
        digests.verifyChecksum(algorithm, expected);
      }
    }
  }

  String md5Hex() {
    return digests.md5Hex();
  }

  /** The flexible checksum of the payload, or null when none was asked for. */
  ChecksumValue checksum() {
    return algorithm == null ? null : digests.checksum();
  }

  long length() {
    return digests.length();
  }

  /** The payload's length as the request announced it; -1 when it announced none. */
  long expectedLength() {
    return expectedLength;
  }
}
