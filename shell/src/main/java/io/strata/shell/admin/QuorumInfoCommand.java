package io.strata.shell.admin;

import io.strata.client.master.MasterClient;
import io.strata.common.DaemonThreads;
import io.strata.common.conf.ClientKeys;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.GetQuorumInfoRequest;
import io.strata.proto.GetQuorumInfoResponse;
import io.strata.proto.QuorumPeer;
import io.strata.shell.ShellContext;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;

/**
 * {@code strata fsadmin journal quorum info}: asks every master directly, in parallel and with a
 * short deadline, for its view of the journal's group, and prints one row per master (see {@link
 * QuorumSurvey}). A master that does not answer is a row, not a failure; the command fails only
 * when no master answers or none leads.
 */
@Command(
    name = "info",
    mixinStandardHelpOptions = true,
    description = {
      "Show the masters of the journal's group: each one's address, journal address, role,"
          + " applied index and lag behind the leader, with the term, commit index and leader.",
      "Every master of strata.master.addresses (and every member the masters name) is asked"
          + " directly, so one that is down or behind shows as such."
    })
final class QuorumInfoCommand implements Callable<Integer> {
  /** The longest a master may take to answer; a paused one would otherwise hold the table. */
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

  private final ShellContext ctx;

  QuorumInfoCommand(ShellContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public Integer call() throws StrataException {
    StrataConfig conf = ctx.conf();
    Duration rpc = conf.getDuration(ClientKeys.RPC_TIMEOUT);
    Duration probe = rpc.compareTo(PROBE_TIMEOUT) < 0 ? rpc : PROBE_TIMEOUT;
    StrataConfig probing =
        conf.with(Map.of(ClientKeys.RPC_TIMEOUT.name(), probe.toMillis() + "ms"));
    QuorumSurvey survey;
    List<String> configured;
    try (MasterClient client = new MasterClient(probing)) {
      configured = client.addresses().all();
      List<QuorumSurvey.Answer> answers = ask(client, configured, probe);
      // Members the masters name that the configuration does not: ask them too.
      Set<String> more = new LinkedHashSet<>();
      for (QuorumSurvey.Answer a : answers) {
        if (a.response() != null) {
          for (QuorumPeer p : a.response().getPeersList()) {
            more.add(p.getAddress());
          }
        }
      }
      for (QuorumSurvey.Answer a : answers) {
        more.remove(a.asked());
        more.remove(a.identity());
      }
      more.removeIf(String::isEmpty);
      if (!more.isEmpty()) {
        answers = new ArrayList<>(answers);
        answers.addAll(ask(client, List.copyOf(more), probe));
      }
      survey = new QuorumSurvey(answers, configured, client.addresses().listed());
    }
    PrintStream out = ctx.out();
    GetQuorumInfoResponse ref = survey.reference();
    if (ref == null) {
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "No Strata master answered ("
              + String.join("; ", survey.notes())
              + "). Start the masters with `strata master"
              + " start`, or set strata.master.addresses to every master's host:port");
    }
    GetQuorumInfoResponse leader = survey.leaderView();
    out.printf(
        "Journal group %s: term %d, commit index %d, leader %s%n",
        ref.getGroupId(),
        ref.getTerm(),
        ref.getCommitIndex(),
        leader == null ? "none" : leader.getLeaderAddress());
    QuorumTable.print(out, survey.rows());
    for (String note : survey.notes()) {
      out.println("Note: " + note);
    }
    if (leader == null) {
      throw new StrataException(
          ErrorCode.UNAVAILABLE,
          "No master leads the journal's group:"
              + " an election is under way, or fewer than a majority of its "
              + ref.getPeersCount()
              + " masters run. Start the stopped ones (a group of "
              + ref.getPeersCount()
              + " needs "
              + (ref.getPeersCount() / 2 + 1)
              + ")");
    }
    return 0;
  }

  /** Asks each address at once; every answer or failure comes back within the deadline. */
  private static List<QuorumSurvey.Answer> ask(
      MasterClient client, List<String> addresses, Duration probe) throws StrataException {
    ExecutorService pool =
        Executors.newFixedThreadPool(addresses.size(), DaemonThreads.named("quorum-info"));
    try {
      List<CompletableFuture<QuorumSurvey.Answer>> futures = new ArrayList<>();
      for (String address : addresses) {
        futures.add(CompletableFuture.supplyAsync(() -> askOne(client, address), pool));
      }
      long deadline = System.nanoTime() + probe.plusSeconds(2).toNanos();
      List<QuorumSurvey.Answer> answers = new ArrayList<>();
      for (int i = 0; i < addresses.size(); i++) {
        long left = Math.max(0, deadline - System.nanoTime());
        try {
          answers.add(futures.get(i).get(left, TimeUnit.NANOSECONDS));
        } catch (TimeoutException | ExecutionException e) {
          answers.add(
              new QuorumSurvey.Answer(
                  addresses.get(i), null, "no answer within " + probe.toSeconds() + "s"));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new StrataException(
              ErrorCode.UNAVAILABLE, "Interrupted while asking the" + " masters", e);
        }
      }
      return answers;
    } finally {
      pool.shutdownNow();
    }
  }

  private static QuorumSurvey.Answer askOne(MasterClient client, String address) {
    try {
      return new QuorumSurvey.Answer(
          address,
          client.callJournalAt(
              address, s -> s.getQuorumInfo(GetQuorumInfoRequest.getDefaultInstance())),
          null);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.DEADLINE_EXCEEDED) {
        return new QuorumSurvey.Answer(
            address, null, "no answer within the deadline (is it" + " paused or overloaded?)");
      }
      String prefix = "The Strata master at " + address + " did not serve the call: ";
      String message = e.getMessage() == null ? e.code().name() : e.getMessage();
      return new QuorumSurvey.Answer(
          address, null, message.startsWith(prefix) ? message.substring(prefix.length()) : message);
    }
  }
}
