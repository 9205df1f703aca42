package io.strata.shell.admin;

import io.strata.client.FileSystem;
import io.strata.client.master.MasterClient;
import io.strata.common.LayoutFeature;
import io.strata.common.Version;
import io.strata.common.error.StrataException;
import io.strata.common.rpc.VersionHeaders;
import io.strata.proto.ConnectedClient;
import io.strata.proto.FileInfo;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where a rolling upgrade stands, from the masters' own answers: each master's release, protocol
 * and the newest metadata layout it reads (asked directly, so a follower counts too), the cluster's
 * finalized layout, the workers' and clients' releases, and the recorded pre-upgrade point. Works
 * against masters of the previous release, which answer the same calls with fewer fields: a field
 * they leave at 0 is read as their protocol's and layout's first version.
 */
final class UpgradeSurvey {
  /** One master; {@code error} says why it gave no answer. */
  record MasterRow(
      String address, String role, String release, int protocol, int maxLayout, String error) {}

  /** One worker. */
  record WorkerRow(String host, String state, String release, int protocol) {}

  final List<MasterRow> masters = new ArrayList<>();
  final List<WorkerRow> workers = new ArrayList<>();
  final List<ConnectedClient> clients = new ArrayList<>();

  /** The leader's answer, or null when none leads. */
  GetMasterInfoResponse leader;

  /** The recorded pre-upgrade point, or null. */
  String prepared;

  static UpgradeSurvey take(MasterClient master, FileSystem fs) throws StrataException {
    UpgradeSurvey s = new UpgradeSurvey();
    GetQuorumInfoResponse quorum =
        master.callJournal(q -> q.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()));
    Set<String> addresses = new LinkedHashSet<>(master.addresses().all());
    for (QuorumPeer p : quorum.getPeersList()) {
      if (!p.getAddress().isEmpty()) {
        addresses.add(p.getAddress());
      }
    }
    // A one-master configuration may name the master by another spelling than it uses itself.
    if (addresses.size() > 1 && quorum.getPeersCount() == 1) {
      addresses.retainAll(Set.of(quorum.getPeers(0).getAddress()));
      if (addresses.isEmpty()) {
        addresses.add(master.addresses().all().get(0));
      }
    }
    for (String address : addresses) {
      try {
        GetMasterInfoResponse info =
            master.callFileSystemAt(
                address, m -> m.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()));
        boolean leads =
            address.equals(quorum.getLeaderAddress())
                || (quorum.getPeersCount() == 1 && addresses.size() == 1);
        if (leads) {
          s.leader = info;
        }
        s.masters.add(
            new MasterRow(
                address,
                leads ? "leader" : "follower",
                info.getRelease(),
                protocolOf(info),
                Math.max(Version.FIRST_LAYOUT_VERSION, info.getJournalFormatVersion()),
                null));
      } catch (StrataException e) {
        s.masters.add(new MasterRow(address, "unreachable", "-", 0, 0, e.getMessage()));
      }
    }
    for (WorkerInfo w : fs.getWorkers()) {
      s.workers.add(
          new WorkerRow(
              w.getAddress().getHost() + ":" + w.getAddress().getRpcPort(),
              w.getState() == WorkerState.WORKER_DRAINING
                  ? "draining"
                  : w.getState() == WorkerState.WORKER_LIVE ? "live" : "lost",
              w.getRelease().isEmpty() ? "-" : w.getRelease(),
              w.getProtocolVersion() == 0
                  ? VersionHeaders.UNVERSIONED_PROTOCOL
                  : w.getProtocolVersion()));
    }
    if (s.leader != null) {
      for (ConnectedClient c : s.leader.getClientsList()) {
        // Workers are listed above; this command's own calls are not a process to upgrade.
        if (!c.getKind().equals("worker") && !c.getKind().equals("shell")) {
          s.clients.add(c);
        }
      }
    }
    FileInfo root = fs.getStatus("/");
    if (root.containsXattrs(UpgradeCommand.PREPARED_XATTR)) {
      s.prepared =
          root.getXattrsOrThrow(UpgradeCommand.PREPARED_XATTR).toString(StandardCharsets.UTF_8);
    }
    return s;
  }

  /** The cluster's finalized layout as a master reports it (release 0.1.0 reports none). */
  static int layoutOf(GetMasterInfoResponse info) {
    return info.getLayoutVersion() == 0 ? Version.FIRST_LAYOUT_VERSION : info.getLayoutVersion();
  }

  private static int protocolOf(GetMasterInfoResponse info) {
    return info.getProtocolVersion() == 0
        ? VersionHeaders.UNVERSIONED_PROTOCOL
        : info.getProtocolVersion();
  }

  /** The cluster's finalized layout, or 0 when no master leads. */
  int clusterLayout() {
    return leader == null ? 0 : layoutOf(leader);
  }

  /** The masters that keep finalize from switching to {@code layout}, each with its reason. */
  List<String> laggards(int layout) {
    List<String> out = new ArrayList<>();
    for (MasterRow m : masters) {
      if (m.error() != null) {
        out.add(m.address() + " (unreachable)");
      } else if (m.maxLayout() < layout) {
        out.add(
            m.address()
                + " (release "
                + m.release()
                + ", reads layouts up to "
                + m.maxLayout()
                + ")");
      }
    }
    return out;
  }

  /** What switching from the cluster's layout to {@code layout} would enable. */
  List<LayoutFeature> wouldEnable(int layout) {
    List<LayoutFeature> out = new ArrayList<>();
    for (LayoutFeature f : LayoutFeature.values()) {
      if (f.version() > clusterLayout() && f.version() <= layout) {
        out.add(f);
      }
    }
    return out;
  }

  /** Every release the masters, workers and clients run. */
  Set<String> releases() {
    Set<String> out = new TreeSet<>();
    masters.stream().filter(m -> m.error() == null).forEach(m -> out.add(m.release()));
    workers.stream().filter(w -> !w.state().equals("lost")).forEach(w -> out.add(w.release()));
    clients.forEach(c -> out.add(c.getRelease()));
    return out;
  }
}
