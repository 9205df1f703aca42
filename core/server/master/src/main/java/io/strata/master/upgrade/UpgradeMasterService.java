package io.strata.master.upgrade;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.strata.common.LayoutFeature;
import io.strata.common.Version;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.common.rpc.VersionHeaders;
import io.strata.master.journal.JournalSystem;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.FinalizeUpgradeRequest;
import io.strata.proto.FinalizeUpgradeResponse;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.QuorumPeer;
import io.strata.proto.UpgradeMasterGrpc;
import io.strata.server.common.RpcCalls;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code strata fsadmin upgrade finalize}: switches the cluster to this release's metadata layout
 * once every master of the group runs a release that reads it. The switch is one journal entry, so
 * every master applies it at the same index; a master that cannot be asked, or that runs an older
 * release, is named and nothing changes.
 */
public final class UpgradeMasterService extends UpgradeMasterGrpc.UpgradeMasterImplBase {
  private static final Logger LOG = LoggerFactory.getLogger(UpgradeMasterService.class);

  private final JournalSystem journal;
  private final RpcCalls calls;

  public UpgradeMasterService(JournalSystem journal, RpcCalls calls) {
    this.journal = journal;
    this.calls = calls;
  }

  @Override
  public void finalizeUpgrade(
      FinalizeUpgradeRequest request, StreamObserver<FinalizeUpgradeResponse> observer) {
    calls.unary("FinalizeUpgrade", observer, this::finalizeLayout);
  }

  private FinalizeUpgradeResponse finalizeLayout() throws Exception {
    int from = journal.store().layoutVersion();
    int to = Version.LAYOUT_VERSION;
    FinalizeUpgradeResponse.Builder answer =
        FinalizeUpgradeResponse.newBuilder()
            .setPreviousLayoutVersion(from)
            .setLayoutVersion(Math.max(from, to));
    if (from >= to) {
      return answer.build();
    }
    List<String> laggards = new ArrayList<>();
    for (QuorumPeer peer : journal.membership().view().peers()) {
      String address = peer.getAddress();
      if (address.equals(journal.selfAddress())) {
        continue;
      }
      String lag = lagging(address, to);
      if (lag != null) {
        laggards.add(lag);
      }
    }
    if (!laggards.isEmpty()) {
      throw new StrataException(
          ErrorCode.FAILED_PRECONDITION,
          "Cannot finalize metadata layout "
              + to
              + ": "
              + String.join("; ", laggards)
              + ". Upgrade every master to release "
              + Version.RELEASE
              + " (docs/rolling-upgrade.md), then run finalize again; the cluster "
              + "stays at layout "
              + from
              + " meanwhile.");
    }
    journal.write(List.of(ClusterLayout.finalizeEntry(to)));
    List<LayoutFeature> enabled = ClusterLayout.featuresBetween(from, to);
    LOG.info("Finalized metadata layout {} (was {}): enabled {}", to, from, enabled);
    for (LayoutFeature f : enabled) {
      answer.addEnabledFeatures(f.description());
    }
    return answer.build();
  }

  /** Why the master at {@code address} cannot read layout {@code layout}, or null if it can. */
  private static String lagging(String address, int layout) {
    ManagedChannel channel =
        NettyChannelBuilder.forTarget(address)
            .usePlaintext()
            .intercept(VersionHeaders.clientInterceptor())
            .build();
    try {
      GetMasterInfoResponse info =
          FileSystemMasterGrpc.newBlockingStub(channel)
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
      if (info.getJournalFormatVersion() < layout) {
        return "the master at "
            + address
            + " runs release "
            + info.getRelease()
            + ", which reads metadata layouts up to "
            + info.getJournalFormatVersion();
      }
      return null;
    } catch (StatusRuntimeException e) {
      return "the master at "
          + address
          + " did not answer ("
          + e.getStatus().getCode()
          + ": "
          + e.getStatus().getDescription()
          + ")";
    } finally {
      channel.shutdownNow();
    }
  }
}
