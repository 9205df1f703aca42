package io.strata.shell.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the answers of several masters merge into one row each. */
class QuorumSurveyTest {
  private static final List<String> ADDRESSES = List.of("m1:19200", "m2:19200", "m3:19200");

  private static QuorumPeer peer(String address, String role, long applied) {
    return QuorumPeer.newBuilder()
        .setAddress(address)
        .setJournalAddress(address.replace("19200", "19202"))
        .setRole(role)
        .setLeader("LEADER".equals(role))
        .setAppliedIndex(applied)
        .setLag(-1)
        .build();
  }

  private static GetQuorumInfoResponse view(
      String self, String leader, long term, long commit, QuorumPeer... peers) {
    return GetQuorumInfoResponse.newBuilder()
        .setGroupId("g")
        .setTerm(term)
        .setLeaderAddress(leader)
        .setCommitIndex(commit)
        .setAnsweredBy(self)
        .addAllPeers(List.of(peers))
        .build();
  }

  @Test
  void eachRowIsWhatThatMasterSaysAndTheLagIsBehindTheLeader() {
    // m2 leads in term 3; m1 lags; m3 is down; the leader lists its peers in its own order.
    GetQuorumInfoResponse leader =
        view(
            "m2:19200",
            "m2:19200",
            3,
            100,
            peer("m3:19200", "FOLLOWER", -1),
            peer("m2:19200", "LEADER", 100),
            peer("m1:19200", "FOLLOWER", 90));
    GetQuorumInfoResponse lagging =
        view(
            "m1:19200",
            "m2:19200",
            3,
            95,
            peer("m1:19200", "FOLLOWER", 93),
            peer("m2:19200", "LEADER", -1),
            peer("m3:19200", "FOLLOWER", -1));
    QuorumSurvey s =
        new QuorumSurvey(
            List.of(
                new QuorumSurvey.Answer("m1:19200", lagging, null),
                new QuorumSurvey.Answer("m2:19200", leader, null),
                new QuorumSurvey.Answer("m3:19200", null, "UNAVAILABLE: io exception")),
            ADDRESSES,
            true);
    assertEquals(leader, s.leaderView());
    assertEquals(
        List.of(
            new QuorumSurvey.Row("m1:19200", "m1:19202", "follower", 93, 7),
            new QuorumSurvey.Row("m2:19200", "m2:19202", "leader", 100, 0),
            new QuorumSurvey.Row("m3:19200", "m3:19202", "unreachable", -1, -1)),
        s.rows());
    assertEquals(List.of("m3:19200 is unreachable: UNAVAILABLE: io exception"), s.notes());
  }

  @Test
  void anOldLeaderCutOffIsStaleAndWithoutALeaderThereIsNoLag() {
    GetQuorumInfoResponse newLeader =
        view(
            "m2:19200",
            "m2:19200",
            4,
            10,
            peer("m1:19200", "FOLLOWER", -1),
            peer("m2:19200", "LEADER", 10),
            peer("m3:19200", "FOLLOWER", 10));
    GetQuorumInfoResponse oldLeader =
        view(
            "m1:19200",
            "m1:19200",
            3,
            8,
            peer("m1:19200", "LEADER", 8),
            peer("m2:19200", "FOLLOWER", -1),
            peer("m3:19200", "FOLLOWER", -1));
    QuorumSurvey s =
        new QuorumSurvey(
            List.of(
                new QuorumSurvey.Answer("m1:19200", oldLeader, null),
                new QuorumSurvey.Answer("m2:19200", newLeader, null)),
            ADDRESSES,
            true);
    assertEquals("stale leader", s.rows().get(0).role());
    assertEquals(2, s.rows().get(0).lag());

    GetQuorumInfoResponse candidate =
        view(
            "m1:19200",
            "",
            5,
            10,
            peer("m1:19200", "CANDIDATE", 10),
            peer("m2:19200", "UNKNOWN", -1),
            peer("m3:19200", "UNKNOWN", -1));
    QuorumSurvey none =
        new QuorumSurvey(
            List.of(new QuorumSurvey.Answer("m1:19200", candidate, null)), ADDRESSES, true);
    assertNull(none.leaderView());
    assertEquals(
        new QuorumSurvey.Row("m1:19200", "m1:19202", "candidate", 10, -1), none.rows().get(0));
  }

  @Test
  void membersAndListedMastersThatDoNotMatchAreNoted() {
    GetQuorumInfoResponse leader =
        view(
            "m1:19200",
            "m1:19200",
            1,
            5,
            peer("m1:19200", "LEADER", 5),
            peer("m4:19200", "FOLLOWER", 5));
    GetQuorumInfoResponse outsider = view("m2:19200", "", 1, 0, peer("m2:19200", "FOLLOWER", 0));
    QuorumSurvey s =
        new QuorumSurvey(
            List.of(
                new QuorumSurvey.Answer("m1:19200", leader, null),
                new QuorumSurvey.Answer("m2:19200", outsider, null)),
            List.of("m1:19200", "m2:19200"),
            true);
    assertEquals(
        List.of("m1:19200", "m4:19200", "m2:19200"),
        s.rows().stream().map(QuorumSurvey.Row::address).toList());
    assertEquals(
        List.of(
            "m4:19200 is a member but not in strata.master.addresses: add it there for clients,"
                + " workers and masters",
            "m2:19200 is not a member of the group g: add it with `strata fsadmin journal quorum"
                + " add`, or remove it from strata.master.addresses"),
        s.notes());
  }
}
