package io.strata.shell.admin;

import io.strata.common.error.StrataException;
import io.strata.proto.TransferLeadershipRequest;
import io.strata.proto.TransferLeadershipResponse;
import io.strata.shell.ShellContext;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code strata fsadmin journal quorum elect HOST:PORT}: hands the lead to one master. */
@Command(
    name = "elect",
    mixinStandardHelpOptions = true,
    description = "Make the named master the leader; returns once it leads.")
final class QuorumElectCommand implements Callable<Integer> {
  private final ShellContext ctx;

  @Parameters(
      index = "0",
      paramLabel = "HOST:PORT",
      description = "The master to lead: its gRPC address, or its journal address.")
  String address;

  QuorumElectCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    String target = QuorumTable.hostPort(address, "The master to elect");
    TransferLeadershipResponse r =
        ctx.master()
            .callJournal(
                s ->
                    s.transferLeadership(
                        TransferLeadershipRequest.newBuilder().setAddress(target).build()));
    ctx.out()
        .println(
            "The leader is now "
                + (r.getLeaderAddress().isEmpty() ? target : r.getLeaderAddress()));
    return 0;
  }
}
