package io.strata.journal;

import com.google.protobuf.Message;
import io.strata.common.Version;
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
 * {@code strata journal convert DIR --to-format N}: what it takes to bring a journal or backup
 * folder to metadata layout N (the formats are the layouts of {@link Version#LAYOUT_VERSION}).
 *
 * <p>A folder's layout is the highest of its snapshot and backup headers and of the layout entries
 * in its log. Since layouts change by a journaled finalize on a running cluster ({@code strata
 * fsadmin upgrade finalize}), never by rewriting files, this command never rewrites a file: asking
 * for the folder's own layout says that nothing needs converting; asking for a newer layout this
 * release knows says that this release reads the folder as it is and that finalize switches it;
 * asking for an older layout is refused (a finalized journal holds records the older layout would
 * drop; going back is a restore of the backup of {@code upgrade prepare}); a layout this release
 * does not know is refused with both versions named.
 */
@Command(
    name = "convert",
    mixinStandardHelpOptions = true,
    description = {
      "Says what it takes to bring a journal or backup folder to metadata layout N."
          + " This release reads layouts 1 to "
          + Version.LAYOUT_VERSION
          + " as they are and never"
          + " rewrites a file: the folder's own layout is a no-op that says so, a newer one is"
          + " switched to by `strata fsadmin upgrade finalize`, an older or unknown one is refused"
          + " (exit code 4)."
    })
final class ConvertCommand implements Callable<Integer> {
  @Parameters(index = "0", paramLabel = "DIR", description = "Journal folder or backup folder.")
  Path dir;

  @Option(
      names = "--to-format",
      required = true,
      paramLabel = "N",
      description = "Journal format to convert to.")
  int target;

  @Spec CommandSpec spec;

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
        throw new ToolFailure(
            JournalToolsMain.DAMAGED,
            e.getMessage() + ". Nothing was converted; run `strata journal verify " + dir + "`.");
      }
      if (h.getFormatVersion() > format) {
        format = h.getFormatVersion();
        writer = h.getRelease();
      }
    }
    if (format > current) {
      throw refused(
          dir
              + " is in metadata layout "
              + format
              + " (written by release "
              + writer
              + "), newer than this release ("
              + Version.RELEASE
              + ") knows (up to "
              + current
              + "). Use the `strata journal convert` of release "
              + writer
              + " or newer.");
    }
    int from = Math.max(Math.max(format, Version.FIRST_LAYOUT_VERSION), highestLayoutEntry(folder));
    if (target < Version.FIRST_LAYOUT_VERSION || target > current) {
      throw refused(
          "Cannot convert "
              + dir
              + " from metadata layout "
              + from
              + " to layout "
              + target
              + ": this release ("
              + Version.RELEASE
              + ") knows layouts "
              + Version.FIRST_LAYOUT_VERSION
              + " to "
              + current
              + (target > current
                  ? "; a newer layout needs the release that introduced it"
                  : "; layout " + target + " does not exist")
              + ".");
    }
    long newer = firstEntryOfNewerFormat(folder);
    if (newer >= 0) {
      throw refused(
          "Cannot convert "
              + dir
              + " to metadata layout "
              + target
              + ": Raft entry "
              + newer
              + " holds fields or changes this release cannot read (a newer layout); "
              + "converting would drop them.");
    }
    PrintWriter out = spec.commandLine().getOut();
    if (target == from) {
      out.println(dir + " is already in metadata layout " + target + ": nothing to convert.");
      return JournalToolsMain.OK;
    }
    if (target > from) {
      out.println(
          dir
              + " is in metadata layout "
              + from
              + ", which release "
              + Version.RELEASE
              + " reads as it is: nothing to convert. A cluster switches to layout "
              + target
              + " with `strata fsadmin upgrade finalize` once every master runs this release"
              + " (docs/rolling-upgrade.md).");
      return JournalToolsMain.OK;
    }
    throw refused(
        "Cannot convert "
            + dir
            + " from metadata layout "
            + from
            + " down to layout "
            + target
            + ": a finalized journal may hold records layout "
            + target
            + " would drop."
            + " To go back to a release of layout "
            + target
            + ", restore the backup that"
            + " `strata fsadmin upgrade prepare` took before the upgrade (docs/rolling-upgrade.md).");
  }

  /** The highest layout a layout entry (finalize) of the folder's log switched to, or 0. */
  private static int highestLayoutEntry(JournalFolder folder) throws IOException {
    int[] highest = {0};
    for (GroupLog group : folder.groups()) {
      group.read(
          0,
          Long.MAX_VALUE,
          (segment, raft, offset) -> {
            LogEntry e = LogEntry.decode(segment, raft, offset);
            if (e.batch() == null) {
              return;
            }
            for (JournalEntry entry : e.batch().getEntriesList()) {
              if (entry.hasLayout()) {
                highest[0] = Math.max(highest[0], entry.getLayout().getLayoutVersion());
              }
            }
          });
    }
    return highest[0];
  }

  private static ToolFailure refused(String message) {
    return new ToolFailure(JournalToolsMain.REFUSED, message);
  }

  /** Raft index of the first batch holding a journal entry this release cannot fully read. */
  private static long firstEntryOfNewerFormat(JournalFolder folder) throws IOException {
    long[] found = {-1};
    for (GroupLog group : folder.groups()) {
      group.read(
          0,
          Long.MAX_VALUE,
          (segment, raft, offset) -> {
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
    for (Map.Entry<com.google.protobuf.Descriptors.FieldDescriptor, Object> f :
        m.getAllFields().entrySet()) {
      if (f.getKey().getJavaType()
          != com.google.protobuf.Descriptors.FieldDescriptor.JavaType.MESSAGE) {
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
