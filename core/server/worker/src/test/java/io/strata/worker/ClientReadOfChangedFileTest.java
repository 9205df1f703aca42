package io.strata.worker;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.client.TestMaster;
import io.strata.common.BlockIds;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real client reading through a real worker a file rewritten in its under store after the
 * stream was opened: the block the worker cached before serves the old bytes, a range the worker
 * must read from the under store fails with the "changed" error naming the path.
 */
class ClientReadOfChangedFileTest {
  private static final int BLOCK = 1 << 20;

  @TempDir Path dir;

  private FakeMaster workerMaster;
  private WorkerServer worker;
  private TestMaster master;
  private Server masterServer;
  private FileSystem client;
  private Path file;
  private byte[] content;

  @BeforeEach
  void setUp() throws Exception {
    workerMaster = new FakeMaster();
    worker = new WorkerServer(TestWorkers.config(dir, workerMaster.port(), Map.of()));
    worker.start();
    Files.createDirectories(dir.resolve("ufs"));
    master = new TestMaster("file://" + dir.resolve("ufs"));
    masterServer =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(master)
            .build()
            .start();
    master.workers =
        List.of(
            WorkerInfo.newBuilder()
                .setWorkerId(1)
                .setState(WorkerState.WORKER_LIVE)
                .setAddress(worker.address())
                .build());
    client =
        FileSystem.connect(
            StrataConfig.load(
                Map.of(
                    "strata.conf.dir",
                    dir.resolve("conf").toString(),
                    "strata.master.hostname",
                    "127.0.0.1",
                    "strata.master.rpc.port",
                    Integer.toString(masterServer.getPort()),
                    "strata.client.short.circuit.enabled",
                    "false")));
    file = dir.resolve("ufs/train.bin");
    content = new byte[2 * BLOCK + 100];
    new Random(5).nextBytes(content);
    Files.write(file, content);
  }

  @AfterEach
  void tearDown() throws Exception {
    client.close();
    masterServer.shutdownNow().awaitTermination();
    worker.close();
    workerMaster.close();
  }

  /** The file as the master records it after a metadata load: with its fingerprint. */
  private FileInfo addFile() throws Exception {
    String uri = "file://" + file;
    FileInfo f =
        master.addFile("/train.bin", content.length, BLOCK, uri).toBuilder()
            .setUfsFingerprint(new LocalUnderFileSystem().getStatus(uri).fingerprint())
            .build();
    master.put(f);
    return f;
  }

  @Test
  void uncachedRangeOfAFileRewrittenSinceOpenFailsNamingThePath() throws Exception {
    FileInfo f = addFile();
    long firstBlock = BlockIds.blockId(f.getFileId(), 0);
    try (FileInStream in = client.openFile("/train.bin")) {
      byte[] buf = new byte[1000];
      in.readFully(100, buf, 0, buf.length);
      assertArrayEquals(Arrays.copyOfRange(content, 100, 1100), buf);
      await("the first block to be cached after the miss")
          .atMost(FakeMaster.WAIT)
          .pollInterval(FakeMaster.POLL)
          .until(() -> worker.blockStore().contains(firstBlock));

      byte[] rewritten = new byte[content.length + 10];
      new Random(6).nextBytes(rewritten);
      Files.write(file, rewritten);
      String now = new LocalUnderFileSystem().getStatus("file://" + file).fingerprint();

      // The cached block is the version the stream was opened on.
      in.readFully(5000, buf, 0, buf.length);
      assertArrayEquals(Arrays.copyOfRange(content, 5000, 6000), buf);
      // The second block is not cached: the worker would have to read the new version.
      StrataException e =
          assertThrows(StrataException.class, () -> in.readFully(BLOCK + 10, buf, 0, buf.length));
      assertEquals(ErrorCode.STALE, e.code());
      assertEquals(
          "/train.bin changed in its under store since it was opened (fingerprint "
              + f.getUfsFingerprint()
              + ", now "
              + now
              + "); open it again to read the new version",
          e.getMessage());
    }
  }
}
