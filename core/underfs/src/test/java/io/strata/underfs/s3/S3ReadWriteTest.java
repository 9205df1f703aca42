package io.strata.underfs.s3;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.MultipartUpload;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.UploadPartRequest;

class S3ReadWriteTest {
  static final String BUCKET = "data";
  static final int MB = 1 << 20;

  @TempDir static Path data;
  static S3TestServer server;

  /** Multipart past 5 MB in parts of 5 MB, S3's smallest, so that tests stay small. */
  static S3UnderFileSystem ufs;

  @BeforeAll
  static void start() throws Exception {
    server = new S3TestServer(data);
    server.createBucket(BUCKET);
    ufs =
        (S3UnderFileSystem)
            new S3UnderFileSystemProvider()
                .open(
                    "s3://" + BUCKET,
                    server.options(
                        S3Options.PART_SIZE, "5MB", S3Options.MULTIPART_THRESHOLD, "5MB"));
  }

  @AfterAll
  static void stop() throws Exception {
    ufs.close();
    server.close();
  }

  static String uri(String key) {
    return "s3://" + BUCKET + "/" + key;
  }

  static byte[] randomBytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  byte[] rawGet(String key) {
    return server.raw().getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray();
  }

  boolean rawExists(String key) {
    try {
      server.raw().headObject(b -> b.bucket(BUCKET).key(key));
      return true;
    } catch (NoSuchKeyException e) {
      return false;
    } catch (S3Exception e) {
      if (e.statusCode() == 404) {
        return false;
      }
      throw e;
    }
  }

  List<MultipartUpload> uploadsUnder(String prefix) {
    return server.raw().listMultipartUploads(b -> b.bucket(BUCKET).prefix(prefix)).uploads();
  }

  @Test
  void positionedReadsReturnExactlyTheRangeAndMinusOneAtTheEnd() throws Exception {
    byte[] content = randomBytes(100_000, 1);
    server
        .raw()
        .putObject(
            b -> b.bucket(BUCKET).key("read/with space #1 50%.bin"),
            RequestBody.fromBytes(content));
    String uri = uri("read/with space #1 50%.bin");
    byte[] buf = new byte[4096];
    for (int position : new int[] {0, 1, 4095, 50_000, 95_904}) {
      assertEquals(4096, ufs.read(uri, position, buf, 0, 4096), "at " + position);
      for (int i = 0; i < 4096; i++) {
        assertEquals(content[position + i], buf[i], "byte " + (position + i));
      }
    }
    assertEquals(10, ufs.read(uri, 99_990, buf, 100, 50), "short read at the end");
    for (int i = 0; i < 10; i++) {
      assertEquals(content[99_990 + i], buf[100 + i]);
    }
    assertEquals(-1, ufs.read(uri, 100_000, buf, 0, 10), "at the end");
    assertEquals(-1, ufs.read(uri, 200_000, buf, 0, 10), "past the end");
    assertEquals(0, ufs.read(uri, 5, buf, 0, 0), "nothing asked");

    server.raw().putObject(b -> b.bucket(BUCKET).key("read/empty"), RequestBody.empty());
    assertEquals(-1, ufs.read(uri("read/empty"), 0, buf, 0, 10), "empty object");
    NoSuchFileException missing =
        assertThrows(NoSuchFileException.class, () -> ufs.read(uri("read/missing"), 0, buf, 0, 10));
    assertEquals(uri("read/missing"), missing.getFile());
  }

