package io.strata.journal;

import io.strata.master.journal.HeaderFile;
import io.strata.master.metastore.InodeStore;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;

/**
 * What {@code strata journal verify} checks, in order: every snapshot (or the backup) with {@link
 * StateCheck}; then each Raft group's log, segment by segment (Ratis's checksums, the indexes each
 * segment promises, no gap or overlap between segments, terms never decreasing, every state-machine
 * entry a {@link JournalBatch}); and, in the same pass, a replay of every journal entry after the
 * newest sound snapshot into a scratch copy of its database, with the sequences a master assigns
 * (the snapshot's last applied sequence + 1, + 2, ...), which must all apply. Damage in one file
 * does not stop the checks of the others; the replay stops at the first damage, since what follows
 * could not be applied in order.
 */
final class Verifier {
  private final PrintWriter out;
  private final Path scratchRoot;
  private final List<String> problems = new ArrayList<>();

  Verifier(PrintWriter out, Path scratchRoot) {
    this.out = out;
    this.scratchRoot = scratchRoot;
  }

  /** Problems found so far, each naming the file and, where it applies, offset and index. */
  List<String> problems() {
    return problems;
  }

  void verify(JournalFolder folder) throws IOException {
    out.println(folder.dir() + (folder.standalone() ? " (backup folder)" : " (journal folder)"));
    StateCheck.Result newest = null;
    StateCheck.Result base = null;
    for (StateFolder state : folder.states()) {
      if (!folder.standalone() && !Files.exists(state.header())) {
        out.println(
            "  "
                + state.name()
                + ": incomplete (no "
                + HeaderFile.NAME
                + "), a snapshot "
                + "cut short, which a master ignores and removes");
        continue;
      }
      StateCheck.Result r = StateCheck.check(state, folder.standalone(), scratchRoot);
      JournalHeader h = r.header();
      if (r.sound()) {
        out.println(
            "  "
                + state.name()
                + ": OK (format "
                + h.getFormatVersion()
                + ", raft index "
                + h.getRaftIndex()
                + ", last applied sequence "
                + h.getFirstSequence()
                + ", "
                + h.getInodeCount()
                + " inodes)");
        base = r;
      } else {
        out.println("  " + state.name() + ": DAMAGED");
        r.problems().forEach(this::problem);
      }
      newest = r;
    }
    if (folder.standalone()) {
      return;
    }
    if (newest != null && !newest.sound() && base != null) {
      out.println("  the newest snapshot is damaged: replaying from " + base.state().name());
    }
    List<GroupLog> groups = folder.groups();
    if (groups.isEmpty()) {
      out.println("  no Raft log (raft/<group>/current/ has no segments)");
    }
    for (GroupLog group : groups) {
      checkLog(group, base);
    }
  }

  private void problem(String message) {
    problems.add(message);
    out.println("    DAMAGED " + message);
  }

