package io.strata.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.SetAttributeRequest;
import io.strata.proto.TtlAction;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Owner and group on create, and setAttribute, through {@link FileSystem} over gRPC. */
class AttributeCallsTest {
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
  void setAttributeSendsOnlyWhatIsGiven() throws Exception {
    cluster.addFile("/d/f", new byte[10], 1 << 20);
    FileInfo chmod = fs.setAttribute("/d//f/", SetAttributeOptions.defaults().mode(0600));
    assertEquals(0600, chmod.getMode());
    assertEquals("alice", chmod.getOwner());
    SetAttributeRequest sent = cluster.master.attributeRequests.get(0);
    assertEquals("/d/f", sent.getPath());
    assertTrue(sent.hasMode());
    assertFalse(sent.hasOwner() || sent.hasGroup() || sent.hasModificationTimeMs());

    FileInfo all =
        fs.setAttribute(
            "/d/f",
            SetAttributeOptions.defaults()
                .mode(0)
                .owner("bob")
                .group("ml")
                .modificationTimeMs(1_600_000_000_000L));
    sent = cluster.master.attributeRequests.get(1);
    assertTrue(
        sent.hasMode() && sent.hasOwner() && sent.hasGroup() && sent.hasModificationTimeMs());
    assertEquals(0, sent.getMode(), "mode 0 is sent as set, not as absent");
    assertEquals(0, all.getMode());
    assertEquals("bob", all.getOwner());
    assertEquals("ml", all.getGroup());
    assertEquals(1_600_000_000_000L, all.getModificationTimeMs());
    assertEquals(all, fs.getStatus("/d/f"));

    StrataException missing =
        assertThrows(
            StrataException.class,
            () -> fs.setAttribute("/nope", SetAttributeOptions.defaults().owner("bob")));
    assertEquals(ErrorCode.NOT_FOUND, missing.code());
    assertTrue(missing.getMessage().contains("/nope"), missing.getMessage());
  }

  @Test
  void optionsRefuseWhatTheMasterWouldRefuse() {
    SetAttributeOptions none = SetAttributeOptions.defaults();
    assertTrue(none.isEmpty());
    assertThrows(IllegalArgumentException.class, () -> none.mode(010000));
    assertThrows(IllegalArgumentException.class, () -> none.mode(-1));
    assertThrows(IllegalArgumentException.class, () -> none.owner(""));
    assertThrows(IllegalArgumentException.class, () -> none.group(null));
    SetAttributeOptions some = none.mode(07777).group("ml");
    assertEquals(07777, some.mode().getAsInt());
    assertEquals("ml", some.group().orElseThrow());
    assertTrue(some.owner().isEmpty() && some.modificationTimeMs().isEmpty());
    assertTrue(none.isEmpty(), "setters return copies");
  }

  @Test
  void ttlIsSentWithItsActionAndRemovedWithZero() throws Exception {
    cluster.addFile("/t", new byte[1], 1 << 20);
    FileInfo set =
        fs.setAttribute(
            "/t",
            SetAttributeOptions.defaults()
                .ttl(Duration.ofMinutes(90), TtlAction.TTL_ACTION_DELETE));
    SetAttributeRequest sent = cluster.master.attributeRequests.get(0);
    assertTrue(sent.hasTtlMs());
    assertEquals(5_400_000, sent.getTtlMs());
    assertEquals(TtlAction.TTL_ACTION_DELETE, sent.getTtlAction());
    assertFalse(sent.hasMode() || sent.hasOwner() || sent.hasModificationTimeMs());
    assertEquals(5_400_000, set.getTtlMs());

    fs.setAttribute("/t", SetAttributeOptions.defaults().noTtl());
    SetAttributeRequest removed = cluster.master.attributeRequests.get(1);
    assertTrue(removed.hasTtlMs(), "0 is sent as set: it removes the time to live");
    assertEquals(0, removed.getTtlMs());
    assertEquals(0, fs.getStatus("/t").getTtlMs());

    fs.setAttribute("/t", SetAttributeOptions.defaults().mode(0600));
    assertFalse(cluster.master.attributeRequests.get(2).hasTtlMs(), "left as it is");
    SetAttributeOptions none = SetAttributeOptions.defaults();
    assertThrows(
        IllegalArgumentException.class, () -> none.ttl(Duration.ZERO, TtlAction.TTL_ACTION_FREE));
    assertThrows(IllegalArgumentException.class, () -> none.ttl(Duration.ofSeconds(1), null));
    assertFalse(none.noTtl().isEmpty());
  }

  @Test
  void createCallsCarryOwnerAndGroup() throws Exception {
    fs.createDirectory("/plain", false, false);
    fs.createDirectory("/mine/deep", true, false, 0700, "bob", "ml");
    CreateDirectoryRequest plain = cluster.master.mkdirRequests.get(0);
    assertEquals(0, plain.getMode());
    assertEquals("", plain.getOwner());
    assertEquals("", plain.getGroup());
    CreateDirectoryRequest mine = cluster.master.mkdirRequests.get(1);
    assertEquals(0700, mine.getMode());
    assertEquals("bob", mine.getOwner());
    assertEquals("ml", mine.getGroup());
    assertTrue(mine.getRecursive());

    try (FileOutStream out =
        fs.createFile("/mine/f", CreateOptions.defaults().owner("carol").group("ops"))) {
      out.write(new byte[3]);
    }
    try (FileOutStream out = fs.createFile("/mine/g")) {
      out.write(new byte[1]);
    }
    CreateFileRequest carol = cluster.master.createRequests.get(0);
    assertEquals("carol", carol.getOwner());
    assertEquals("ops", carol.getGroup());
    CreateFileRequest defaults = cluster.master.createRequests.get(1);
    assertEquals("", defaults.getOwner());
    assertEquals("", defaults.getGroup());
    assertThrows(IllegalArgumentException.class, () -> CreateOptions.defaults().owner(null));
  }

  @Test
  void anOlderMasterIsReportedAsOlder() throws Exception {
    // A master of an earlier release: the same service without the SetAttribute method.
    ServerServiceDefinition full = new TestMaster("file://" + dir).bindService();
    ServerServiceDefinition.Builder older =
        ServerServiceDefinition.builder(full.getServiceDescriptor().getName());
    for (ServerMethodDefinition<?, ?> m : full.getMethods()) {
      if (!m.getMethodDescriptor().getBareMethodName().equals("SetAttribute")) {
        older.addMethod(m);
      }
    }
    Server server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(older.build())
            .build()
            .start();
    Map<String, String> c = cluster.conf();
    c.put("strata.master.rpc.port", Integer.toString(server.getPort()));
    try (FileSystem old = FileSystem.connect(StrataConfig.load(c))) {
      assertTrue(old.getStatus("/").getDirectory(), "the older master answers other calls");
      StrataException e =
          assertThrows(
              StrataException.class,
              () -> old.setAttribute("/", SetAttributeOptions.defaults().mode(0755)));
      assertEquals(ErrorCode.UNIMPLEMENTED, e.code());
      assertTrue(
          e.getMessage().contains("older than this client")
              && e.getMessage().contains("upgrade the master"),
          e.getMessage());
    } finally {
      server.shutdownNow().awaitTermination();
    }
  }
}
