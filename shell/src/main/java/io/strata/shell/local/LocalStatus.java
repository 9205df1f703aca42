package io.strata.shell.local;

import io.strata.client.master.MasterClient;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.CommonKeys;
import io.strata.common.error.StrataException;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import io.strata.shell.ShellContext;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The master lines of {@code strata local status} for several masters: each one's pid, gRPC address
 * and role in the journal's group, as that master says (a master that runs but does not answer
 * within two seconds, a paused one say, shows as "not answering").
 */
final class LocalStatus {
  private LocalStatus() {}

  /** Finds a role's running process from its pid file. */
  interface Processes {
    Optional<ProcessHandle> running(LocalCluster.Role role) throws IOException;
  }

  static void printMasters(ShellContext ctx, LocalMasters masters, Processes processes)
      throws IOException {
    try (MasterClient client =
        new MasterClient(
            ctx.conf()
                .with(
                    Map.of(
                        CommonKeys.MASTER_ADDRESSES.name(),
                        String.join(",", masters.addresses()),
                        ClientKeys.RPC_TIMEOUT.name(),
                        "2s")))) {
      for (LocalMasters.Member m : masters.members()) {
        Optional<ProcessHandle> h = processes.running(m.role());
        ctx.out()
            .println(
                m.role().name()
                    + ": "
                    + (h.isPresent()
                        ? "running (pid "
                            + h.get().pid()
                            + "), "
                            + m.address()
                            + ", "
                            + role(client, m.address())
                        : "not running"));
      }
    }
  }

  private static String role(MasterClient client, String address) {
    GetQuorumInfoResponse r;
    try {
      r =
          client.callJournalAt(
              address, s -> s.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance()));
    } catch (StrataException e) {
      return "not answering";
    }
    for (QuorumPeer p : r.getPeersList()) {
      if (p.getAddress().equals(r.getAnsweredBy()) && !p.getRole().isEmpty()) {
        return p.getRole().toLowerCase(Locale.ROOT);
      }
    }
    return "unknown role";
  }
}