  private void checkLog(GroupLog group, StateCheck.Result base) throws IOException {
    JournalHeader h = base == null ? null : base.header();
    long baseIndex = h == null ? -1 : h.getRaftIndex();
    String from = base == null ? "an empty metastore" : base.state().name();
    List<SegmentFile> segments = group.segments();
    out.println(
        "  raft group "
            + group.id()
            + ": "
            + segments.size()
            + (segments.size() == 1 ? " segment" : " segments"));
    LogPass pass = new LogPass(baseIndex, h == null ? 0 : h.getFirstSequence());
    if (!segments.isEmpty() && group.firstIndex() > baseIndex + 1) {
      problem(
          group.dir().resolve(GroupLog.CURRENT)
              + ": the log starts at entry "
              + group.firstIndex()
              + " but "
              + from
              + " ends at entry "
              + baseIndex
              + ": entries "
              + (baseIndex + 1)
              + " to "
              + (group.firstIndex() - 1)
              + " are missing");
      pass.stopReplay();
    }
    try (ScratchCopy copy =
            base == null
                ? ScratchCopy.empty(scratchRoot)
                : ScratchCopy.of(base.state().db(), scratchRoot);
        InodeStore store = copy.open()) {
      pass.store = store;
      SegmentFile previous = null;
      long previousLast = -1;
      for (SegmentFile segment : segments) {
        if (previous != null) {
          try {
            GroupLog.checkOrder(previous, previousLast, segment);
          } catch (JournalDamage d) {
            problem(d.getMessage());
            // Entries missing only up to the snapshot do not matter to the replay.
            if (segment.first() <= previousLast || segment.first() - 1 > baseIndex) {
              pass.stopReplay();
            }
          }
        }
        try {
          SegmentFile.Result r = segment.read((raft, offset) -> pass.accept(segment, raft, offset));
          out.println(
              "    " + segment + ": OK (entries " + segment.first() + " to " + r.lastIndex() + ")");
          if (r.partialTail() > 0) {
            out.println(
                "    "
                    + segment
                    + ": ends in an entry cut short at offset "
                    + r.end()
                    + " ("
                    + r.partialTail()
                    + " bytes, a write a crash interrupted); a master "
                    + "drops it when it starts");
          }
          previous = segment;
          previousLast = r.lastIndex();
        } catch (JournalDamage d) {
          problem(d.getMessage());
          // A closed segment wholly covered by the snapshot is not needed by the replay.
          if (segment.open() || segment.last() > baseIndex) {
            pass.stopReplay();
          }
          pass.lastTerm = -1;
          // Go on by the name: a closed segment promises where it ends.
          previous = segment;
          previousLast = segment.open() ? segment.first() - 1 : segment.last();
        }
      }
      out.println(
          "    "
              + pass.batches
              + " batches of "
              + pass.journalEntries
              + " journal entries, "
              + pass.configurations
              + " configuration and "
              + pass.metadata
              + " metadata entries"
              + (pass.other > 0 ? ", " + pass.other + " other" : ""));
      if (pass.replaying) {
        out.println(
            "    replay from "
                + from
                + ": "
                + pass.applied
                + " journal entries applied"
                + (pass.applied > 0
                    ? " (sequences "
                        + (pass.sequence - pass.applied + 1)
                        + " to "
                        + pass.sequence
                        + ")"
                    : "")
                + "; the metastore then holds "
                + store.inodeCount()
                + " inodes");
      } else {
        out.println(
            "    replay from "
                + from
                + " stopped after "
                + pass.applied
                + " journal entries: the log is damaged");
      }
    }
  }

  /** One pass over a group's log: counts, term order, and the replay. */
  private static final class LogPass {
    private final long baseIndex;
    InodeStore store;
    long sequence;
    long lastTerm = -1;
    boolean replaying = true;
    long applied;
    long batches;
    long journalEntries;
    long configurations;
    long metadata;
    long other;

    LogPass(long baseIndex, long sequence) {
      this.baseIndex = baseIndex;
      this.sequence = sequence;
    }

    void stopReplay() {
      replaying = false;
    }

    void accept(SegmentFile segment, LogEntryProto raft, long offset) throws IOException {
      GroupLog.checkTerm(segment, raft, offset, lastTerm);
      lastTerm = raft.getTerm();
      LogEntry entry = LogEntry.decode(segment, raft, offset);
      switch (entry.type()) {
        case BATCH -> {
          batches++;
          journalEntries += entry.journalEntries();
        }
        case CONFIGURATION -> configurations++;
        case METADATA -> metadata++;
        case OTHER -> other++;
      }
      if (!replaying || raft.getIndex() <= baseIndex || entry.batch() == null) {
        return;
      }
      List<JournalEntry> entries = entry.batch().getEntriesList();
      for (int i = 0; i < entries.size(); i++) {
        JournalEntry e = entries.get(i).toBuilder().setSequence(sequence + 1).build();
        try {
          store.apply(e);
        } catch (IOException | RuntimeException ex) {
          throw new JournalDamage(
              segment.path(),
              offset,
              raft.getIndex(),
              "journal entry "
                  + i
                  + " of the batch (sequence "
                  + e.getSequence()
                  + ", "
                  + EntryFormat.entryType(e)
                  + ") does not apply: "
                  + ex.getMessage(),
              ex);
        }
        sequence++;
        applied++;
      }
    }
  }
}
