package io.strata.journal;

import com.google.protobuf.Message;
import io.strata.common.Version;
import io.strata.master.journal.HeaderFile;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code strata journal convert DIR --to-format N}: rewrites a journal or backup folder into an
 * adjacent journal format, when its entries allow it.
 *
 * <p>Formats are the numbers of {@link Version#LAYOUT_VERSION}; a folder's format is the
 * highest one in its snapshot or backup headers (Raft log segments carry none: their entries are
 * read as the current format). This release knows format 1 only, so the one conversion it can do
 * is none: asking for the current format says that nothing needs converting, and any other
 * format is refused with both versions named. It never rewrites a file. A release that adds
 * format N adds the step between N - 1 and N here; converting down refuses while any entry uses
 * what only the newer format has, and entries with fields or changes this release cannot read
 * are already such entries.
 */
@Command(name = "convert", mixinStandardHelpOptions = true,
    description = {"Converts a journal or backup folder to an adjacent journal format where its "
        + "entries allow it. This release knows journal format "
        + Version.LAYOUT_VERSION + " only: converting to it is a no-op that says so; "
        + "any other format is refused (exit code 4)."})
final class ConvertCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DIR", description = "Journal folder or backup folder.")
  Path dir;

  @Option(names = "--to-format", required = true, paramLabel = "N",
      description = "Journal format to convert to.")
  int target;

  @Spec
  CommandSpec spec;

  @Override
  public Integer call() throws IOException {
    JournalFolder folder = JournalFolder.of(dir);
    LockProbe.refuseIfInUse(folder);
    int current = Version.LAYOUT_VERSION;
    int format = 0;
    String writer = null;
    for (StateFolder state : folder.states()) {
      JournalHeader h;
      try {
        h = state.readHeader();
      } catch (JournalDamage e) {
        throw new ToolFailure(JournalToolsMain.DAMAGED, e.getMessage()
            + ". Nothing was converted; run `strata journal verify " + dir + "`.");
      }
      if (h.getFormatVersion() > format) {
        format = h.getFormatVersion();
        writer = h.getRelease();
      }
    }
    if (format > current) {
      throw refused(dir + " is in journal format " + format + " (written by release " + writer
          + "), newer than this release (" + Version.RELEASE + ") knows (format " + current
          + "). Use the `strata journal convert` of release " + writer + " or newer.");
    }
    int from = Math.max(format, current);
    if (target != from && (target < 1 || target > current)) {
      throw refused("Cannot convert " + dir + " from journal format " + from + " to format "
          + target + ": this release (" + Version.RELEASE + ") knows journal format"
          + (current == 1 ? " 1 only" : "s 1 to " + current)
          + (target > current ? "; converting to a newer format needs the release that "
              + "introduced it" : "; format " + target + " does not exist") + ".");
    }
    long newer = firstEntryOfNewerFormat(folder);
    if (newer >= 0) {
      throw refused("Cannot convert " + dir + " to journal format " + target + ": Raft entry "
          + newer + " holds fields or changes this release cannot read (a newer format); "
          + "converting would drop them.");
    }
    PrintWriter out = spec.commandLine().getOut();
    if (target == from) {
      out.println(dir + " is already in journal format " + target + ", the current format of "
          + "release " + Version.RELEASE + ": nothing to convert.");
      return JournalToolsMain.OK;
    }
    // Both formats are known but differ: only possible once a release knows two formats, and
    // then its adjacent conversion steps go here. Until then, refuse rather than pretend.
    throw refused("Cannot convert " + dir + " from journal format " + from + " to format "
        + target + ": this release has no conversion between them.");
  }

  private static ToolFailure refused(String message) {
    return new ToolFailure(JournalToolsMain.REFUSED, message);
  }

  /** Raft index of the first batch holding a journal entry this release cannot fully read. */
  private static long firstEntryOfNewerFormat(JournalFolder folder) throws IOException {
    long[] found = {-1};
    for (GroupLog group : folder.groups()) {
      group.read(0, Long.MAX_VALUE, (segment, raft, offset) -> {
        LogEntry e = LogEntry.decode(segment, raft, offset);
        if (found[0] >= 0 || e.batch() == null) {
          return;
        }
        for (JournalEntry entry : e.batch().getEntriesList()) {
          if (entry.getEntryCase() == JournalEntry.EntryCase.ENTRY_NOT_SET
              || hasUnknownFields(entry)) {
            found[0] = raft.getIndex();
            return;
          }
        }
      });
      if (found[0] >= 0) {
        return found[0];
      }
    }
    return -1;
  }

  private static boolean hasUnknownFields(Message m) {
    if (!m.getUnknownFields().asMap().isEmpty()) {
      return true;
    }
    for (Map.Entry<com.google.protobuf.Descriptors.FieldDescriptor, Object> f
        : m.getAllFields().entrySet()) {
      if (f.getKey().getJavaType() != com.google.protobuf.Descriptors.FieldDescriptor.JavaType
          .MESSAGE) {
        continue;
      }
      List<?> values = f.getKey().isRepeated() ? (List<?>) f.getValue() : List.of(f.getValue());
      for (Object v : values) {
        if (hasUnknownFields((Message) v)) {
          return true;
        }
      }
    }
    return false;
  }
}
