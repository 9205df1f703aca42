package io.strata.underfs.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsStatus;
import java.io.ByteArrayOutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.UploadPartCopyRequest;

/**
 * Concatenation in S3 against a real server (S3Proxy): objects are joined on the server by a
 * multipart upload of copied parts, and copied through the store only where S3's part rules forbid
 * that. The store under test copies at most 10 MiB a part, so that splitting a source into several
 * ranges shows with small objects.
 */
class S3ConcatTest {
  static final String BUCKET = "joins";
  static final int MB = 1 << 20;

  @TempDir static Path data;
  static S3TestServer server;
  static S3UnderFileSystem ufs;

  /** Requests of the store under test, by SDK request class name. */
  static final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();

  /** A part number whose UploadPartCopy fails, or 0. */
  static volatile int failPart;

  @BeforeAll
  static void start() throws Exception {
    server = new S3TestServer(data);
    server.createBucket(BUCKET);
    ExecutionInterceptor counter =
        new ExecutionInterceptor() {
          @Override
          public void beforeExecution(
              Context.BeforeExecution context, ExecutionAttributes attributes) {
            SdkRequest r = context.request();
            requests
                .computeIfAbsent(r.getClass().getSimpleName(), k -> new AtomicInteger())
                .incrementAndGet();
            if (r instanceof UploadPartCopyRequest copy && copy.partNumber() == failPart) {
              throw new IllegalStateException("injected failure of part " + failPart);
            }
          }
        };
    S3Client client = server.client(counter);
    ufs =
        new S3UnderFileSystem(
            client,
            S3Options.parse(server.options()),
            new S3Errors(server.endpoint().toString()),
            S3Location.parse("s3://" + BUCKET),
            10L * MB);
  }

  @AfterAll
  static void stop() throws Exception {
    ufs.close();
    server.close();
  }

  @BeforeEach
  void reset() {
    requests.clear();
    failPart = 0;
  }

  static int count(String requestClass) {
    AtomicInteger n = requests.get(requestClass);
    return n == null ? 0 : n.get();
  }

  static String uri(String key) {
    return "s3://" + BUCKET + "/" + key;
  }

  static byte[] put(String key, int length) {
    byte[] b = S3ReadWriteTest.randomBytes(length, key.hashCode());
    server.raw().putObject(r -> r.bucket(BUCKET).key(key), RequestBody.fromBytes(b));
    return b;
  }

  static byte[] get(String key) {
    return server.raw().getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray();
  }

  static boolean exists(String key) {
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

  static int uploadsInProgress() {
    return server.raw().listMultipartUploads(b -> b.bucket(BUCKET)).uploads().size();
  }

  static byte[] joined(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      all.writeBytes(p);
    }
    return all.toByteArray();
  }

  @Test
  void theServerJoinsTheSourcesFromCopiedPartsWithoutTheirBytesPassingThroughTheStore()
      throws Exception {
    byte[] a = put("server/parts/1", 6 * MB);
    byte[] empty = put("server/parts/2", 0);
    byte[] c = put("server/parts/3", 12 * MB + 3);
    byte[] d = put("server/parts/4", 1000);
    List<String> sources =
        List.of(
            uri("server/parts/1"),
            uri("server/parts/2"),
            uri("server/parts/3"),
            uri("server/parts/4"));

    UfsStatus s = ufs.concat(sources, uri("server/object"), false, 0);

    assertArrayEquals(joined(a, empty, c, d), get("server/object"));
    assertEquals(ufs.getStatus(uri("server/object")), s);
    assertEquals(a.length + c.length + d.length, s.length());
    // 6 MiB in one part, 12 MiB in two ranges of 6 MiB (under the 10 MiB limit), 1000 bytes.
    assertTrue(
        s.fingerprint().endsWith("-4"), "an object of four copied parts: " + s.fingerprint());
    assertEquals(4, count("UploadPartCopyRequest"));
    assertEquals(
        0,
        count("GetObjectRequest") + count("UploadPartRequest") + count("PutObjectRequest"),
        "bytes passed through the store: " + requests);
    assertArrayEquals(a, get("server/parts/1"), "the sources stay");
    assertArrayEquals(c, get("server/parts/3"));
    assertEquals(0, uploadsInProgress());
  }

  @Test
  void aSmallSourceBeforeTheLastIsCopiedThroughTheStore() throws Exception {
    byte[] small = put("small/parts/1", 1000);
    byte[] big = put("small/parts/2", 6 * MB);
    UfsStatus s =
        ufs.concat(
            List.of(uri("small/parts/1"), uri("small/parts/2")), uri("small/object"), false, 0);
    assertArrayEquals(joined(small, big), get("small/object"));
    assertEquals(small.length + big.length, s.length());
    assertEquals(0, count("UploadPartCopyRequest"));
    assertTrue(count("GetObjectRequest") > 0, "read through the store: " + requests);
    assertEquals(0, uploadsInProgress());
  }

  @Test
  void aFailedCopyAbortsTheUploadAndLeavesTheTargetAsItWas() throws Exception {
    put("fail/parts/1", 6 * MB);
    put("fail/parts/2", 6 * MB);
    byte[] old = put("fail/object", 10);
    List<String> sources = List.of(uri("fail/parts/1"), uri("fail/parts/2"));
    failPart = 2;
    assertThrows(RuntimeException.class, () -> ufs.concat(sources, uri("fail/object"), true, 0));
    assertArrayEquals(old, get("fail/object"));
    assertEquals(0, uploadsInProgress(), "the failed upload was not aborted");

    failPart = 0;
    assertThrows(
        FileAlreadyExistsException.class, () -> ufs.concat(sources, uri("fail/object"), false, 0));
    NoSuchFileException missing =
        assertThrows(
            NoSuchFileException.class,
            () ->
                ufs.concat(
                    List.of(uri("fail/parts/1"), uri("fail/parts/gone")),
                    uri("fail/other"),
                    false,
                    0));
    assertEquals(uri("fail/parts/gone"), missing.getFile());
    assertFalse(exists("fail/other"));
    assertEquals(0, uploadsInProgress());
  }

  @Test
  void whetherSizesCanBeJoinedFollowsTheMinimumPartAndThePartCount() {
    S3Copier copier = new S3Copier(null, null, 5L * MB, 5L << 30);
    long min = S3Copier.MIN_PART_SIZE;
    assertTrue(copier.canJoin(List.of(min, min, 1L)));
    assertTrue(copier.canJoin(List.of(min, 0L, 1L, 0L)), "empty sources are skipped");
    assertFalse(copier.canJoin(List.of(min, min - 1, 1L)));
    assertFalse(copier.canJoin(List.of(0L, 0L)), "nothing to copy a part of");
    List<Long> many = new ArrayList<>();
    for (int i = 0; i < 10_001; i++) {
      many.add(min);
    }
    assertFalse(copier.canJoin(many), "more parts than S3 takes");
    assertTrue(copier.canJoin(many.subList(0, 10_000)));
    assertFalse(copier.canJoin(List.of(5L << 30, 5L << 30, 1L, 1L)));
    assertTrue(copier.canJoin(List.of((5L << 30) + 1, 1L)), "a large source is split");
  }
}
