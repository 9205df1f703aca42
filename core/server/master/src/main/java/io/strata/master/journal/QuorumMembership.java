package io.strata.master.journal;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.QuorumPeer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.apache.ratis.proto.RaftProtos.CommitInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.server.RaftServer;

/**
 * The group of masters as this master sees and changes it: who is in it, who leads, how far each
 * has applied; moving the lead, adding and removing masters. Any master answers what it sees; only
 * the leader changes the members.
 */
public final class QuorumMembership {
  /** The group as this master sees it. */
  public record View(
      String groupId, long term, String leaderAddress, long commitIndex, List<QuorumPeer> peers) {}

  /** This master's side of the group: its server, its division, its address. */
  interface Self {
    RaftServer server();

    RaftServer.Division division() throws IOException;

    String address();

    String leaderAddress();

    StrataException notLeader();
  }

  private final Self self;
  private final ClientId localClient;
  private final AtomicLong callIds;
  private final BooleanSupplier leading;

  QuorumMembership(Self self, ClientId localClient, AtomicLong callIds, BooleanSupplier leading) {
    this.self = self;
    this.localClient = localClient;
    this.callIds = callIds;
    this.leading = leading;
  }

  public View view() throws IOException {
    RaftServer.Division d = self.division();
    RaftPeerId leader = d.getInfo().getLeaderId();
    long commit = d.getRaftLog().getLastCommittedIndex();
    List<QuorumPeer> peers = new ArrayList<>();
    Map<String, Long> known = new HashMap<>();
    for (CommitInfoProto c : d.getCommitInfos()) {
      known.put(c.getServer().getId().toStringUtf8(), c.getCommitIndex());
    }
    RaftPeerId me = self.server().getId();
    for (RaftPeer p : d.getRaftConf().getAllPeers()) {
      boolean isSelf = p.getId().equals(me);
      boolean isLeader = p.getId().equals(leader);
      long applied =
          isSelf
              ? d.getInfo().getLastAppliedIndex()
              : known.getOrDefault(p.getId().toString(), -1L);
      String role =
          isSelf
              ? d.getInfo().getCurrentRole().name()
              : isLeader
                  ? RaftPeerRole.LEADER.name()
                  : leader != null ? RaftPeerRole.FOLLOWER.name() : "UNKNOWN";
      String address =
          isSelf ? self.address() : p.getClientAddress() == null ? "" : p.getClientAddress();
      peers.add(
          QuorumPeer.newBuilder()
              .setAddress(address)
              .setJournalAddress(p.getAddress())
              .setLeader(isLeader)
              .setAppliedIndex(applied)
              .setLag(applied < 0 ? -1 : Math.max(0, commit - applied))
              .setRole(role)
              .build());
    }
    String leaderAddress = self.leaderAddress();
    return new View(
        RaftSettings.GROUP_ID.getUuid().toString(),
        d.getInfo().getCurrentTerm(),
        leaderAddress == null ? "" : leaderAddress,
        commit,
        peers);
  }

  /** Hands the lead to the master with that gRPC or journal address. */
  public void transferLeadership(String address) throws StrataException {
    transferLeadershipTo(peerIdOf(address), address);
  }

  /**
   * Hands the lead to another master, or (null) steps down and lets the group elect one.
   * FAILED_PRECONDITION when it did not move.
   */
  void transferLeadershipTo(RaftPeerId target, String what) throws StrataException {
    TransferLeadershipRequest request =
        new TransferLeadershipRequest(
            localClient,
            self.server().getId(),
            RaftSettings.GROUP_ID,
            callIds.incrementAndGet(),
            target,
            RaftReplies.TIMEOUT.toMillis());
    RaftClientReply reply =
        RaftReplies.await(
            () -> self.server().transferLeadershipAsync(request), "transfer leadership");
    if (!reply.isSuccess()) {
      // Not UNAVAILABLE: clients retry that, and the reason would be lost in their give-up.
      throw StrataException.failedPrecondition(
          "Leadership did not move to " + what + ": " + reply.getException().getMessage());
    }
  }

  /** The other members of the group, as Raft ids. */
  List<RaftPeerId> others() throws IOException {
    List<RaftPeerId> out = new ArrayList<>();
    for (RaftPeer p : self.division().getRaftConf().getCurrentPeers()) {
      if (!p.getId().equals(self.server().getId())) {
        out.add(p.getId());
      }
    }
    return out;
  }

  private RaftPeerId peerIdOf(String address) throws StrataException {
    try {
      for (RaftPeer p : self.division().getRaftConf().getAllPeers()) {
        if (address.equals(p.getAddress()) || address.equals(p.getClientAddress())) {
          return p.getId();
        }
      }
    } catch (IOException e) {
      throw StrataException.unavailable("The journal is not running: " + e.getMessage(), e);
    }
    throw StrataException.invalidArgument(
        "No master of the group has the address "
            + address
            + "; `strata fsadmin journal quorum info` lists them");
  }

  /** Adds a master (already started with the new address list) to the group. */
  public List<QuorumPeer> addPeer(String rpcAddress, String journalAddress) throws IOException {
    if (!leading.getAsBoolean()) {
      throw self.notLeader();
    }
    List<RaftPeer> peers = new ArrayList<>(self.division().getRaftConf().getCurrentPeers());
    for (RaftPeer p : peers) {
      if (p.getAddress().equals(journalAddress) || rpcAddress.equals(p.getClientAddress())) {
        throw new StrataException(
            ErrorCode.ALREADY_EXISTS,
            "The group already has a master at "
                + p.getClientAddress()
                + " (journal "
                + p.getAddress()
                + ")");
      }
    }
    peers.add(JournalSystem.peer(new QuorumAddresses.Member(rpcAddress, journalAddress)));
    setConfiguration(peers);
    return view().peers();
  }

  /** Removes a master from the group. */
  public List<QuorumPeer> removePeer(String address) throws IOException {
    if (!leading.getAsBoolean()) {
      throw self.notLeader();
    }
    RaftPeerId id = peerIdOf(address);
    List<RaftPeer> peers = new ArrayList<>();
    for (RaftPeer p : self.division().getRaftConf().getCurrentPeers()) {
      if (!p.getId().equals(id)) {
        peers.add(p);
      }
    }
    if (peers.isEmpty()) {
      throw StrataException.invalidArgument("Cannot remove the last master of the group");
    }
    setConfiguration(peers);
    return view().peers();
  }

  private void setConfiguration(List<RaftPeer> peers) throws StrataException {
    SetConfigurationRequest request =
        new SetConfigurationRequest(
            localClient,
            self.server().getId(),
            RaftSettings.GROUP_ID,
            callIds.incrementAndGet(),
            peers);
    RaftClientReply reply =
        RaftReplies.await(
            () -> self.server().setConfigurationAsync(request), "change the group's members");
    if (!reply.isSuccess()) {
      throw StrataException.failedPrecondition(
          "The group's members did not change: " + reply.getException().getMessage());
    }
  }
}
