package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.proto.AddPeerRequest;
import io.strata.proto.AddPeerResponse;
import io.strata.shell.ShellContext;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code strata fsadmin journal quorum add HOST:PORT --journal-address HOST:PORT}. */
@Command(
    name = "add",
    mixinStandardHelpOptions = true,
    description = {
      "Add a master to the journal's group and print the new members.",
      "Start the new master first, with strata.master.addresses and"
          + " strata.master.journal.addresses listing every master including itself; it catches"
          + " up from the leader once added."
    })
final class QuorumAddCommand implements Callable<Integer> {
  private final ShellContext ctx;

  @Parameters(index = "0", paramLabel = "HOST:PORT", description = "The new master's gRPC address.")
  String address;

  @Option(
      names = "--journal-address",
      paramLabel = "HOST:PORT",
      required = true,
      description = "The new master's journal (Raft) address.")
  String journalAddress;

  QuorumAddCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    String rpc = QuorumTable.hostPort(address, "The master to add");
    String journal = QuorumTable.hostPort(journalAddress, "--journal-address");
    AddPeerResponse r =
        ctx.master()
            .callJournal(
                s ->
                    s.addPeer(
                        AddPeerRequest.newBuilder()
                            .setAddress(rpc)
                            .setJournalAddress(journal)
                            .build()));
    ctx.out().println("Added " + rpc + " (journal " + journal + "). The group now:");
    QuorumTable.print(
        ctx.out(), QuorumSurvey.rows(r.getPeersList(), ctx.master().addresses().all()));
    ctx.out()
        .println(
            "Add "
                + rpc
                + " to strata.master.addresses (and "
                + journal
                + " to strata.master.journal.addresses) of every master, worker and client.");
    return 0;
  }
}
