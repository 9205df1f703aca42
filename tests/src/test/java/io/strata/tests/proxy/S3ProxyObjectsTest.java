package io.strata.tests.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.PutObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Object;

/** The S3 proxy with the AWS SDK for Java v2 against a cluster of separate processes. */
class S3ProxyObjectsTest {
  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.start(dir.resolve("cluster"), Map.of(), List.of());
    s3 = cluster.client();
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void putGetHeadListAndDeleteRoundTripWithTheUnderStore() throws Exception {
    s3.createBucket(b -> b.bucket("basics"));
    byte[] data = new byte[300_000];
    new Random(1).nextBytes(data);
    PutObjectResponse put = s3.putObject(b -> b.bucket("basics").key("dir/a b+c.bin")
        .contentType("application/x-test").metadata(Map.of("colour", "blue")),
        RequestBody.fromBytes(data));
    ResponseBytes<GetObjectResponse> got = s3.getObjectAsBytes(b -> b.bucket("basics")
        .key("dir/a b+c.bin"));
    assertArrayEquals(data, got.asByteArray());
    assertEquals(put.eTag(), got.response().eTag());
    assertEquals("application/x-test", got.response().contentType());
    assertEquals("blue", got.response().metadata().get("colour"));
    // The object is a file of the under store, byte for byte.
    assertArrayEquals(data, Files.readAllBytes(cluster.cluster.underStoreRoot()
        .resolve("basics/dir/a b+c.bin")));

    HeadObjectResponse head = s3.headObject(b -> b.bucket("basics").key("dir/a b+c.bin"));
    assertEquals(data.length, head.contentLength());

    byte[] range = s3.getObjectAsBytes(b -> b.bucket("basics").key("dir/a b+c.bin")
        .range("bytes=100-199")).asByteArray();
    assertArrayEquals(java.util.Arrays.copyOfRange(data, 100, 200), range);

    ListObjectsV2Response list = s3.listObjectsV2(b -> b.bucket("basics"));
    assertEquals(List.of("dir/a b+c.bin"), list.contents().stream().map(S3Object::key).toList());

    s3.deleteObject(b -> b.bucket("basics").key("dir/a b+c.bin"));
    assertThrows(NoSuchKeyException.class, () -> s3.headObject(b -> b.bucket("basics")
        .key("dir/a b+c.bin")));
    s3.deleteBucket(b -> b.bucket("basics"));
    assertTrue(!Files.exists(cluster.cluster.underStoreRoot().resolve("basics")));
  }
}
