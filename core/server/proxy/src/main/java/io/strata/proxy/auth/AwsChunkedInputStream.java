package io.strata.proxy.auth;

import io.strata.proxy.s3.S3ErrorCode;
import io.strata.proxy.s3.S3Exception;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Decodes an aws-chunked request body into its payload, checking each chunk's signature and the
 * trailers' as it goes. The body is {@code hex-size[;chunk-signature=sig]\r\n<data>\r\n} repeated,
 * a zero-size chunk, then in the trailer modes {@code name:value\r\n} lines (and {@code
 * x-amz-trailer-signature:sig\r\n} when signed), then {@code \r\n}.
 *
 * <p>Memory stays bounded whatever the chunk size: data is hashed and handed out as it arrives,
 * never held beyond an 8 KiB read buffer. It follows that <b>data of a chunk is returned before
 * that chunk's signature is checked</b>: a bad chunk or trailer shows as an {@link S3Exception}
 * from a later {@code read}, and the payload is proven only when {@code read} has returned -1. A
 * caller must therefore read to the end and discard everything it wrote from the stream (an object,
 * a part) when any read throws. After a failure every read throws the same exception.
 *
 * <p>Trailers are returned, not interpreted: checking an {@code x-amz-checksum-*} trailer against
 * the payload is the caller's part, as it is for the same header on a plain body.
 *
 * <p>Tolerates what real clients send: lines ended by a bare LF, a missing final empty line, spaces
 * around the size, any chunk size up to {@link #MAX_CHUNK_SIZE}. Not thread-safe, as an input
 * stream.
 */
public final class AwsChunkedInputStream extends InputStream {
  /** The largest chunk accepted; clients send 8 KiB to 1 MiB. */
  public static final int MAX_CHUNK_SIZE = 16 << 20;

  private static final int MAX_LINE = 8192;
  private static final int MAX_TRAILERS = 32;
  private static final int BUFFER_SIZE = 8192;
  private static final String TRAILER_SIGNATURE = "x-amz-trailer-signature";

  private enum State {
    HEADER,
    DATA,
    DONE
  }

  private final InputStream in;
  private final PayloadMode mode;
  private final ChunkSigner signer;
  private final Set<String> declaredTrailers;
  private final long expectedLength;
  private final MessageDigest digest;
  private final byte[] buf = new byte[BUFFER_SIZE];
  private final byte[] single = new byte[1];
  private int pos;
  private int limit;

  private State state = State.HEADER;
  private String previousSignature;
  private String chunkSignature;
  private int chunkNumber;
  private long chunkStart;
  private long chunkRemaining;
  private long decoded;
  private final Map<String, String> trailers = new LinkedHashMap<>();
  private S3Exception failure;

  /** Decodes a body as a verified request's {@link AuthResult} says. */
  public AwsChunkedInputStream(InputStream in, AuthResult auth) {
    this(
        in,
        auth.payloadMode(),
        auth.chunkSigner(),
        auth.declaredTrailers(),
        auth.decodedContentLength());
  }

  /**
   * @param mode a streaming mode, or {@link PayloadMode#UNSIGNED} for a body sent with {@code
   *     Content-Encoding: aws-chunked} whose chunks are not signed
   * @param signer the chain of a signed streaming mode, else ignored
   * @param declaredTrailers the trailer names {@code x-amz-trailer} announced: each must come, and
   *     no other; empty to take whatever trailers come
   * @param decodedContentLength the payload length {@code x-amz-decoded-content-length} announced,
   *     or -1
   */
  public AwsChunkedInputStream(
      InputStream in,
      PayloadMode mode,
      ChunkSigner signer,
      Collection<String> declaredTrailers,
      long decodedContentLength) {
    if (mode == PayloadMode.SIGNED_SHA256) {
      throw new IllegalArgumentException("A body with a signed SHA-256 is not aws-chunked");
    }
    if (mode.chunksSigned() && signer == null) {
      throw new IllegalArgumentException("Mode " + mode + " needs the request's chunk signer");
    }
    this.in = Objects.requireNonNull(in, "in");
    this.mode = mode;
    this.signer = mode.chunksSigned() ? signer : null;
    this.previousSignature = this.signer == null ? null : this.signer.seedSignature();
    this.digest = this.signer == null ? null : Digests.newSha256();
    Set<String> declared = new LinkedHashSet<>();
    for (String name : declaredTrailers) {
      declared.add(name.strip().toLowerCase(Locale.ROOT));
    }
    this.declaredTrailers = Collections.unmodifiableSet(declared);
    this.expectedLength = decodedContentLength;
  }

  @Override
  public int read() throws IOException {
    int n = read(single, 0, 1);
    return n < 0 ? -1 : single[0] & 0xFF;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    Objects.checkFromIndexSize(off, len, b.length);
    if (failure != null) {
      throw failure;
    }
    if (len == 0) {
      return 0;
    }
    try {
      while (true) {
        switch (state) {
          case DONE:
            return -1;
          case HEADER:
            readChunkHeader();
            break;
          case DATA:
            if (chunkRemaining == 0) {
              finishChunk();
              state = State.HEADER;
              break;
            }
            return readData(b, off, (int) Math.min(len, chunkRemaining));
          default:
            throw new IllegalStateException(state.toString());
        }
      }
    } catch (S3Exception e) {
      failure = e;
      throw e;
    }
  }

  @Override
  public int available() throws IOException {
    return state == State.DATA ? (int) Math.min(chunkRemaining, limit - pos) : 0;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }

  /**
   * The trailers, names in lower case, in the order sent, without {@code x-amz-trailer-signature}.
   *
   * @throws IllegalStateException before the end of the body was read
   */
  public Map<String, String> trailers() {
    requireDone();
    return Collections.unmodifiableMap(trailers);
  }

  /** The payload bytes decoded so far; the payload's length once {@code read} returned -1. */
  public long decodedLength() {
    return decoded;
  }

  private void requireDone() {
    if (state != State.DONE || failure != null) {
      throw new IllegalStateException("The aws-chunked body has not been read to its end");
    }
  }

  private int readData(byte[] b, int off, int len) throws IOException {
    int n;
    if (pos < limit) {
      n = Math.min(len, limit - pos);
      System.arraycopy(buf, pos, b, off, n);
      pos += n;
    } else {
      // Large reads go straight from the source to the caller, with no copy through buf.
      n = in.read(b, off, len);
      if (n < 0) {
        throw incomplete(
            "the body ended inside chunk "
                + chunkNumber
                + ", "
                + chunkRemaining
                + " bytes before the end its size announced");
      }
    }
    if (digest != null) {
      digest.update(b, off, n);
    }
    chunkRemaining -= n;
    decoded += n;
    if (expectedLength >= 0 && decoded > expectedLength) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "The aws-chunked body carries more"
              + " than the "
              + expectedLength
              + " bytes x-amz-decoded-content-length announced");
    }
    return n;
  }

  private void readChunkHeader() throws IOException {
    String line = readLine();
    if (line == null) {
      throw incomplete("the body ended before its final zero-size chunk");
    }
    chunkNumber++;
    int semicolon = line.indexOf(';');
    String sizeText = (semicolon < 0 ? line : line.substring(0, semicolon)).strip();
    long size = parseSize(sizeText, line);
    String signature = null;
    if (semicolon >= 0) {
      for (String ext : line.substring(semicolon + 1).split(";")) {
        String e = ext.strip();
        if (e.startsWith("chunk-signature=")) {
          signature = e.substring("chunk-signature=".length()).strip();
        }
      }
    }
    if (signer != null && (signature == null || !Digests.isHex(signature, 64))) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Chunk "
              + chunkNumber
              + " of the"
              + " aws-chunked body has no valid chunk-signature, which "
              + mode
              + " requires: '"
              + shorten(line)
              + "'");
    }
    chunkSignature = signature;
    chunkStart = decoded;
    if (size == 0) {
      if (digest != null) {
        verifyChunk(digest.digest());
      }
      readTrailers();
      if (expectedLength >= 0 && decoded != expectedLength) {
        throw incomplete(
            "the aws-chunked body carries "
                + decoded
                + " bytes but"
                + " x-amz-decoded-content-length announced "
                + expectedLength);
      }
      state = State.DONE;
    } else {
      chunkRemaining = size;
      if (digest != null) {
        digest.reset();
      }
      state = State.DATA;
    }
  }

  private long parseSize(String sizeText, String line) {
    if (sizeText.isEmpty() || sizeText.length() > 16) {
      throw malformedSize(line);
    }
    long size = 0;
    for (int i = 0; i < sizeText.length(); i++) {
      int d = Character.digit(sizeText.charAt(i), 16);
      if (d < 0) {
        throw malformedSize(line);
      }
      size = (size << 4) | d;
      if (size > MAX_CHUNK_SIZE) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "Chunk "
                + chunkNumber
                + " of the"
                + " aws-chunked body announces more than the "
                + MAX_CHUNK_SIZE
                + " bytes a chunk"
                + " may hold here: send smaller chunks");
      }
    }
    return size;
  }

  private S3Exception malformedSize(String line) {
    return new S3Exception(
        S3ErrorCode.INVALID_REQUEST,
        "Chunk "
            + chunkNumber
            + " of the"
            + " aws-chunked body does not start with a hex size: '"
            + shorten(line)
            + "'");
  }

  private void finishChunk() throws IOException {
    String end = readLine();
    if (end == null) {
      throw incomplete(
          "the body ended after the data of chunk " + chunkNumber + ", before its closing CRLF");
    }
    if (!end.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_REQUEST,
          "Chunk "
              + chunkNumber
              + " of the"
              + " aws-chunked body is followed by data instead of CRLF: its size line announced"
              + " fewer bytes than were sent");
    }
    if (digest != null) {
      verifyChunk(digest.digest());
    }
  }

  private void verifyChunk(byte[] sha256) {
    String expected = signer.chunkSignature(previousSignature, sha256);
    if (!Digests.signaturesEqual(expected, chunkSignature)) {
      throw new S3Exception(
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
          "The signature of chunk "
              + chunkNumber
              + " (payload bytes "
              + chunkStart
              + " to "
              + decoded
              + ") does not"
              + " match: the body was changed on the way, or chunks were signed with another key"
              + " or out of order");
    }
    previousSignature = expected;
  }

  private void readTrailers() throws IOException {
    String trailerSignature = null;
    while (true) {
      String line = readLine();
      // Some clients end the body right after the last line, without the empty line.
      if (line == null || line.isEmpty()) {
        break;
      }
      if (mode == PayloadMode.STREAMING_SIGNED) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "The aws-chunked body has data after"
                + " its final chunk, but "
                + mode
                + " has no trailers: '"
                + shorten(line)
                + "'");
      }
      if (trailerSignature != null) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "The aws-chunked body has a trailer"
                + " after x-amz-trailer-signature, which must come last");
      }
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "A trailer of the aws-chunked body" + " is not 'name:value': '" + shorten(line) + "'");
      }
      String name = line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).strip();
      if (name.equals(TRAILER_SIGNATURE)) {
        trailerSignature = value;
        continue;
      }
      if (!declaredTrailers.isEmpty() && !declaredTrailers.contains(name)) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "The aws-chunked body carries"
                + " trailer '"
                + name
                + "', which x-amz-trailer did not announce ("
                + String.join(", ", declaredTrailers)
                + ")");
      }
      if (trailers.size() >= MAX_TRAILERS || trailers.putIfAbsent(name, value) != null) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "The aws-chunked body repeats"
                + " trailer '"
                + name
                + "' or carries more than "
                + MAX_TRAILERS
                + " trailers");
      }
    }
    for (String name : declaredTrailers) {
      if (!trailers.containsKey(name)) {
        throw incomplete(
            "x-amz-trailer announced trailer '" + name + "' but the body ended" + " without it");
      }
    }
    if (mode == PayloadMode.STREAMING_SIGNED_TRAILER) {
      verifyTrailers(trailerSignature);
    }
  }

  private void verifyTrailers(String provided) {
    if (provided == null) {
      throw incomplete(
          "the body ended without the x-amz-trailer-signature that " + mode + " requires");
    }
    // Signed as canonical headers: sorted names, "name:value\n" each.
    StringBuilder canonical = new StringBuilder();
    for (Map.Entry<String, String> t : new TreeMap<>(trailers).entrySet()) {
      canonical.append(t.getKey()).append(':').append(collapseSpaces(t.getValue())).append('\n');
    }
    byte[] sha256 = Digests.sha256(canonical.toString().getBytes(StandardCharsets.ISO_8859_1));
    String expected = signer.trailerSignature(previousSignature, sha256);
    if (!Digests.isHex(provided, 64) || !Digests.signaturesEqual(expected, provided)) {
      throw new S3Exception(
          S3ErrorCode.SIGNATURE_DOES_NOT_MATCH,
          "The trailer signature of the"
              + " aws-chunked body does not match its trailers ("
              + String.join(", ", trailers.keySet())
              + "): they were changed on the way, or signed with another key");
    }
  }

  private static String collapseSpaces(String value) {
    return value.replaceAll("[ \\t]+", " ");
  }

  /**
   * The next line without its LF or CRLF, one char per byte; null at the end of the body before any
   * byte of a line.
   */
  private String readLine() throws IOException {
    StringBuilder sb = new StringBuilder(128);
    while (true) {
      if (pos == limit && !fill()) {
        if (sb.length() == 0) {
          return null;
        }
        throw incomplete("the body ended in the middle of a line of the aws-chunked framing");
      }
      int c = buf[pos++] & 0xFF;
      if (c == '\n') {
        int n = sb.length();
        if (n > 0 && sb.charAt(n - 1) == '\r') {
          sb.setLength(n - 1);
        }
        return sb.toString();
      }
      if (sb.length() >= MAX_LINE) {
        throw new S3Exception(
            S3ErrorCode.INVALID_REQUEST,
            "A line of the aws-chunked framing is"
                + " longer than "
                + MAX_LINE
                + " bytes: the body is not aws-chunked, or its"
                + " sizes are wrong");
      }
      sb.append((char) c);
    }
  }

  private boolean fill() throws IOException {
    int n = in.read(buf, 0, buf.length);
    if (n < 0) {
      return false;
    }
    pos = 0;
    limit = n;
    return true;
  }

  private S3Exception incomplete(String why) {
    return new S3Exception(
        S3ErrorCode.INCOMPLETE_BODY,
        "Incomplete aws-chunked body: " + why + " (" + decoded + " payload bytes decoded)");
  }

  private static String shorten(String line) {
    return line.length() <= 120 ? line : line.substring(0, 120) + "...";
  }
}
