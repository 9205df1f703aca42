package io.strata.master.journal;

import io.strata.common.conf.CommonKeys;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.MasterKeys;
import io.strata.common.conf.StrataConfig;
import java.util.ArrayList;
import java.util.List;

/**
 * The masters of the group as configuration names them: each one's gRPC address (what clients use,
 * {@code strata.master.addresses}) and journal address (what masters replicate over, {@code
 * strata.master.journal.addresses}), in the same order, and which of them this master is. With no
 * address list there is one master: this one.
 */
public final class QuorumAddresses {
  /** One master; {@code peerId} names it in the Raft group and stays the same across restarts. */
  public record Member(String rpcAddress, String journalAddress, String peerId) {
    Member(String rpcAddress, String journalAddress) {
      this(
          rpcAddress,
          journalAddress,
          "master-" + journalAddress.replace(':', '_').replace('[', '_').replace(']', '_'));
    }

    public String journalHost() {
      return journalAddress.substring(0, journalAddress.lastIndexOf(':'));
    }

    public int journalPort() {
      return Integer.parseInt(journalAddress.substring(journalAddress.lastIndexOf(':') + 1));
    }
  }

  private final List<Member> members;
  private final Member self;

  private QuorumAddresses(List<Member> members, Member self) {
    this.members = List.copyOf(members);
    this.self = self;
  }

  public static QuorumAddresses from(StrataConfig conf) {
    String selfRpc =
        conf.getString(CommonKeys.MASTER_HOSTNAME) + ":" + conf.getInt(CommonKeys.MASTER_RPC_PORT);
    int journalPort = conf.getInt(MasterKeys.JOURNAL_PORT);
    List<String> rpc = split(conf.getString(CommonKeys.MASTER_ADDRESSES));
    List<String> journal = split(conf.getString(MasterKeys.JOURNAL_ADDRESSES));
    if (rpc.isEmpty()) {
      // A lone master on an ephemeral RPC port (tests, embedded use) takes an ephemeral journal
      // port too: nobody needs to reach a one-peer group's journal, and several such masters
      // share a machine.
      int port = conf.getInt(CommonKeys.MASTER_RPC_PORT) == 0 ? 0 : journalPort;
      String selfJournal =
          journal.isEmpty()
              ? conf.getString(CommonKeys.MASTER_HOSTNAME) + ":" + port
              : journal.get(0);
      // A lone master's id does not depend on its ports, which may change between starts.
      Member only = new Member(selfRpc, selfJournal, "master");
      return new QuorumAddresses(List.of(only), only);
    }
    if (journal.isEmpty()) {
      for (String a : rpc) {
        journal.add(a.substring(0, a.lastIndexOf(':')) + ":" + journalPort);
      }
    }
    if (journal.size() != rpc.size()) {
      throw new ConfigException(
          MasterKeys.JOURNAL_ADDRESSES.name()
              + " names "
              + journal.size()
              + " masters but "
              + CommonKeys.MASTER_ADDRESSES.name()
              + " names "
              + rpc.size()
              + "; list every master's journal address in the same order");
    }
    List<Member> members = new ArrayList<>();
    Member self = null;
    for (int i = 0; i < rpc.size(); i++) {
      Member m = new Member(rpc.get(i), journal.get(i));
      members.add(m);
      if (m.rpcAddress().equals(selfRpc)) {
        self = m;
      }
    }
    if (self == null) {
      throw new ConfigException(
          "This master ("
              + selfRpc
              + ", from strata.master.hostname and "
              + "strata.master.rpc.port) is not in "
              + CommonKeys.MASTER_ADDRESSES.name()
              + " ("
              + String.join(",", rpc)
              + "); set them so that it is");
    }
    return new QuorumAddresses(members, self);
  }

  private static List<String> split(String list) {
    List<String> out = new ArrayList<>();
    for (String s : list.split(",")) {
      String a = s.trim();
      if (a.isEmpty()) {
        continue;
      }
      int colon = a.lastIndexOf(':');
      if (colon <= 0 || !a.substring(colon + 1).matches("\\d+")) {
        throw new ConfigException(
            "Master address '"
                + a
                + "' is not host:port (write each"
                + " master as host:port, comma-separated, e.g. m1:19200,m2:19200,m3:19200)");
      }
      out.add(a);
    }
    return out;
  }

  public List<Member> members() {
    return members;
  }

  public Member self() {
    return self;
  }

  /** The member with that gRPC or journal address, or null. */
  public Member find(String address) {
    for (Member m : members) {
      if (m.rpcAddress().equals(address) || m.journalAddress().equals(address)) {
        return m;
      }
    }
    return null;
  }
}
