package io.strata.master;

import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.strata.common.rpc.MasterHeaders;
import io.strata.master.journal.JournalSystem;
import java.util.Set;

/**
 * Lets only the leading master serve: on any other master a call fails with UNAVAILABLE, a message
 * naming the leader and the {@code strata-leader} trailer holding its gRPC address, which clients
 * follow. UNAVAILABLE is what clients retry, and it is true: nothing was done. A few calls are
 * served by every master (what a master is and what it knows of the group).
 */
final class LeaderGate implements ServerInterceptor {
  private static final Set<String> ANY_MASTER =
      Set.of("strata.JournalMaster/GetQuorumInfo", "strata.FileSystemMaster/GetMasterInfo");

  private final JournalSystem journal;

  LeaderGate(JournalSystem journal) {
    this.journal = journal;
  }

  @Override
  public <Q, A> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, A> call, Metadata headers, ServerCallHandler<Q, A> next) {
    if (journal.isLeader() || ANY_MASTER.contains(call.getMethodDescriptor().getFullMethodName())) {
      return next.startCall(call, headers);
    }
    Metadata trailers = new Metadata();
    String leader = journal.leaderAddress();
    if (leader != null && !leader.equals(journal.selfAddress())) {
      trailers.put(MasterHeaders.LEADER, leader);
    }
    call.close(Status.UNAVAILABLE.withDescription(journal.notLeader().getMessage()), trailers);
    return new ServerCall.Listener<>() {};
  }
}
