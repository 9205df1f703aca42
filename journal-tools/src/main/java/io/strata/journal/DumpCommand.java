package io.strata.journal;

import io.strata.master.journal.HeaderFile;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code strata journal dump DIR}: prints every Raft log entry with its index, term and type, and
 * for journal batches each journal entry with its type and fields; snapshot and backup headers come
 * first. Sequences are printed where a snapshot the log reaches (or a log that starts at index 0)
 * tells where they start. Damage stops the dump with exit code 1 after the entries before it.
 */
@Command(
    name = "dump",
    mixinStandardHelpOptions = true,
    description = {
      "Prints the journal: snapshot headers, then every Raft log entry (index, term, "
          + "type) with the journal entries of each batch. DIR is a journal folder or a backup "
          + "folder (whose header is printed).",
      "With --json, one JSON object a line (see docs/journal-tools.md); the batch of a line "
          + "parses back with protobuf's JsonFormat into io.strata.proto.journal.JournalBatch."
    })
final class DumpCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DIR", description = "Journal folder or backup folder.")
  Path dir;

  @Option(names = "--from", paramLabel = "INDEX", description = "First Raft index to print.")
  long from = 0;

  @Option(names = "--to", paramLabel = "INDEX", description = "Last Raft index to print.")
  long to = Long.MAX_VALUE;

  @Option(names = "--json", description = "One JSON object a line instead of text.")
  boolean json;

  @Spec CommandSpec spec;

  /** Where sequences start: the entry after Raft index {@code index} gets {@code sequence + 1}. */
  private record SequenceBase(long index, long sequence) {}

  @Override
  public Integer call() throws IOException {
    if (from > to) {
      throw new ToolFailure(JournalToolsMain.USAGE, "--from " + from + " is after --to " + to);
    }
    JournalFolder folder = JournalFolder.of(dir);
    LockProbe.refuseIfInUse(folder);
    PrintWriter out = spec.commandLine().getOut();
    Map<StateFolder, JournalHeader> headers = new LinkedHashMap<>();
    JournalDamage firstDamage = null;
    for (StateFolder state : folder.states()) {
      if (!folder.standalone() && !Files.exists(state.header())) {
        if (!json) {
          out.println("# " + state.name() + ": incomplete (no " + HeaderFile.NAME + ")");
        }
        continue;
      }
      try {
        JournalHeader h = state.readHeader();
        headers.put(state, h);
        out.println(json ? EntryFormat.json(state, h) : "# " + EntryFormat.text(state, h));
      } catch (JournalDamage e) {
        spec.commandLine().getErr().println("strata journal: " + e.getMessage());
        firstDamage = firstDamage == null ? e : firstDamage;
      }
    }
    for (GroupLog group : folder.groups()) {
      dump(group, headers, out);
    }
    if (firstDamage != null) {
      throw firstDamage;
    }
    return JournalToolsMain.OK;
  }

  private void dump(GroupLog group, Map<StateFolder, JournalHeader> headers, PrintWriter out)
      throws IOException {
    if (!json) {
      int n = group.segments().size();
      out.println(
          "# raft group "
              + group.id()
              + ": "
              + n
              + (n == 1 ? " segment " : " segments ")
              + group.segments());
    }
    SequenceBase base = sequenceBase(group, headers);
    // Sequences count from the base, so the entries between it and --from are read too.
    long readFrom = base == null ? from : Math.min(from, base.index() + 1);
    long[] sequence = {base == null ? 0 : base.sequence()};
    group.read(
        readFrom,
        to,
        (segment, raft, offset) -> {
          LogEntry entry = LogEntry.decode(segment, raft, offset);
          long first = -1;
          if (base != null && raft.getIndex() > base.index()) {
            first = sequence[0] + 1;
            sequence[0] += entry.journalEntries();
          }
          if (raft.getIndex() >= from) {
            out.println(
                json ? EntryFormat.json(group.id(), entry, first) : EntryFormat.text(entry, first));
          }
        });
  }

  /**
   * Where sequences start. A log that begins at index 0 starts at sequence 1. Otherwise (the log
   * was purged up to a snapshot) a snapshot whose index the log reaches tells the sequence at that
   * index, and counting the journal entries from the start of the log to it gives the sequence
   * before the log's first entry. Null when neither holds, or the log is damaged before the
   * snapshot: sequences are then unknown.
   */
  private static SequenceBase sequenceBase(
      GroupLog group, Map<StateFolder, JournalHeader> headers) {
    long firstIndex = group.firstIndex();
    if (firstIndex <= 0) {
      return firstIndex == 0 ? new SequenceBase(-1, 0) : null;
    }
    JournalHeader snapshot = null;
    for (Map.Entry<StateFolder, JournalHeader> e : headers.entrySet()) {
      JournalHeader h = e.getValue();
      if (e.getKey().kind().equals(StateFolder.SNAPSHOT)
          && h.getRaftIndex() >= firstIndex - 1
          && (snapshot == null || h.getRaftIndex() < snapshot.getRaftIndex())) {
        snapshot = h;
      }
    }
    if (snapshot == null) {
      return null;
    }
    long target = snapshot.getRaftIndex();
    long[] entries = {0};
    boolean[] reached = {target == firstIndex - 1};
    try {
      group.read(
          firstIndex,
          target,
          (segment, raft, offset) -> {
            entries[0] += LogEntry.decode(segment, raft, offset).journalEntries();
            reached[0] = raft.getIndex() == target;
          });
    } catch (IOException e) {
      return null;
    }
    return reached[0]
        ? new SequenceBase(firstIndex - 1, snapshot.getFirstSequence() - entries[0])
        : null;
  }
}