  @Test
  void bufferReadIsOneRangedGetWithTheBytesOfTheArrayRead() throws Exception {
    byte[] content = randomBytes(300_000, 6);
    server.raw().putObject(b -> b.bucket(BUCKET).key("buffer/f"), RequestBody.fromBytes(content));
    String uri = uri("buffer/f");
    AtomicInteger gets = new AtomicInteger();
    ExecutionInterceptor countGets =
        new ExecutionInterceptor() {
          @Override
          public void beforeExecution(
              Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof GetObjectRequest) {
              gets.incrementAndGet();
            }
          }
        };
    S3Client client = server.client(countGets);
    try (S3UnderFileSystem counted =
        new S3UnderFileSystem(
            client,
            S3Options.parse(server.options()),
            new S3Errors(server.endpoint().toString()),
            S3Location.parse("s3://" + BUCKET))) {
      for (ByteBuffer dst :
          new ByteBuffer[] {ByteBuffer.allocateDirect(200_000), ByteBuffer.allocate(200_000)}) {
        String kind = dst.isDirect() ? "direct" : "heap";
        gets.set(0);
        dst.position(1000);
        // 199,000 bytes are several transfer arrays' worth, still one request.
        assertEquals(199_000, counted.read(uri, 5000, dst), kind);
        assertEquals(1, gets.get(), kind + ": one ranged GET for the whole buffer");
        assertEquals(200_000, dst.position(), kind);
        byte[] viaArray = new byte[199_000];
        assertEquals(199_000, counted.read(uri, 5000, viaArray, 0, viaArray.length));
        assertArrayEquals(viaArray, bytes(dst, 1000, 199_000), kind);

        gets.set(0);
        dst.clear();
        assertEquals(50_000, counted.read(uri, 250_000, dst), kind + ": crosses the end");
        assertEquals(1, gets.get(), kind);
        assertArrayEquals(
            Arrays.copyOfRange(content, 250_000, 300_000), bytes(dst, 0, 50_000), kind);
        dst.clear();
        assertEquals(-1, counted.read(uri, 300_000, dst), kind + ": at the end");
        assertEquals(0, dst.position(), kind);
      }
      NoSuchFileException missing =
          assertThrows(
              NoSuchFileException.class,
              () -> counted.read(uri("buffer/missing"), 0, ByteBuffer.allocateDirect(10)));
      assertEquals(uri("buffer/missing"), missing.getFile());
    }
  }

  private static byte[] bytes(ByteBuffer buffer, int from, int length) {
    byte[] b = new byte[length];
    buffer.get(from, b);
    return b;
  }

  @Test
  void threadsSharingTheStoreEachGetTheirOwnRange() throws Exception {
    byte[] content = randomBytes(3 * MB, 5);
    server.raw().putObject(b -> b.bucket(BUCKET).key("shared/f"), RequestBody.fromBytes(content));
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Boolean>> reads = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int seed = t;
        reads.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  byte[] buf = new byte[64 << 10];
                  for (int i = 0; i < 25; i++) {
                    int position = random.nextInt(content.length);
                    int n = ufs.read(uri("shared/f"), position, buf, 0, buf.length);
                    if (n != Math.min(buf.length, content.length - position)
                        || !Arrays.equals(buf, 0, n, content, position, position + n)) {
                      return false;
                    }
                  }
                  return true;
                }));
      }
      for (Future<Boolean> r : reads) {
        assertTrue(r.get(), "a read returned other bytes than its range");
      }
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void aFileBelowTheThresholdIsOnePutThatAppearsOnlyOnClose() throws Exception {
    byte[] content = randomBytes(MB + 17, 2);
    UfsOutputStream out = ufs.create(uri("small/one put"), false, 0640);
    out.write(content, 0, 1000);
    out.write(content[1000]);
    out.write(content, 1001, content.length - 1001);
    assertFalse(rawExists("small/one put"), "invisible before close");
    assertTrue(uploadsUnder("small/").isEmpty(), "no multipart upload below the threshold");
    out.close();
    assertArrayEquals(content, rawGet("small/one put"));
    UfsStatus status = ufs.getStatus(uri("small/one put"));
    assertEquals(content.length, status.length());
    assertEquals(0644, status.mode(), "S3 keeps no mode");
    assertEquals(status.fingerprint(), out.fingerprint());
    assertFalse(out.fingerprint().contains("\""), out.fingerprint());
  }

  @Test
  void aFileAboveTheThresholdIsUploadedInPartsAndAppearsOnlyOnClose() throws Exception {
    byte[] content = randomBytes(23 * MB + 12_345, 3);
    UfsOutputStream out = ufs.create(uri("large/multi part"), false, 0644);
    // Writes of odd sizes cross part boundaries at every offset.
    int written = 0;
    for (int i = 0; written < content.length; i++) {
      int n = Math.min(content.length - written, 777_777 + i * 1013);
      out.write(content, written, n);
      written += n;
    }
    assertFalse(rawExists("large/multi part"), "invisible before close");
    List<MultipartUpload> uploads = uploadsUnder("large/");
    assertEquals(1, uploads.size(), "one upload in progress");
    int partsSent =
        server
            .raw()
            .listParts(
                b -> b.bucket(BUCKET).key("large/multi part").uploadId(uploads.get(0).uploadId()))
            .parts()
            .size();
    assertEquals(4, partsSent, "four whole parts of 5 MB are sent while writing");
    out.close();

    assertArrayEquals(content, rawGet("large/multi part"));
    byte[] back = new byte[content.length];
    int at = 0;
    for (int i = 0; i < 100 && at < back.length; i++) {
      int n = ufs.read(uri("large/multi part"), at, back, at, Math.min(8 * MB, back.length - at));
      assertTrue(n > 0);
      at += n;
    }
    assertArrayEquals(content, back, "read back through the store");
    assertTrue(uploadsUnder("large/").isEmpty(), "the upload completed");
    UfsStatus status = ufs.getStatus(uri("large/multi part"));
    assertEquals(content.length, status.length());
    assertEquals(status.fingerprint(), out.fingerprint());
  }

  @Test
  void anAbortedWriteLeavesNoObjectAndNoUpload() throws Exception {
    UfsOutputStream out = ufs.create(uri("aborted/big"), false, 0);
    out.write(randomBytes(12 * MB, 4));
    assertEquals(1, uploadsUnder("aborted/").size(), "multipart upload started");
    out.abort();
    assertFalse(rawExists("aborted/big"));
    assertTrue(uploadsUnder("aborted/").isEmpty(), "upload aborted");

    UfsOutputStream small = ufs.create(uri("aborted/small"), false, 0);
    small.write(new byte[] {1, 2, 3});
    small.abort();
    assertFalse(rawExists("aborted/small"));
  }

  /**
   * The store's connection drops in the middle of a part's body, on every attempt, from the second
   * part on: the write fails naming the part, the previous object stays whole, and no upload is
   * left in progress, whether the part was sent by a write (its caller aborts) or by close.
   */
  @Test
  void anUploadCutOffHalfWayLeavesThePreviousObjectAndNoUpload() throws Exception {
    byte[] previous = randomBytes(MB, 40);
    try (UfsOutputStream out = ufs.create(uri("cut/obj"), true, 0644)) {
      out.write(previous);
    }
    AtomicInteger cut = new AtomicInteger();
    ExecutionInterceptor dropsLaterParts =
        new ExecutionInterceptor() {
          @Override
          public java.util.Optional<RequestBody> modifyHttpContent(
              Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
            if (context.request() instanceof UploadPartRequest part
                && part.partNumber() >= 2
                && context.requestBody().isPresent()) {
              RequestBody body = context.requestBody().get();
              return java.util.Optional.of(
                  RequestBody.fromContentProvider(
                      () -> {
                        cut.incrementAndGet();
                        return new BreaksOff(body.contentStreamProvider().newStream(), MB / 2);
                      },
                      body.optionalContentLength().orElseThrow(),
                      body.contentType()));
            }
            return context.requestBody();
          }
        };
    try (S3Client client = server.client(dropsLaterParts);
        S3UnderFileSystem cutting =
            new S3UnderFileSystem(
                client,
                S3Options.parse(
                    server.options(
                        S3Options.PART_SIZE, "5MB", S3Options.MULTIPART_THRESHOLD, "5MB")),
                new S3Errors(server.endpoint().toString()),
                S3Location.parse("s3://" + BUCKET))) {
      // The second part goes at close, which aborts the upload itself.
      UfsOutputStream atClose = cutting.create(uri("cut/obj"), true, 0644);
      atClose.write(randomBytes(7 * MB, 41));
      IOException closeFailed = assertThrows(IOException.class, atClose::close);
      assertTrue(closeFailed.getMessage().contains("part 2"), closeFailed.getMessage());
      assertArrayEquals(previous, rawGet("cut/obj"));
      assertTrue(uploadsUnder("cut/").isEmpty(), "the upload was aborted");

      // The second part goes with a write; the writer aborts, as a worker does.
      UfsOutputStream atWrite = cutting.create(uri("cut/obj"), true, 0644);
      assertThrows(IOException.class, () -> atWrite.write(randomBytes(12 * MB, 42)));
      atWrite.abort();
      assertArrayEquals(previous, rawGet("cut/obj"));
      assertTrue(uploadsUnder("cut/").isEmpty(), "the upload was aborted");
    }
    assertTrue(cut.get() >= 2, "the parts' bodies were cut off " + cut.get() + " times");
    List<String> keys = new ArrayList<>();
    server
        .raw()
        .listObjectsV2(b -> b.bucket(BUCKET).prefix("cut/"))
        .contents()
        .forEach(o -> keys.add(o.key()));
    assertEquals(List.of("cut/obj"), keys, "no partial object beside the previous one");
    assertArrayEquals(previous, readWhole("cut/obj", previous.length));
  }

  /** A body that fails after {@code limit} bytes, as a connection dropped mid-upload does. */
  static final class BreaksOff extends java.io.FilterInputStream {
    private long left;

    BreaksOff(java.io.InputStream in, long limit) {
      super(in);
      this.left = limit;
    }

    @Override
    public int read() throws IOException {
      if (left-- <= 0) {
        throw new java.net.SocketException("Connection reset (cut off by the test)");
      }
      return super.read();
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (left <= 0) {
        throw new java.net.SocketException("Connection reset (cut off by the test)");
      }
      int n = super.read(b, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
      }
      return n;
    }
  }

  private byte[] readWhole(String key, int length) throws IOException {
    byte[] back = new byte[length];
    int at = 0;
    for (int i = 0; i < 100 && at < length; i++) {
      int n = ufs.read(uri(key), at, back, at, length - at);
      assertTrue(n > 0);
      at += n;
    }
    return back;
  }

  @Test
  void createRefusesAnExistingKeyUnlessOverwriting() throws Exception {
    server.raw().putObject(b -> b.bucket(BUCKET).key("exists/x"), RequestBody.fromString("old"));
    String before = ufs.getStatus(uri("exists/x")).fingerprint();
    FileAlreadyExistsException e =
        assertThrows(FileAlreadyExistsException.class, () -> ufs.create(uri("exists/x"), false, 0));
    assertEquals(uri("exists/x"), e.getFile());
    try (UfsOutputStream out = ufs.create(uri("exists/x"), true, 0)) {
      out.write("new!".getBytes(UTF_8));
    }
    assertArrayEquals("new!".getBytes(UTF_8), rawGet("exists/x"));
    assertFalse(
        before.equals(ufs.getStatus(uri("exists/x")).fingerprint()),
        "the fingerprint changes with the content");

    UfsOutputStream late = ufs.create(uri("exists/raced"), false, 0);
    late.write(1);
    server
        .raw()
        .putObject(b -> b.bucket(BUCKET).key("exists/raced"), RequestBody.fromString("first"));
    assertThrows(
        FileAlreadyExistsException.class,
        late::close,
        "a key that appeared after create is not replaced");
    assertArrayEquals("first".getBytes(UTF_8), rawGet("exists/raced"));
  }

  @Test
  void staleUploadCleanupAbortsOldUploadsUnderThePrefixOnly() throws Exception {
    String stale =
        server.raw().createMultipartUpload(b -> b.bucket(BUCKET).key("stale/x")).uploadId();
    server
        .raw()
        .uploadPart(
            b -> b.bucket(BUCKET).key("stale/x").uploadId(stale).partNumber(1),
            RequestBody.fromBytes(new byte[1000]));
    String other =
        server.raw().createMultipartUpload(b -> b.bucket(BUCKET).key("kept/y")).uploadId();
    try (S3UnderFileSystem cleaning =
        (S3UnderFileSystem)
            new S3UnderFileSystemProvider()
                .open("s3://" + BUCKET + "/stale", server.options(S3Options.CLEANUP_AGE, "1ms"))) {
      assertEquals(1, cleaning.staleUploadCleanup().get());
    }
    assertTrue(uploadsUnder("stale/").isEmpty(), "the stale upload is aborted");
    assertEquals(1, uploadsUnder("kept/").size(), "an upload outside the prefix is kept");
    server.raw().abortMultipartUpload(b -> b.bucket(BUCKET).key("kept/y").uploadId(other));

    String later =
        server.raw().createMultipartUpload(b -> b.bucket(BUCKET).key("stale/z")).uploadId();
    try (S3UnderFileSystem again =
        (S3UnderFileSystem)
            new S3UnderFileSystemProvider()
                .open("s3://" + BUCKET + "/stale", server.options(S3Options.CLEANUP_AGE, "1ms"))) {
      assertEquals(0, again.staleUploadCleanup().get(), "the cleanup runs once per process");
    }
    assertEquals(1, uploadsUnder("stale/").size());
    server.raw().abortMultipartUpload(b -> b.bucket(BUCKET).key("stale/z").uploadId(later));

    try (S3UnderFileSystem off =
        (S3UnderFileSystem)
            new S3UnderFileSystemProvider()
                .open("s3://" + BUCKET + "/off", server.options(S3Options.CLEANUP_AGE, "0"))) {
      assertEquals(0, off.staleUploadCleanup().get(), "age 0 turns the cleanup off");
    }
  }
}
