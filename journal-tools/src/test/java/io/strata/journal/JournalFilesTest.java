package io.strata.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.strata.common.Version;
import io.strata.master.journal.HeaderFile;
import io.strata.proto.journal.JournalBatch;
import io.strata.proto.journal.JournalHeader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.ratis.server.raftlog.segmented.SegmentedRaftLogFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tools on journal folders written with Ratis's own segment writer and the master's metastore
 * (see {@link JournalFixture}), including damage placed at known offsets.
 */
class JournalFilesTest {
  @TempDir Path tmp;

  @Test
  void dumpListsEveryEntryWithSequences() throws Exception {
    JournalFixture.standard(tmp);
    Tool t = Tool.run("dump", tmp.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(
        t.out().contains("index 0  term 1  configuration  peers [m1@127.0.0.1:19202]"),
        t::toString);
    assertTrue(t.out().contains("index 1  term 1  metadata  commit index 0"), t::toString);
    assertTrue(t.out().contains("index 2  term 1  batch  2 entries  client client-1"), t::toString);
    // The log begins at index 0, so every entry has its sequence.
    assertTrue(t.out().contains("seq 5  INODE"), t::toString);
    assertTrue(t.out().contains("seq 9  RENAME"), t::toString);
    assertTrue(
        t.out().contains("seq 1  INODE  inode { id: 2 parent_id: 1 name: \"a\""), t::toString);
    assertTrue(t.out().contains("# snapshot 1_4: format 1"), t::toString);
  }

  @Test
  void dumpHonoursFromAndTo() throws Exception {
    JournalFixture.standard(tmp);
    Tool t = Tool.run("dump", tmp.toString(), "--from", "5", "--to", "7");
    assertEquals(0, t.code(), t::toString);
    assertTrue(!t.out().contains("\nindex 4 ") && !t.out().contains("\nindex 8 "), t::toString);
    assertTrue(t.out().contains("\nindex 5 ") && t.out().contains("\nindex 7 "), t::toString);
    assertTrue(t.out().contains("seq 5  INODE") && t.out().contains("seq 8  INODE"), t::toString);
  }

  @Test
  void sequencesCountFromTheSnapshotWhenTheLogWasPurgedUpToIt() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp);
    Files.delete(f.current.resolve("log_0-3"));
    Tool t = Tool.run("dump", tmp.toString());
    assertEquals(0, t.code(), t::toString);
    // Counted back from the snapshot at index 4, which holds sequences up to 4.
    assertTrue(t.out().contains("seq 4  RENAME  rename { id: 2 "), t::toString);
    assertTrue(t.out().contains("seq 5  INODE  inode { id: 5 "), t::toString);
    Tool v = Tool.run("verify", tmp.toString());
    assertEquals(0, v.code(), v::toString);
    assertTrue(v.out().contains("5 journal entries applied (sequences 5 to 9)"), v::toString);
  }

  @Test
  void jsonDumpParsesBackIntoTheSameBatches() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp);
    Tool t = Tool.run("dump", tmp.toString(), "--json");
    assertEquals(0, t.code(), t::toString);
    Map<Long, JournalBatch> parsed = new TreeMap<>();
    int lines = 0;
    for (String line : t.out().split("\n")) {
      JsonObject o = JsonParser.parseString(line).getAsJsonObject();
      lines++;
      if (o.get("type").getAsString().equals("batch")) {
        JournalBatch.Builder b = JournalBatch.newBuilder();
        com.google.protobuf.util.JsonFormat.parser()
            .merge(o.getAsJsonObject("batch").toString(), b);
        parsed.put(o.get("index").getAsLong(), b.build());
      }
      if (o.get("type").getAsString().equals("snapshot")) {
        JournalHeader.Builder h = JournalHeader.newBuilder();
        com.google.protobuf.util.JsonFormat.parser()
            .merge(o.getAsJsonObject("header").toString(), h);
        assertEquals(
            HeaderFile.read(Path.of(o.get("dir").getAsString()).resolve("HEADER")), h.build());
      }
    }
    assertEquals(f.batches, parsed);
    assertEquals(1 + 9, lines, t::toString);
  }

  @Test
  void verifyPassesOnACleanJournal() throws Exception {
    JournalFixture.standard(tmp);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(t.out().contains("OK: no damage found"), t::toString);
    assertTrue(
        t.out()
            .contains(
                "replay from snapshot 1_4: 5 journal entries applied "
                    + "(sequences 5 to 9); the metastore then holds 7 inodes"),
        t::toString);
  }

  @Test
  void verifyNamesTheSegmentAndOffsetOfAFlippedByte() throws Exception {
    JournalFixture.standard(tmp);
    Path segment =
        tmp.resolve("raft").resolve(JournalFixture.GROUP).resolve("current").resolve("log_0-3");
    // The third entry: past the header and the first two entries.
    long offset =
        SegmentedRaftLogFormat.getHeaderLength()
            + SegmentFile.size(JournalFixture.conf(1, 0))
            + SegmentFile.size(JournalFixture.metadata(1, 1, 0));
    JournalFixture.flipByte(segment, offset + 10);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out().contains(segment + " at offset " + offset + " (entry index 2)"), t::toString);
    // The segment lies wholly before the snapshot, so the replay after it still runs.
    assertTrue(
        t.out().contains("replay from snapshot 1_4: 5 journal entries applied"), t::toString);
  }

  @Test
  void verifyNamesADamagedSegmentHeader() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp);
    Path segment = f.current.resolve("log_4-6");
    JournalFixture.flipByte(segment, 2);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out().contains(segment + " at offset 0: the segment header is not Ratis's"), t::toString);
  }

  @Test
  void verifyStopsTheReplayAtDamageAfterTheSnapshot() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp);
    Path segment = f.current.resolve("log_4-6");
    long offset =
        SegmentedRaftLogFormat.getHeaderLength()
            + SegmentFile.size(f.batch(1, 4, f.batches.get(4L)));
    JournalFixture.flipByte(segment, offset + 12);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out().contains(segment + " at offset " + offset + " (entry index 5)"), t::toString);
    assertTrue(
        t.out().contains("replay from snapshot 1_4 stopped after 0 journal entries"), t::toString);
  }

  @Test
  void verifyNamesADamagedSnapshotDatabase() throws Exception {
    JournalFixture.standard(tmp);
    Path sst =
        JournalFixture.files(JournalFixture.snapshotsOf(tmp), ".sst").stream()
            .max(Comparator.comparingLong(p -> p.toFile().length()))
            .orElseThrow();
    JournalFixture.flipByte(sst, Files.size(sst) / 4);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(t.out().contains("snapshot 1_4: DAMAGED"), t::toString);
    assertTrue(t.out().contains(sst.getFileName().toString()), t::toString);
  }

  @Test
  void verifyNamesADamagedSnapshotHeader() throws Exception {
    JournalFixture.standard(tmp);
    Path header = JournalFixture.snapshotsOf(tmp).resolve("1_4").resolve("HEADER");
    JournalFixture.flipByte(header, 5);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out().contains("Header file " + header + " is damaged: checksum mismatch"), t::toString);
  }

  @Test
  void aSnapshotWithoutHeaderIsOneCutShortNotDamage() throws Exception {
    JournalFixture.standard(tmp);
    Files.createDirectories(JournalFixture.snapshotsOf(tmp).resolve("2_8").resolve("db"));
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(t.out().contains("snapshot 2_8: incomplete (no HEADER)"), t::toString);
    assertTrue(t.out().contains("replay from snapshot 1_4: 5 journal entries"), t::toString);
  }

  @Test
  void verifyFindsAGapBetweenSegments() throws Exception {
    JournalFixture f = new JournalFixture(tmp);
    f.segment(true, JournalFixture.conf(1, 0), f.batch(1, 1, f.creates("a")));
    Path second = f.segment(true, f.batch(1, 3, f.creates("b")));
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(
        t.out()
            .contains(
                second
                    + " (entry index 3): the segment starts at entry 3 "
                    + "after log_0-1: entries 2 to 2 are missing"),
        t::toString);
  }

  @Test
  void verifyFindsTermsGoingDown() throws Exception {
    JournalFixture f = new JournalFixture(tmp);
    Path seg = f.segment(true, JournalFixture.conf(2, 0), f.batch(1, 1, f.creates("a")));
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(t.out().contains(seg + " at offset "), t::toString);
    assertTrue(t.out().contains("term 1 after term 2"), t::toString);
  }

  @Test
  void verifyToleratesAnEntryCutShortAtTheEndOfTheOpenSegment() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp);
    Path open = f.current.resolve("log_inprogress_7");
    long end =
        SegmentedRaftLogFormat.getHeaderLength()
            + SegmentFile.size(f.batch(2, 7, f.batches.get(7L)))
            + SegmentFile.size(f.batch(2, 8, f.batches.get(8L)));
    assertEquals(end, Files.size(open));
    // A third entry whose write stopped after its length and a few bytes.
    Files.write(open, new byte[] {40, 7, 1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
    Tool t = Tool.run("verify", tmp.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(
        t.out().contains("log_inprogress_7: ends in an entry cut short at offset " + end),
        t::toString);
  }

  @Test
  void verifyChecksABackupFolder() throws Exception {
    JournalFixture f = JournalFixture.standard(tmp.resolve("journal"));
    Path backup = f.backup(tmp, 2, 8);
    Tool t = Tool.run("verify", backup.toString());
    assertEquals(0, t.code(), t::toString);
    assertTrue(
        t.out()
            .contains(
                "backup "
                    + backup.getFileName()
                    + ": OK (format 1, raft index 8, "
                    + "last applied sequence 9, 7 inodes)"),
        t::toString);
    Tool d = Tool.run("dump", backup.toString());
    assertEquals(0, d.code(), d::toString);
    assertTrue(d.out().startsWith("# backup " + backup.getFileName() + ": format 1"), d::toString);
    JournalFixture.flipByte(backup.resolve("HEADER"), 3);
    t = Tool.run("verify", tmp.resolve("journal").toString(), backup.toString());
    assertEquals(1, t.code(), t::toString);
    assertTrue(t.out().contains(backup.resolve("HEADER").toString()), t::toString);
  }

  @Test
  void convertToTheFoldersOwnOrANewerKnownLayoutIsANoOpThatSaysSo() throws Exception {
    JournalFixture.standard(tmp);
    Tool same = Tool.run("convert", tmp.toString(), "--to-format", "1");
    assertEquals(0, same.code(), same::toString);
    assertTrue(
        same.out().contains("already in metadata layout 1")
            && same.out().contains("nothing to convert"),
        same::toString);
    Tool up =
        Tool.run(
            "convert", tmp.toString(), "--to-format", Integer.toString(Version.LAYOUT_VERSION));
    assertEquals(0, up.code(), up::toString);
    assertTrue(up.out().contains("strata fsadmin upgrade finalize"), up::toString);
  }

  @Test
  void convertRefusesALayoutThisReleaseDoesNotKnow() throws Exception {
    JournalFixture.standard(tmp);
    Tool up =
        Tool.run(
            "convert", tmp.toString(), "--to-format", Integer.toString(Version.LAYOUT_VERSION + 1));
    assertEquals(JournalToolsMain.REFUSED, up.code(), up::toString);
    assertTrue(
        up.err().contains("from metadata layout 1 to layout " + (Version.LAYOUT_VERSION + 1)),
        up::toString);
    Tool down = Tool.run("convert", tmp.toString(), "--to-format", "0");
    assertEquals(JournalToolsMain.REFUSED, down.code(), down::toString);
    assertTrue(down.err().contains("layout 0 does not exist"), down::toString);
  }

  @Test
  void convertRefusesAFolderOfANewerFormat() throws Exception {
    JournalFixture.standard(tmp);
    Path header = JournalFixture.snapshotsOf(tmp).resolve("1_4").resolve("HEADER");
    int newer = Version.LAYOUT_VERSION + 1;
    HeaderFile.write(
        header,
        HeaderFile.read(header).toBuilder().setFormatVersion(newer).setRelease("9.9.9").build());
    Tool t = Tool.run("convert", tmp.toString(), "--to-format", "1");
    assertEquals(JournalToolsMain.REFUSED, t.code(), t::toString);
    assertTrue(
        t.err().contains("metadata layout " + newer + " (written by release 9.9.9)"), t::toString);
    Tool v = Tool.run("verify", tmp.toString());
    assertEquals(1, v.code(), v::toString);
    assertTrue(
        v.out().contains("metadata layout " + newer + " (written by release 9.9.9) is" + " newer"),
        v::toString);
  }

  @Test
  void aFolderThatIsNoJournalIsAUsageError() throws Exception {
    Files.createDirectories(tmp.resolve("empty"));
    Tool t = Tool.run("dump", tmp.resolve("empty").toString());
    assertEquals(JournalToolsMain.USAGE, t.code(), t::toString);
    assertTrue(t.err().contains("is neither a master journal folder"), t::toString);
  }
}
