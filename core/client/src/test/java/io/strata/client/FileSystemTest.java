package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.MountInfo;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSystemTest {
  @TempDir Path dir;
  private TestCluster cluster;
  private FileSystem fs;

  @BeforeEach
  void setUp() throws Exception {
    cluster = new TestCluster(dir, 1);
    fs = cluster.client();
  }

  @AfterEach
  void tearDown() throws Exception {
    cluster.close();
  }

  @Test
  void metadataCallsRoundTrip() throws Exception {
    FileInfo d = fs.createDirectory("/a/b", true, false);
    assertTrue(d.getDirectory());
    assertTrue(fs.exists("/a"));
    assertEquals("/a/b", fs.getStatus("/a/b").getPath());
    fs.createDirectory("/a/b", false, true);
    StrataException exists =
        assertThrows(StrataException.class, () -> fs.createDirectory("/a/b", false, false));
    assertEquals(ErrorCode.ALREADY_EXISTS, exists.code());

    fs.rename("/a/b", "/a/c");
    assertFalse(fs.exists("/a/b"));
    assertTrue(fs.exists("/a/c"));
    fs.delete("/a", true);
    assertFalse(fs.exists("/a"));

    MountInfo m = fs.mount("/data", "file:///tmp/x", Map.of("k", "v"), true);
    assertEquals("file:///tmp/x", m.getUfsUri());
    assertEquals(List.of("/", "/data"), fs.listMounts().stream().map(MountInfo::getPath).toList());
    fs.unmount("/data");
    assertEquals(1, fs.listMounts().size());

    assertEquals(42, fs.checkpoint());
    assertEquals("test", fs.masterInfo().release());
    assertEquals(1, fs.getWorkers().size());
    assertEquals(2, fs.free("/", true).blocks());
  }

  @Test
  void missingPathFailsWithNotFound() {
    StrataException e = assertThrows(StrataException.class, () -> fs.getStatus("/nope"));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
    assertEquals("Path does not exist: /nope", e.getMessage());
  }

  @Test
  void pathsAreNormalizedBeforeTheyLeave() throws Exception {
    fs.createDirectory("/x/y", true, false);
    assertEquals("/x/y", fs.getStatus("//x///y/").getPath());
    StrataException e = assertThrows(StrataException.class, () -> fs.getStatus("x/y"));
    assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
  }

  @Test
  void listingStreamsEveryChildInOrderAcrossPages() throws Exception {
    fs.createDirectory("/dir", false, false);
    List<String> expected = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      String name = String.format("f%03d", i);
      cluster.master.addFile("/dir/" + name, i, 1024, "file:///nowhere/" + name);
      expected.add(name);
    }
    List<String> names = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus("/dir")) {
      while (it.hasNext()) {
        names.add(it.next().getName());
      }
    }
    assertEquals(expected, names);
    assertEquals(3, cluster.master.pagesSent.get());
  }

  @Test
  void listingDoesNotPullTheWholeDirectory() throws Exception {
    int entries = 200_000;
    cluster.master.addSyntheticDirectory("/huge", entries);
    try (CloseableIterator<FileInfo> it = fs.listStatus("/huge")) {
      assertEquals(TestMaster.syntheticName(0), it.next().getName());
      assertEquals(TestMaster.syntheticName(1), it.next().getName());
    }
    // The master produces pages only as flow control lets it: a handful of megabytes, far
    // from the 2,000 pages of the whole directory.
    int sent = cluster.master.pagesSent.get();
    assertTrue(sent < entries / 100 / 2, "pages sent: " + sent);
  }

  @Test
  void listingOfAMissingDirectoryFailsAtOnce() {
    StrataException e = assertThrows(StrataException.class, () -> fs.listStatus("/gone"));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
  }

  @Test
  void unreachableMasterFailsWithHowToStartIt() throws Exception {
    int port = freePort();
    Map<String, String> conf = cluster.conf();
    conf.put("strata.master.rpc.port", Integer.toString(port));
    conf.put("strata.client.master.retry.max.duration", "1s");
    try (FileSystem lost = FileSystem.connect(StrataConfig.load(conf))) {
      StrataException e = assertThrows(StrataException.class, () -> lost.getStatus("/"));
      assertEquals(ErrorCode.UNAVAILABLE, e.code());
      assertEquals(
          "Cannot reach the Strata master at 127.0.0.1:"
              + port
              + " (tried for 1s)."
              + " Start it with `strata master start` or `strata local up`, or set"
              + " strata.master.hostname / strata.master.rpc.port (conf/strata-site.properties,"
              + " STRATA_MASTER_HOSTNAME, or -Dstrata.master.hostname)",
          e.getMessage());
    }
  }

  @Test
  void callsReachAMasterThatStartsDuringTheRetries() throws Exception {
    int port = freePort();
    Map<String, String> conf = cluster.conf();
    conf.put("strata.master.rpc.port", Integer.toString(port));
    conf.put("strata.client.master.retry.max.duration", "60s");
    AtomicReference<Server> late = new AtomicReference<>();
    Thread starter =
        new Thread(
            () -> {
              try {
                // The behaviour under test, not a wait: the master starts while the client retries.
                Thread.sleep(500);
                late.set(
                    NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                        .addService(new TestMaster("file:///late"))
                        .build()
                        .start());
              } catch (Exception e) {
                throw new RuntimeException(e);
              }
            });
    try (FileSystem waiting = FileSystem.connect(StrataConfig.load(conf))) {
      starter.start();
      assertEquals("/", waiting.getStatus("/").getPath());
    } finally {
      starter.join();
      if (late.get() != null) {
        late.get().shutdownNow().awaitTermination();
      }
    }
  }

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
