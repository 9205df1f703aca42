package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.BlockIds;
import io.strata.proto.ReadBlockRequest;
import io.strata.proto.ReadBlockResponse;
import io.strata.proto.ReadStatus;
import io.strata.proto.UfsBlockSource;
import io.strata.worker.block.BlockMeta;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reads over the real data channel of an in-JVM worker, from a file:// under store. */
class WorkerReadTest {
  private static final long BLOCK_SIZE = 2L << 20;

  @TempDir Path dir;

  private FakeMaster master;
  private WorkerServer worker;
  private Path ufsFile;
  private byte[] content;

  @BeforeEach
  void setUp() throws Exception {
    master = new FakeMaster();
    worker = new WorkerServer(TestWorkers.config(dir, master.port(), Map.of()));
    worker.start();
    Files.createDirectories(dir.resolve("ufs"));
    ufsFile = dir.resolve("ufs/data.bin");
    content = new byte[(int) (BLOCK_SIZE + (1 << 20) + 100)];
    for (int i = 0; i < content.length; i++) {
      content[i] = (byte) (i * 7 + i / 4096);
    }
    Files.write(ufsFile, content);
  }

  @AfterEach
  void tearDown() throws Exception {
    worker.close();
    master.close();
  }

  /** The second block of the file: 1 MiB + 100 bytes starting at 2 MiB. */
  private UfsBlockSource secondBlock() {
    return UfsBlockSource.newBuilder()
        .setUfsPath("file://" + ufsFile)
        .setMountId(0)
        .setBlockStart(BLOCK_SIZE)
        .setBlockLength(content.length - BLOCK_SIZE)
        .build();
  }

  private static final long BLOCK_ID = BlockIds.blockId(42, 1);

  private ReadBlockRequest request(long offset, long length) {
    return ReadBlockRequest.newBuilder()
        .setBlockId(BLOCK_ID)
        .setOffset(offset)
        .setLength(length)
        .setSource(secondBlock())
        .build();
  }

  private byte[] expected(long offset, long length) {
    int from = (int) (BLOCK_SIZE + offset);
    return Arrays.copyOfRange(content, from, from + (int) length);
  }

  private double counter(String name) {
    return worker.meterRegistry().get(name).functionCounter().count();
  }

  @Test
  void missIsServedFromUnderStoreThenTheSameReadIsACacheHit() throws Exception {
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply miss = client.read(request(1000, 500_000));
      assertEquals(ReadStatus.READ_OK, miss.response().getStatus());
      assertFalse(miss.response().getFromCache());
      assertArrayEquals(expected(1000, 500_000), miss.data());

      await("the block to be cached after a miss")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(BLOCK_ID));
      BlockMeta cached = worker.blockStore().get(BLOCK_ID);
      assertEquals(content.length - BLOCK_SIZE, cached.length());
      assertArrayEquals(expected(0, cached.length()), Files.readAllBytes(cached.path()));

