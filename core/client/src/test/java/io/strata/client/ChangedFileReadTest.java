package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.strata.common.BlockIds;
import io.strata.common.WorkerHashing;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A stream opened on a file that is then rewritten in its under store: ranges not cached fail with
 * an error naming the path, from every source, and are never completed with the bytes of another
 * version.
 */
class ChangedFileReadTest {
  private static final int BLOCK = 256 << 10;

  @TempDir Path dir;
  private TestCluster cluster;

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  /** Rewrites the under-store file of {@code f} with other bytes and length; its fingerprint. */
  private static String rewrite(FileInfo f) throws Exception {
    Path local = Path.of(f.getUfsPath().substring("file://".length()));
    Files.write(local, TestCluster.randomBytes((int) f.getLength() + 7, 99));
    return new LocalUnderFileSystem().getStatus(f.getUfsPath()).fingerprint();
  }

  private static String changedMessage(FileInfo f, String now) {
    return f.getPath()
        + " changed in its under store since it was opened (fingerprint "
        + f.getUfsFingerprint()
        + ", now "
        + now
        + "); open it again to read the new version";
  }

  @Test
  void directUnderStoreReadOfAFileRewrittenSinceOpenFailsNamingThePath() throws Exception {
    cluster = new TestCluster(dir, 0);
    byte[] content = TestCluster.randomBytes(2 * BLOCK, 1);
    FileInfo f = cluster.addFile("/data/train.bin", content, BLOCK);
    FileSystem fs = cluster.client();
    try (FileInStream in = fs.openFile("/data/train.bin")) {
      byte[] buf = new byte[1000];
      in.readFully(10, buf, 0, buf.length);
      assertArrayEquals(Arrays.copyOfRange(content, 10, 1010), buf);

      String now = rewrite(f);
      StrataException e =
          assertThrows(StrataException.class, () -> in.readFully(BLOCK + 5, buf, 0, buf.length));
      assertEquals(ErrorCode.STALE, e.code());
      assertEquals(changedMessage(f, now), e.getMessage());
    }
  }

  @Test
  void workerAnsweringChangedFailsTheReadWithoutAskingAnotherSource() throws Exception {
    cluster = new TestCluster(dir, 2);
    FileInfo f = cluster.addFile("/f", TestCluster.randomBytes(BLOCK, 2), BLOCK);
    List<TestWorker> order =
        WorkerHashing.rank(BlockIds.blockId(f.getFileId(), 0), cluster.workers, w -> w.id);
    String now = rewrite(f);
    order.get(0).changedTo = now;
    FileSystem fs = cluster.client();
    try (FileInStream in = fs.openFile("/f")) {
      StrataException e =
          assertThrows(StrataException.class, () -> in.readFully(0, new byte[100], 0, 100));
      assertEquals(ErrorCode.STALE, e.code());
      assertEquals(changedMessage(f, now), e.getMessage());
    }
    assertEquals(1, order.get(0).requests.size());
    assertEquals(0, order.get(1).requests.size(), "a changed file must not be retried");
  }

  @Test
  void workerClosingMidTransferAfterARewriteFailsTheReadInsteadOfCompletingIt() throws Exception {
    cluster = new TestCluster(dir, 2);
    FileInfo f = cluster.addFile("/f", TestCluster.randomBytes(BLOCK, 3), BLOCK);
    List<TestWorker> order =
        WorkerHashing.rank(BlockIds.blockId(f.getFileId(), 0), cluster.workers, w -> w.id);
    // As a worker does when it finds the file changed after the reply header went out: part
    // of the range, then a closed channel. The other worker would serve the old bytes.
    order.get(0).closeAfterBytes.set(100_000);
    String now = rewrite(f);
    FileSystem fs = cluster.client();
    try (FileInStream in = fs.openFile("/f")) {
      StrataException e =
          assertThrows(StrataException.class, () -> in.readFully(0, new byte[BLOCK], 0, BLOCK));
      assertEquals(ErrorCode.STALE, e.code());
      assertEquals(changedMessage(f, now), e.getMessage());
    }
    assertEquals(0, order.get(1).requests.size(), "the rest must not come from another worker");
  }
}
