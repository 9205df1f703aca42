package io.strata.shell.admin;

import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What each master answered about the journal's group, merged into one row per master.
 *
 * <p>The group's members and commit index come from the leader's own answer (the master that names
 * itself as leader, the highest term winning), else from the answer of the highest term; rows
 * follow the order of {@code strata.master.addresses}. Each row's role and applied index come from
 * that master's own answer, so a master that lags or cannot be reached shows as such even while the
 * leader still counts it; its lag is the leader's commit index less what it applied. Configured
 * masters that are not members get a row too, and notes say what is amiss (an unreachable master
 * and why, a member missing from {@code strata.master.addresses}).
 */
final class QuorumSurvey {
  /** One master's answer: its view of the group, or why it did not give one. */
  record Answer(String asked, GetQuorumInfoResponse response, String error) {
    /** The address the master calls itself by, else the one it was asked at. */
    String identity() {
      return response != null && !response.getAnsweredBy().isEmpty()
          ? response.getAnsweredBy()
          : asked;
    }
  }

  /** A row of the table; {@code applied} and {@code lag} are -1 when unknown. */
  record Row(String address, String journalAddress, String role, long applied, long lag) {}

  private final GetQuorumInfoResponse leaderView;
  private final GetQuorumInfoResponse reference;
  private final List<Row> rows = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  /**
   * @param answers every master asked, in the order to list extra rows in
   * @param configured the addresses of strata.master.addresses
   * @param listed whether the configuration lists the masters (else it names one master)
   */
  QuorumSurvey(List<Answer> answers, List<String> configured, boolean listed) {
    this.leaderView =
        answers.stream()
            .map(Answer::response)
            .filter(
                r ->
                    r != null
                        && !r.getLeaderAddress().isEmpty()
                        && r.getLeaderAddress().equals(r.getAnsweredBy()))
            .max(Comparator.comparingLong(GetQuorumInfoResponse::getTerm))
            .orElse(null);
    this.reference =
        leaderView != null
            ? leaderView
            : answers.stream()
                .map(Answer::response)
                .filter(r -> r != null)
                .max(
                    Comparator.comparingLong(GetQuorumInfoResponse::getTerm)
                        .thenComparingLong(GetQuorumInfoResponse::getCommitIndex))
                .orElse(null);
    Map<String, Answer> byIdentity = new HashMap<>();
    Map<String, Answer> byAsked = new HashMap<>();
    for (Answer a : answers) {
      byAsked.put(a.asked(), a);
      if (a.response() != null) {
        byIdentity.put(a.identity(), a);
      }
    }
    Set<String> covered = new HashSet<>();
    if (reference != null) {
      for (QuorumPeer p : inOrder(reference.getPeersList(), configured)) {
        Answer a = byIdentity.getOrDefault(p.getAddress(), byAsked.get(p.getAddress()));
        rows.add(row(p.getAddress(), p.getJournalAddress(), a, p));
        covered.add(p.getAddress());
        if (a != null) {
          covered.add(a.asked());
        }
        if (listed && !configured.contains(p.getAddress())) {
          notes.add(
              p.getAddress()
                  + " is a member but not in strata.master.addresses: add it"
                  + " there for clients, workers and masters");
        }
      }
    }
    for (Answer a : answers) {
      if (covered.contains(a.asked()) || covered.contains(a.identity())) {
        continue;
      }
      rows.add(row(a.identity(), "-", a, null));
      if (reference != null && a.response() != null) {
        notes.add(
            a.identity()
                + " is not a member of the group "
                + reference.getGroupId()
                + ": add it with `strata fsadmin journal quorum add`, or remove it from"
                + " strata.master.addresses");
      }
    }
    for (Answer a : answers) {
      if (a.error() != null) {
        notes.add(a.asked() + " is unreachable: " + a.error());
      }
    }
  }

  private Row row(String address, String journalAddress, Answer a, QuorumPeer member) {
    if (a == null) {
      // Not asked: the leader's knowledge is all there is.
      return member == null
          ? new Row(address, journalAddress, "unknown", -1, -1)
          : new Row(
              address,
              journalAddress,
              role(member.getRole()),
              member.getAppliedIndex(),
              member.getLag());
    }
    if (a.response() == null) {
      return new Row(address, journalAddress, "unreachable", -1, -1);
    }
    QuorumPeer self = self(a.response());
    if (self == null) {
      return new Row(address, journalAddress, "unknown", -1, -1);
    }
    String role = role(self.getRole());
    if (leaderView != null
        && "leader".equals(role)
        && !address.equals(leaderView.getLeaderAddress())) {
      role = "stale leader";
    }
    long applied = self.getAppliedIndex();
    long lag =
        leaderView == null || applied < 0 ? -1 : Math.max(0, leaderView.getCommitIndex() - applied);
    return new Row(address, journalAddress, role, applied, lag);
  }

  /** The answering master's own entry among the peers it lists. */
  private static QuorumPeer self(GetQuorumInfoResponse r) {
    for (QuorumPeer p : r.getPeersList()) {
      if (p.getAddress().equals(r.getAnsweredBy())) {
        return p;
      }
    }
    return r.getPeersCount() == 1 ? r.getPeers(0) : null;
  }

  static String role(String role) {
    return role.isEmpty() ? "unknown" : role.toLowerCase(Locale.ROOT);
  }

  /** The leader's own view of the group, or null when no master that answered leads. */
  GetQuorumInfoResponse leaderView() {
    return leaderView;
  }

  /** The view the members come from (the leader's, else the newest); null when none answered. */
  GetQuorumInfoResponse reference() {
    return reference;
  }

  List<Row> rows() {
    return rows;
  }

  List<String> notes() {
    return notes;
  }

  /** The peers in the order of the configured addresses, those it does not name last. */
  private static List<QuorumPeer> inOrder(List<QuorumPeer> peers, List<String> configured) {
    List<QuorumPeer> sorted = new ArrayList<>(peers);
    sorted.sort(
        Comparator.comparingInt(
            p ->
                configured.contains(p.getAddress())
                    ? configured.indexOf(p.getAddress())
                    : configured.size()));
    return sorted;
  }

  /**
   * Rows for the members a leader returned after changing the group, in the order of {@code
   * configured}.
   */
  static List<Row> rows(List<QuorumPeer> peers, List<String> configured) {
    List<Row> out = new ArrayList<>();
    for (QuorumPeer p : inOrder(peers, configured)) {
      out.add(
          new Row(
              p.getAddress(),
              p.getJournalAddress(),
              role(p.getRole()),
              p.getAppliedIndex(),
              p.getLag()));
    }
    return out;
  }
}
