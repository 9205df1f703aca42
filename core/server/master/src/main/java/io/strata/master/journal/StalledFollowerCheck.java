package io.strata.master.journal;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.JournalMasterGrpc;
import io.strata.proto.TransferLeadershipRequest;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.ratis.server.RaftServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gets a follower out of a state Raft leaves it in: a leader keeps what it learnt of each follower
 * (the entries it acknowledged) for as long as it leads, so a follower that lost them (its folder
 * was wiped, or it replaces a lost host) or that the leader's offers no longer fit is offered
 * entries it cannot take, indefinitely. Run every second on a follower of a group of several
 * masters: when this master has applied nothing new for a while (5 s with an empty journal, 10 s
 * otherwise) although the leader has committed more, it asks the leader to hand its lead to another
 * master, which starts afresh about this one and sends what it needs (its log, or its snapshot). At
 * most once every 30 s.
 */
final class StalledFollowerCheck {
  private static final Logger LOG = LoggerFactory.getLogger(StalledFollowerCheck.class);
  private static final long EMPTY_STALL_MS = 5_000;
  private static final long STALL_MS = 10_000;
  private static final long ASK_INTERVAL_MS = 30_000;

  private final QuorumAddresses quorum;
  private final Callable<RaftServer.Division> division;
  private final Supplier<String> leaderAddress;
  private long lastApplied = Long.MIN_VALUE;
  private long appliedSinceMs;
  private long askedMs;

  StalledFollowerCheck(
      QuorumAddresses quorum,
      Callable<RaftServer.Division> division,
      Supplier<String> leaderAddress) {
    this.quorum = quorum;
    this.division = division;
    this.leaderAddress = leaderAddress;
  }

  void check() {
    try {
      RaftServer.Division d = division.call();
      String leader = leaderAddress.get();
      long now = System.currentTimeMillis();
      long applied = d.getInfo().getLastAppliedIndex();
      if (leader == null || d.getInfo().isLeader() || applied != lastApplied) {
        lastApplied = applied;
        appliedSinceMs = now;
        return;
      }
      long stall = applied <= 0 ? EMPTY_STALL_MS : STALL_MS;
      if (now - appliedSinceMs < stall || now - askedMs < ASK_INTERVAL_MS) {
        return;
      }
      String other = null;
      for (QuorumAddresses.Member m : quorum.members()) {
        if (!m.rpcAddress().equals(leader) && !m.equals(quorum.self())) {
          other = m.rpcAddress();
        }
      }
      if (other == null) {
        return;
      }
      ManagedChannel channel =
          NettyChannelBuilder.forTarget(leader)
              .usePlaintext()
              .intercept(io.strata.common.rpc.VersionHeaders.clientInterceptor())
              .build();
      try {
        JournalMasterGrpc.JournalMasterBlockingStub stub =
            JournalMasterGrpc.newBlockingStub(channel);
        long committed =
            stub.withDeadlineAfter(5, TimeUnit.SECONDS)
                .getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance())
                .getCommitIndex();
        if (committed <= applied) {
          // Idle, not stalled: nothing was committed that this master lacks.
          appliedSinceMs = now;
          return;
        }
        askedMs = now;
        LOG.warn(
            "This master has applied nothing past index {} for {} s while the leader {} "
                + "committed up to {}; asking the leader to hand its lead to {} so that this master "
                + "is sent what it lacks",
            applied,
            (now - appliedSinceMs) / 1000,
            leader,
            committed,
            other);
        stub.withDeadlineAfter(30, TimeUnit.SECONDS)
            .transferLeadership(TransferLeadershipRequest.newBuilder().setAddress(other).build());
      } finally {
        channel.shutdownNow();
      }
    } catch (Exception e) {
      LOG.warn("Checking whether this master stalled behind the leader failed: {}", e.toString());
    }
  }
}
