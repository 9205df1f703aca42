package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.CompleteFileRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileOutStreamTest {
  @TempDir Path dir;
  private TestCluster cluster;

  @BeforeEach
  void setUp() throws Exception {
    cluster = new TestCluster(dir, 1);
  }

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  @Test
  void writeStreamsChunksAndCompletesTheFile() throws Exception {
    FileSystem fs = cluster.client("strata.client.write.chunk.size", "64KB");
    byte[] content = TestCluster.randomBytes(3 * 65536 + 8199, 21);
    try (FileOutStream out =
        fs.createFile("/out/a.bin", CreateOptions.defaults().recursive(true).mode(0600))) {
      int pos = 0;
      int step = 1;
      while (pos < content.length) {
        int n = Math.min(step, content.length - pos);
        out.write(content, pos, n);
        pos += n;
        step = step * 3 + 1;
      }
      out.write(new byte[0]);
    }
    TestWorker worker = cluster.workers.get(0);
    assertEquals(List.of(65536, 65536, 65536, 8199), worker.chunkSizes);
    assertEquals(0600, worker.lastHeader.getMode());
    String ufsPath = "file://" + dir.resolve("ufs") + "/out/a.bin";
    assertEquals(ufsPath, worker.lastHeader.getUfsPath());
    assertEquals(1, cluster.master.completed.size());
    CompleteFileRequest done = cluster.master.completed.get(0);
    assertEquals("/out/a.bin", done.getPath());
    assertEquals(content.length, done.getLength());
    assertEquals(content.length + ":written", done.getUfsFingerprint());
    // The writer names its own file, so it can never complete another writer's at that path.
    assertNotEquals(0, done.getFileId());
    assertEquals(fs.getStatus("/out/a.bin").getFileId(), done.getFileId());
    assertArrayEquals(content, Files.readAllBytes(dir.resolve("ufs/out/a.bin")));
    assertEquals(content.length, fs.metrics().writtenBytes());

    try (FileInStream in = fs.openFile("/out/a.bin")) {
      byte[] back = new byte[content.length];
      in.readFully(0, back, 0, back.length);
      assertArrayEquals(content, back);
    }
  }

  /**
   * A master that does not keep files in the cache only (a release before ASYNC_THROUGH: it answers
   * the create without the persistence state) gets them written through: the entry it made is
   * deleted, the bytes land in the under store, and the next new files skip the attempt.
   */
  @Test
  void cacheOnlyFilesAreWrittenThroughWhenTheMasterDoesNotKeepThem() throws Exception {
    FileSystem fs = cluster.client("strata.user.file.write.type", "ASYNC_THROUGH");
    fs.createDirectory("/async", false, false);
    byte[] content = TestCluster.randomBytes(5000, 31);
    for (String name : new String[] {"a.bin", "b.bin"}) {
      try (FileOutStream out = fs.writeNewFile("/async/" + name, CreateOptions.defaults())) {
        out.write(content);
      }
      assertArrayEquals(content, Files.readAllBytes(dir.resolve("ufs/async/" + name)));
    }
    assertEquals(
        List.of("/async/a.bin"),
        cluster.master.deleted,
        "only the first file's cache-only entry was made, and then deleted");
  }

  @Test
  void failingWriteCancelsTheStreamAndDeletesTheFile() throws Exception {
    cluster.workers.get(0).failAfterChunks = 2;
    FileSystem fs = cluster.client("strata.client.write.chunk.size", "64KB");
    byte[] block = new byte[65536];
    StrataException e =
        assertThrows(
            StrataException.class,
            () -> {
              try (FileOutStream out = fs.createFile("/fail.bin")) {
                for (int i = 0; i < 64; i++) {
                  out.write(block);
                }
              }
            });
    assertTrue(e.getMessage().contains("/fail.bin"), e.getMessage());
    assertTrue(e.getMessage().contains("disk full"), e.getMessage());
    assertEquals(List.of("/fail.bin"), cluster.master.deleted);
    assertFalse(cluster.master.has("/fail.bin"));
    assertFalse(Files.exists(dir.resolve("ufs/fail.bin")));
    assertTrue(cluster.master.completed.isEmpty());
  }

  @Test
  void cancelDiscardsThePartialFile() throws Exception {
    FileSystem fs = cluster.client("strata.client.write.chunk.size", "1KB");
    FileOutStream out = fs.createFile("/cancelled.bin");
    out.write(new byte[5000]);
    out.cancel();
    assertTrue(cluster.workers.get(0).writeCancelled.await(30, TimeUnit.SECONDS));
    assertEquals(List.of("/cancelled.bin"), cluster.master.deleted);
    assertFalse(Files.exists(dir.resolve("ufs/cancelled.bin")));
    StrataException closed = assertThrows(StrataException.class, () -> out.write(1));
    assertEquals(ErrorCode.FAILED_PRECONDITION, closed.code());
  }

  @Test
  void createWithoutLiveWorkersFailsAndCreatesNothing() throws Exception {
    cluster.master.workers = List.of();
    FileSystem fs = cluster.client();
    StrataException e = assertThrows(StrataException.class, () -> fs.createFile("/x"));
    assertEquals(ErrorCode.UNAVAILABLE, e.code());
    assertEquals("No live workers: start one with `strata worker start`", e.getMessage());
    assertFalse(cluster.master.has("/x"));
  }
}
