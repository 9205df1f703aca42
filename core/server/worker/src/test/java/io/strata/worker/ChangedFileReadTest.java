package io.strata.worker;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockIds;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ranges of a block that is not cached, asked for with the fingerprint the file had when the client
 * opened it, after the file was rewritten in its under store: the worker never sends a byte of the
 * new version as if it were the old one.
 */
class ChangedFileReadTest {
  private static final int LENGTH = 1 << 20;
  private static final long BLOCK_ID = BlockIds.blockId(7, 0);

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private Path file;
  private final LocalUnderFileSystem local = new LocalUnderFileSystem();

  @BeforeEach
  void setUp() throws Exception {
    master = new FakeMaster();
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), Map.of()));
    worker.start();
    file = dir.resolve("ufs/data.bin");
    Files.createDirectories(file.getParent());
    Files.write(file, content(1, LENGTH));
  }

  @AfterEach
  void tearDown() throws Exception {
    RewritingUnderFileSystem.onRead = null;
    worker.close();
    master.close();
  }

  private static byte[] content(int seed, int length) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) seed);
    return b;
  }

  private String fingerprint() throws IOException {
    return local.getStatus("file://" + file).fingerprint();
  }

  /** A request that does not cache the block, so only the transfer reads the file. */
  private static ReadBlockRequest request(
      String uri, String fingerprint, long offset, long length) {
    UfsBlockSource source =
        UfsBlockSource.newBuilder()
            .setUfsPath(uri)
            .setMountId(0)
            .setBlockStart(0)
            .setBlockLength(LENGTH)
            .setUfsFingerprint(fingerprint)
            .build();
    return ReadBlockRequest.newBuilder()
        .setBlockId(BLOCK_ID)
        .setOffset(offset)
        .setLength(length)
        .setSource(source)
        .setSkipCache(true)
        .build();
  }

  /** Rewrites the file with other bytes and another length, as another program would. */
  private void rewrite() {
    try {
      Files.write(file, content(2, LENGTH + 10));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void rangeOfAFileRewrittenSinceItWasOpenedGetsChangedAndNoBytes() throws Exception {
    String uri = "file://" + file;
    String old = fingerprint();
    rewrite();
    String now = fingerprint();
    try (DataClient client = new DataClient(worker.dataPort())) {
      // Several chunks and a single one: both are refused before any byte goes out.
      for (long length : new long[] {300_000, 1000}) {
        DataClient.Reply reply = client.read(request(uri, old, 4096, length));
        assertEquals(ReadStatus.READ_CHANGED, reply.response().getStatus());
        assertEquals(0, reply.response().getLength());
        assertEquals(0, reply.data().length);
        assertEquals(now, reply.response().getUfsFingerprint());
        assertEquals(
            uri
                + " changed in its under store since it was opened (fingerprint "
                + old
                + ", now "
                + now
                + "); open it again to read the new version",
            reply.response().getMessage());
      }
      // The channel stays usable, and a request made for the new version gets its bytes.
      DataClient.Reply fresh = client.read(request(uri, now, 4096, 1000));
      assertEquals(ReadStatus.READ_OK, fresh.response().getStatus());
      assertArrayEquals(content(2, 1000), fresh.data());
    }
    assertFalse(worker.blockStore().contains(BLOCK_ID));
  }

  @Test
  void rewriteDuringTheTransferClosesTheChannelBeforeTheWholeRangeIsSent() throws Exception {
    String uri = "rewriting://" + file;
    String old = fingerprint();
    // The chunk size is 64 KiB: the rewrite lands before the third chunk is read.
    RewritingUnderFileSystem.hookPosition = 128 << 10;
    RewritingUnderFileSystem.onRead = this::rewrite;
    try (DataClient client = new DataClient(worker.dataPort())) {
      client.send(request(uri, old, 0, 512 << 10));
      EOFException e = assertThrows(EOFException.class, client::receive);
      assertTrue(e.getMessage().contains("of " + (512 << 10) + " bytes"), e.getMessage());
    }
    assertNull(RewritingUnderFileSystem.onRead, "the file was not rewritten mid-transfer");
    // Another channel asking with the old fingerprint now gets the status.
    try (DataClient client = new DataClient(worker.dataPort())) {
      assertEquals(
          ReadStatus.READ_CHANGED, client.read(request(uri, old, 0, 100)).response().getStatus());
    }
  }

  @Test
  void sourceWithoutFingerprintIsNotChecked() throws Exception {
    String uri = "file://" + file;
    rewrite();
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply reply = client.read(request(uri, "", 0, 1000));
      assertEquals(ReadStatus.READ_OK, reply.response().getStatus());
      assertArrayEquals(content(2, 1000), reply.data());
    }
  }
}
