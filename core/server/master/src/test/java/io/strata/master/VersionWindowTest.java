package io.strata.master;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.strata.common.Version;
import io.strata.common.rpc.VersionHeaders;
import io.strata.proto.ConnectedClient;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FinalizeUpgradeRequest;
import io.strata.proto.FinalizeUpgradeResponse;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.UpgradeMasterGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master serves callers of its own RPC protocol and the one before, refuses others with a message
 * naming both versions and what to upgrade, reports its versions and the processes connected to it,
 * and a new namespace starts at this release's metadata layout.
 */
class VersionWindowTest {
  @TempDir Path home;

  private static Metadata headers(String protocol, String release, String kind) {
    Metadata h = new Metadata();
    h.put(VersionHeaders.PROTOCOL, protocol);
    h.put(VersionHeaders.RELEASE, release);
    h.put(VersionHeaders.KIND, kind);
    return h;
  }

  private static GetMasterInfoResponse info(ManagedChannel channel, Metadata headers) {
    return FileSystemMasterGrpc.newBlockingStub(
            ClientInterceptors.intercept(
                channel, MetadataUtils.newAttachHeadersInterceptor(headers)))
        .getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
  }

  @Test
  void callersOutsideTheProtocolWindowAreRefusedWithWhatToUpgrade() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      int current = Version.PROTOCOL_VERSION;
      // Unversioned (release 0.1.0), the previous and the current protocol are served.
      assertEquals(
          Version.RELEASE,
          m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getRelease());
      info(m.channel, headers(Integer.toString(current - 1), "0.1.0", "fuse"));
      info(m.channel, headers(Integer.toString(current), Version.RELEASE, "proxy"));

      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "Upgrade the servers first",
          () -> info(m.channel, headers(Integer.toString(current + 1), "9.0.0", "fuse")));
      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "runs release 9.0.0 (protocol " + (current + 1) + ")",
          () -> info(m.channel, headers(Integer.toString(current + 1), "9.0.0", "fuse")));
      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "protocols " + Version.OLDEST_SERVED_PROTOCOL_VERSION + " to " + current,
          () -> info(m.channel, headers(Integer.toString(current - 2), "0.0.1", "client")));
      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "Upgrade this client",
          () -> info(m.channel, headers(Integer.toString(current - 2), "0.0.1", "client")));
      TestMaster.assertFails(
          Status.Code.FAILED_PRECONDITION,
          "protocol unreadable",
          () -> info(m.channel, headers("two", "0.0.1", "client")));
    }
  }

  @Test
  void aMasterReportsItsVersionsAndTheProcessesConnectedToIt() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      ManagedChannel fuse =
          NettyChannelBuilder.forAddress("127.0.0.1", m.server.rpcPort()).usePlaintext().build();
      try {
        GetMasterInfoResponse seen =
            info(
                fuse, headers(Integer.toString(Version.PROTOCOL_VERSION), Version.RELEASE, "fuse"));
        assertEquals(Version.PROTOCOL_VERSION, seen.getProtocolVersion());
        assertEquals(Version.LAYOUT_VERSION, seen.getJournalFormatVersion());
        assertEquals(
            Version.LAYOUT_VERSION,
            seen.getLayoutVersion(),
            "a new namespace starts at this release's layout");
        assertTrue(seen.getLeader());
        GetMasterInfoResponse again = m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
        List<ConnectedClient> clients = again.getClientsList();
        assertTrue(
            clients.stream()
                .anyMatch(
                    c ->
                        c.getKind().equals("fuse")
                            && c.getRelease().equals(Version.RELEASE)
                            && c.getProtocolVersion() == Version.PROTOCOL_VERSION),
            clients.toString());
        assertTrue(
            clients.stream()
                .anyMatch(
                    c ->
                        c.getRelease().equals(VersionHeaders.UNVERSIONED_RELEASE)
                            && c.getProtocolVersion() == 1),
            "a caller without headers shows as the release before versions: " + clients);
      } finally {
        fuse.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
      // The connection's end takes its process off the list.
      List<ConnectedClient> left =
          await("the fuse client to leave the list")
              .atMost(Duration.ofSeconds(10))
              .pollInterval(Duration.ofMillis(50))
              .until(
                  () ->
                      m.fs
                          .getMasterInfo(GetMasterInfoRequest.getDefaultInstance())
                          .getClientsList(),
                  l -> l.stream().noneMatch(c -> c.getKind().equals("fuse")));
      assertTrue(left.stream().noneMatch(c -> c.getKind().equals("fuse")), left.toString());

      FinalizeUpgradeResponse done =
          UpgradeMasterGrpc.newBlockingStub(m.channel)
              .finalizeUpgrade(FinalizeUpgradeRequest.getDefaultInstance());
      assertEquals(
          Version.LAYOUT_VERSION,
          done.getPreviousLayoutVersion(),
          "nothing to finalize on a new namespace");
      assertEquals(Version.LAYOUT_VERSION, done.getLayoutVersion());
      assertEquals(0, done.getEnabledFeaturesCount());
    }
  }
}
