package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.proto.RemovePeerRequest;
import io.strata.proto.RemovePeerResponse;
import io.strata.shell.ShellContext;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fsadmin journal quorum remove HOST:PORT}: takes a master out of the group. */
@Command(
    name = "remove",
    mixinStandardHelpOptions = true,
    description = {
      "Remove a master from the journal's group and print the remaining members.",
      "The removed master no longer counts towards the majority; stop it afterwards."
    })
final class QuorumRemoveCommand implements Callable<Integer> {
  private final ShellContext ctx;

  @Parameters(
      index = "0",
      paramLabel = "HOST:PORT",
      description = "The master to remove: its gRPC address, or its journal address.")
  String address;

  QuorumRemoveCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    String target = QuorumTable.hostPort(address, "The master to remove");
    RemovePeerResponse r =
        ctx.master()
            .callJournal(
                s -> s.removePeer(RemovePeerRequest.newBuilder().setAddress(target).build()));
    ctx.out().println("Removed " + target + ". The group now:");
    QuorumTable.print(
        ctx.out(), QuorumSurvey.rows(r.getPeersList(), ctx.master().addresses().all()));
    ctx.out()
        .println(
            "Remove "
                + target
                + " from strata.master.addresses (and its journal"
                + " address from strata.master.journal.addresses) of every master, worker and client.");
    return 0;
  }
}
