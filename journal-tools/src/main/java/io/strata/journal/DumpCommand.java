package io.strata.journal;

import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.io.PrintWriter;
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
 * for journal batches each journal entry with its type and fields; snapshot and backup headers
 * come first. Sequences are printed where a snapshot (or a log that starts at index 0) tells
 * where they start. Damage stops the dump with exit code 1 after the entries before it.
 */
@Command(name = "dump", mixinStandardHelpOptions = true,
    description = {"Prints the journal: snapshot headers, then every Raft log entry (index, term, "
        + "type) with the journal entries of each batch. DIR is a journal folder or a backup "
        + "folder (whose header is printed).",
        "With --json, one JSON object a line (see docs/journal-tools.md); the batch of a line "
            + "parses back with protobuf's JsonFormat into io.strata.proto.journal.JournalBatch."})
final class DumpCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DIR", description = "Journal folder or backup folder.")
  Path dir;

  @Option(names = "--from", paramLabel = "INDEX", description = "First Raft index to print.")
  long from = 0;

  @Option(names = "--to", paramLabel = "INDEX", description = "Last Raft index to print.")
  long to = Long.MAX_VALUE;

  @Option(names = "--json", description = "One JSON object a line instead of text.")
  boolean json;

  @Spec
  CommandSpec spec;

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
      try {
        JournalHeader h = HeaderFile.read(state.header());
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
      out.println("# raft group " + group.id() + ": " + group.segments().size() + " segments "
          + group.segments());
    }
    SequenceBase base = sequenceBase(group, headers);
    long readFrom = base == null ? from : Math.min(from, base.index() + 1);
    long[] sequence = {base == null ? 0 : base.sequence()};
    group.read(readFrom, to, (segment, raft, offset) -> {
      LogEntry entry = LogEntry.decode(segment, raft, offset);
      long first = -1;
      if (base != null && raft.getIndex() > base.index()) {
        first = sequence[0] + 1;
        sequence[0] += entry.journalEntries();
      }
      if (raft.getIndex() >= from) {
        out.println(json ? EntryFormat.json(group.id(), entry, first)
            : EntryFormat.text(entry, first));
      }
    });
  }

  /**
   * Where sequences start: a log that begins at index 0 starts at sequence 1; otherwise the
   * oldest snapshot the log continues (the log holds the entry after it), so that as many
   * entries as possible get sequences. Null when neither holds: sequences are then unknown.
   */
  private static SequenceBase sequenceBase(GroupLog group,
      Map<StateFolder, JournalHeader> headers) {
    long firstIndex = group.firstIndex();
    if (firstIndex == 0) {
      return new SequenceBase(-1, 0);
    }
    for (Map.Entry<StateFolder, JournalHeader> e : headers.entrySet()) {
      JournalHeader h = e.getValue();
      if (e.getKey().kind().equals(StateFolder.SNAPSHOT) && h.getRaftIndex() >= firstIndex - 1) {
        return new SequenceBase(h.getRaftIndex(), h.getFirstSequence());
      }
    }
    return null;
  }
}
