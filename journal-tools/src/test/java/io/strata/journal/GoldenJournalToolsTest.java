package io.strata.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.util.JsonFormat;
import io.strata.master.journal.HeaderFile;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalEntry;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code strata journal verify} and {@code dump} accept the journal folder and the backup that
 * release 0.1.0 wrote (metadata layout 1, {@code tests/compat/layout-1}), read from a copy.
 */
class GoldenJournalToolsTest {
  /** The golden files, from this module's folder (where Maven runs its tests). */
  private static final Path GOLDEN = Path.of("../tests/compat/layout-1");

  @TempDir Path tmp;
  private Path journal;
  private Path backup;
  private Path snapshot;

  @BeforeEach
  void copyTheGoldenFiles() throws IOException {
    assertTrue(
        Files.isDirectory(GOLDEN.resolve("journal")),
        "the golden files are missing: " + GOLDEN.toAbsolutePath().normalize());
    journal = tmp.resolve("journal");
    backup = tmp.resolve("backup");
    copyTree(GOLDEN.resolve("journal"), journal);
    copyTree(GOLDEN.resolve("backup"), backup);
    try (Stream<Path> headers = Files.walk(journal)) {
      snapshot =
          headers
              .filter(p -> p.getFileName().toString().equals(HeaderFile.NAME))
              .map(Path::getParent)
              .reduce(
                  (a, b) -> {
                    throw new AssertionError(
                        "the golden journal holds one snapshot: " + a + ", " + b);
                  })
              .orElseThrow();
    }
  }

  @Test
  void verifyFindsNoDamageAndReplaysToTheListedNamespace() throws IOException {
    Tool t = Tool.run("verify", journal.toString(), backup.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(t.out().contains("OK: no damage found"), t::toString);
    JournalHeader s = HeaderFile.read(snapshot.resolve(HeaderFile.NAME));
    assertTrue(
        t.out()
            .contains(
                "snapshot "
                    + snapshot.getFileName()
                    + ": OK (format 1, raft index "
                    + s.getRaftIndex()
                    + ", last applied sequence "
                    + s.getFirstSequence()
                    + ", "
                    + s.getInodeCount()
                    + " inodes)"),
        t::toString);
    // The replay past the snapshot ends with the namespace release 0.1.0 listed (and the root).
    long listed =
        Files.readAllLines(GOLDEN.resolve("expected-namespace.txt"), StandardCharsets.UTF_8)
            .stream()
            .filter(l -> !l.isEmpty())
            .count();
    assertTrue(
        t.out()
            .matches(
                "(?s).*replay from snapshot "
                    + snapshot.getFileName()
                    + ": [1-9]\\d* journal entries applied \\(sequences "
                    + (s.getFirstSequence() + 1)
                    + " to \\d+\\); the metastore then holds "
                    + (listed + 1)
                    + " inodes.*"),
        t::toString);
    JournalHeader b = HeaderFile.read(backup.resolve(HeaderFile.NAME));
    assertTrue(
        t.out()
            .contains(
                "backup backup: OK (format 1, raft index "
                    + b.getRaftIndex()
                    + ", last applied sequence "
                    + b.getFirstSequence()
                    + ", "
                    + b.getInodeCount()
                    + " inodes)"),
        t::toString);
  }

  @Test
  void dumpPrintsTheSnapshotAndEveryKindOfEntryWithItsSequence() throws Exception {
    Tool text = Tool.run("dump", journal.toString());
    assertEquals(0, text.code(), text::toString);
    assertTrue(
        text.out().startsWith("# snapshot " + snapshot.getFileName() + ": format 1, release 0.1.0"),
        text::toString);
    assertFalse(text.out().contains("seq ?"), text::toString);

    Tool json = Tool.run("dump", "--json", journal.toString());
    assertEquals(0, json.code(), json::toString);
    Map<Long, JournalBatch> fromJson = new TreeMap<>();
    long nextSequence = -1;
    for (String line : json.out().split("\n")) {
      JsonObject o = JsonParser.parseString(line).getAsJsonObject();
      if (!o.get("type").getAsString().equals("batch")) {
        continue;
      }
      JournalBatch.Builder batch = JournalBatch.newBuilder();
      JsonFormat.parser().merge(o.getAsJsonObject("batch").toString(), batch);
      fromJson.put(o.get("index").getAsLong(), batch.build());
      // Sequences are known (the log reaches the snapshot) and run on from batch to batch.
      assertTrue(o.has("firstSequence"), line);
      long first = o.get("firstSequence").getAsLong();
      if (nextSequence >= 0) {
        assertEquals(nextSequence, first, line);
      }
      nextSequence = first + batch.getEntriesCount();
    }
    Map<Long, JournalBatch> stored = new TreeMap<>();
    for (GroupLog group : JournalFolder.of(journal).groups()) {
      group.read(
          0,
          Long.MAX_VALUE,
          (segment, raft, offset) -> {
            LogEntry e = LogEntry.decode(segment, raft, offset);
            if (e.batch() != null) {
              stored.put(raft.getIndex(), e.batch());
            }
          });
    }
    assertFalse(stored.isEmpty());
    assertEquals(stored, fromJson);
    // The golden log holds every kind of journal entry of layout 1.
    Set<JournalEntry.EntryCase> kinds = EnumSet.noneOf(JournalEntry.EntryCase.class);
    for (JournalBatch b : fromJson.values()) {
      for (JournalEntry e : b.getEntriesList()) {
        kinds.add(e.getEntryCase());
      }
    }
    assertEquals(
        EnumSet.of(
            JournalEntry.EntryCase.INODE,
            JournalEntry.EntryCase.DELETE_INODE,
            JournalEntry.EntryCase.RENAME,
            JournalEntry.EntryCase.ADD_MOUNT,
            JournalEntry.EntryCase.DELETE_MOUNT,
            JournalEntry.EntryCase.LOAD_JOB),
        kinds);
  }

  @Test
  void dumpOfTheBackupPrintsItsHeader() throws IOException {
    Tool t = Tool.run("dump", "--json", backup.toString());
    assertEquals(0, t.code(), t::toString);
    JsonObject o = JsonParser.parseString(t.out().trim()).getAsJsonObject();
    assertEquals("backup", o.get("type").getAsString());
    JournalHeader.Builder header = JournalHeader.newBuilder();
    JsonFormat.parser().merge(o.getAsJsonObject("header").toString(), header);
    assertEquals(HeaderFile.read(backup.resolve(HeaderFile.NAME)), header.build());
    assertEquals(1, header.getFormatVersion());
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : (Iterable<Path>) walk::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