      DataClient.Reply hit = client.read(request(1000, 500_000));
      assertEquals(ReadStatus.READ_OK, hit.response().getStatus());
      assertTrue(hit.response().getFromCache());
      assertArrayEquals(expected(1000, 500_000), hit.data());
      // The whole block, to its last byte, from the cache.
      DataClient.Reply whole = client.read(request(0, cached.length()));
      assertArrayEquals(expected(0, cached.length()), whole.data());
    }
    assertEquals(1.0, counter("strata.worker.cache.misses"));
    assertEquals(2.0, counter("strata.worker.cache.hits"));
    assertEquals(500_000.0, counter("strata.worker.read.ufs"));
    // The worker counts a read's bytes once it has sent them, which can follow the client's
    // receipt of the last one: a bounded wait, not a timing assertion.
    double cachedBytes = 500_000.0 + content.length - BLOCK_SIZE;
    await("the worker to count the cached bytes sent")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> counter("strata.worker.read.cache") == cachedBytes);
    assertEquals(cachedBytes, counter("strata.worker.read.cache"));
    await("the finished read to unpin its block")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().pinCount(BLOCK_ID) == 0);
  }

  /**
   * Asked for checksums, a read answered from the copy of a miss and reads of the cached block
   * carry one CRC32C per piece of the range (cut at the checksum chunks), which match the bytes
   * sent; not asked, none.
   */
  @Test
  void readsAskingForChecksumsGetOnePerPieceMatchingTheBytes() throws Exception {
    int chunk = io.strata.common.BlockChecksums.CHUNK;
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply first =
          client.read(request(0, 3 * chunk + 10).toBuilder().setWantChecksums(true).build());
      assertArrayEquals(expected(0, 3 * chunk + 10), first.data());
      assertPiecesMatch(first, 0);
      await("the block to be cached")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(BLOCK_ID));
      long blockLength = content.length - BLOCK_SIZE;
      long[][] ranges = {
        {0, blockLength}, {chunk, 2L * chunk}, {chunk - 7, 20}, {100, 1000}, {blockLength - 10, 10}
      };
      for (long[] r : ranges) {
        DataClient.Reply hit =
            client.read(request(r[0], r[1]).toBuilder().setWantChecksums(true).build());
        assertTrue(hit.response().getFromCache());
        assertArrayEquals(expected(r[0], r[1]), hit.data());
        assertPiecesMatch(hit, r[0]);
      }
      DataClient.Reply plain = client.read(request(100, 1000));
      assertEquals(0, plain.response().getPieceChecksumsCount());
    }
  }

  private static void assertPiecesMatch(DataClient.Reply reply, long offset) {
    ReadBlockResponse r = reply.response();
    assertEquals(io.strata.common.BlockChecksums.CHUNK, r.getChecksumChunkSize());
    long end = offset + reply.data().length;
    long pieces = (end - 1) / r.getChecksumChunkSize() - offset / r.getChecksumChunkSize() + 1;
    assertEquals(pieces, r.getPieceChecksumsCount(), "one checksum per piece");
    assertEquals(
        -1,
        io.strata.common.BlockChecksums.firstBadPiece(
            reply.data(),
            0,
            offset,
            reply.data().length,
            r.getChecksumChunkSize(),
            r.getPieceChecksumsList()));
  }

  @Test
  void shortCircuitReturnsThePathOfTheCachedBlock() throws Exception {
    ReadBlockRequest shortCircuit = request(4096, 10_000).toBuilder().setShortCircuit(true).build();
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply notCached = client.read(shortCircuit);
      assertEquals(ReadStatus.READ_NOT_CACHED, notCached.response().getStatus());
      assertEquals(0, notCached.data().length);

      client.read(request(0, 10));
      await("the block to be cached after a miss")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(BLOCK_ID));
      DataClient.Reply reply = client.read(shortCircuit);
      assertEquals(ReadStatus.READ_OK, reply.response().getStatus());
      assertEquals(0, reply.response().getLength());
      assertEquals(content.length - BLOCK_SIZE, reply.response().getBlockLength());
      Path local = Path.of(reply.response().getLocalPath());
      assertTrue(local.isAbsolute());
      byte[] read = new byte[10_000];
      try (RandomAccessFile f = new RandomAccessFile(local.toFile(), "r")) {
        f.seek(4096);
        f.readFully(read);
      }
      assertArrayEquals(expected(4096, 10_000), read);
      // The channel still serves ordinary reads after a short-circuit answer.
      assertArrayEquals(expected(7, 3), client.read(request(7, 3)).data());
    }
  }

  @Test
  void badRangeGetsInvalidAndTheChannelServesTheNextRequest() throws Exception {
    long blockLength = content.length - BLOCK_SIZE;
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply bad = client.read(request(blockLength - 10, 11));
      assertEquals(ReadStatus.READ_INVALID, bad.response().getStatus());
      assertTrue(
          bad.response().getMessage().contains(Long.toString(BLOCK_ID)),
          bad.response().getMessage());
      assertTrue(
          bad.response().getMessage().contains(ufsFile.toString()), bad.response().getMessage());
      assertEquals(ReadStatus.READ_INVALID, client.read(request(-1, 5)).response().getStatus());

      assertArrayEquals(
          expected(blockLength - 10, 10), client.read(request(blockLength - 10, 10)).data());
      await("the block to be cached after a miss")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(BLOCK_ID));
      assertEquals(
          ReadStatus.READ_INVALID, client.read(request(blockLength, 1)).response().getStatus());
      DataClient.Reply good = client.read(request(blockLength - 10, 10));
      assertTrue(good.response().getFromCache());
      assertArrayEquals(expected(blockLength - 10, 10), good.data());
    }
  }

  @Test
  void missingUnderStoreFileGetsNotFoundNamingIt() throws Exception {
    UfsBlockSource gone =
        secondBlock().toBuilder().setUfsPath("file://" + dir.resolve("ufs/gone.bin")).build();
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply reply =
          client.read(
              ReadBlockRequest.newBuilder()
                  .setBlockId(77)
                  .setOffset(0)
                  .setLength(100)
                  .setSource(gone)
                  .build());
      assertEquals(ReadStatus.READ_NOT_FOUND, reply.response().getStatus());
      assertTrue(reply.response().getMessage().contains("gone.bin"), reply.response().getMessage());
      assertArrayEquals(expected(0, 100), client.read(request(0, 100)).data());
    }
  }

  @Test
  void requestsSentBackToBackAreAnsweredInOrder() throws Exception {
    try (DataClient client = new DataClient(worker.dataPort())) {
      long[][] ranges = {{0, 300_000}, {5, 1}, {600_000, 400_000}, {1 << 20, 100}};
      for (long[] r : ranges) {
        client.send(request(r[0], r[1]));
      }
      for (long[] r : ranges) {
        DataClient.Reply reply = client.receive();
        assertEquals(ReadStatus.READ_OK, reply.response().getStatus());
        assertArrayEquals(expected(r[0], r[1]), reply.data());
      }
    }
  }

  @Test
  void closingTheChannelMidTransferUnpinsTheBlock() throws Exception {
    try (DataClient client = new DataClient(worker.dataPort())) {
      client.read(request(0, 1));
    }
    await("the block to be cached after a miss")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().contains(BLOCK_ID));
    try (DataClient client = new DataClient(worker.dataPort())) {
      client.send(request(0, content.length - BLOCK_SIZE));
    }
    await("the closed channel to unpin its block")
        .atMost(FakeMaster.WAIT)
        .pollInterval(FakeMaster.POLL)
        .until(() -> worker.blockStore().pinCount(BLOCK_ID) == 0);
    try (DataClient client = new DataClient(worker.dataPort())) {
      assertArrayEquals(expected(100, 1000), client.read(request(100, 1000)).data());
    }
  }

  @Test
  void requestWithoutSourceForAnUncachedBlockIsInvalid() throws IOException {
    try (DataClient client = new DataClient(worker.dataPort())) {
      DataClient.Reply reply =
          client.read(
              ReadBlockRequest.newBuilder().setBlockId(5).setOffset(0).setLength(1).build());
      assertEquals(ReadStatus.READ_INVALID, reply.response().getStatus());
      assertTrue(reply.response().getMessage().contains("Block 5"));
    }
  }

  @Test
  void anOversizedRequestFrameClosesOnlyThatChannel() throws Exception {
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", worker.dataPort())) {
      socket.setSoTimeout(10_000);
      // A varint32 length prefix of about 200 MiB, far past the request frame limit.
      socket
          .getOutputStream()
          .write(new byte[] {(byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x64});
      socket.getOutputStream().flush();
      assertEquals(-1, socket.getInputStream().read(), "the worker should close the channel");
    }
    try (DataClient client = new DataClient(worker.dataPort())) {
      assertArrayEquals(expected(0, 10), client.read(request(0, 10)).data());
    }
  }
}
