package io.strata.master.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proto.journal.InodeEntry;
import io.strata.proto.journal.JournalEntry;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JournalTest {
  @TempDir
  Path dir;

  private static JournalEntry.Builder entry(long id) {
    return JournalEntry.newBuilder().setInode(InodeEntry.newBuilder().setId(id).setParentId(1)
        .setName("n" + id));
  }

  private List<Long> replayAll(Journal j, long after) throws IOException {
    List<Long> seen = new ArrayList<>();
    j.replay(after, e -> seen.add(e.getSequence()));
    return seen;
  }

  private List<Path> segments() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("segment-")).sorted().toList();
    }
  }

  @Test
  void entriesReplayInOrderAcrossRolledSegments() throws Exception {
    try (Journal j = new Journal(dir, 200, false)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      for (int i = 1; i <= 30; i++) {
        List<JournalEntry> written = j.append(List.of(entry(i)));
        assertEquals(i, written.get(0).getSequence());
      }
      assertEquals(30, j.lastSequence());
    }
    assertTrue(segments().size() > 3, "small segments roll: " + segments());
    try (Journal j = new Journal(dir, 200, false)) {
      List<Long> seen = replayAll(j, 0);
      assertEquals(30, seen.size());
      assertEquals(1, seen.get(0));
      assertEquals(30, seen.get(29));
      assertEquals(List.of(26L, 27L, 28L, 29L, 30L), replayAll(new Journal(dir, 200, false), 25));
    }
  }

  @Test
  void tornTailIsCutOffAndTheJournalContinuesAfterIt() throws Exception {
    try (Journal j = new Journal(dir, 1 << 20, true)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      j.append(List.of(entry(1), entry(2), entry(3)));
    }
    Path segment = segments().get(0);
    long size = Files.size(segment);
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.truncate(size - 1);
    }
    try (Journal j = new Journal(dir, 1 << 20, false)) {
      assertEquals(List.of(1L, 2L), replayAll(j, 0));
      j.startWriting(3);
      j.append(List.of(entry(30)));
    }
    try (Journal j = new Journal(dir, 1 << 20, false)) {
      assertEquals(List.of(1L, 2L, 3L), replayAll(j, 0));
    }
  }

  @Test
  void garbageAfterTheLastRecordOfTheLastSegmentIsATornTail() throws Exception {
    try (Journal j = new Journal(dir, 1 << 20, false)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      j.append(List.of(entry(1)));
    }
    Files.write(segments().get(0), new byte[] {0, 0, 0, 0, 0, 0}, StandardOpenOption.APPEND);
    try (Journal j = new Journal(dir, 1 << 20, false)) {
      assertEquals(List.of(1L), replayAll(j, 0));
    }
  }

  @Test
  void damageInAnEarlierSegmentFailsEvenAtItsEnd() throws Exception {
    try (Journal j = new Journal(dir, 100, false)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      for (int i = 1; i <= 10; i++) {
        j.append(List.of(entry(i)));
      }
    }
    Path first = segments().get(0);
    try (FileChannel ch = FileChannel.open(first, StandardOpenOption.WRITE)) {
      ch.truncate(Files.size(first) - 2);
    }
    IOException e = assertThrows(IOException.class,
        () -> replayAll(new Journal(dir, 100, false), 0));
    assertTrue(e.getMessage().contains(first.toString()) && e.getMessage().contains("offset"),
        e.getMessage());
  }

  @Test
  void missingEntriesBetweenSegmentsFailReplay() throws Exception {
    try (Journal j = new Journal(dir, 100, false)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      for (int i = 1; i <= 10; i++) {
        j.append(List.of(entry(i)));
      }
    }
    Files.delete(segments().get(1));
    IOException e = assertThrows(IOException.class,
        () -> replayAll(new Journal(dir, 100, false), 0));
    assertTrue(e.getMessage().contains("Journal is missing entries"), e.getMessage());
  }

  @Test
  void segmentsCoveredByACheckpointAreDeletedButNotTheCurrentOne() throws Exception {
    try (Journal j = new Journal(dir, 100, false)) {
      j.replay(0, e -> { });
      j.startWriting(1);
      for (int i = 1; i <= 10; i++) {
        j.append(List.of(entry(i)));
      }
      int before = segments().size();
      int deleted = j.deleteSegmentsCoveredBy(6);
      assertTrue(deleted > 0);
      assertEquals(before - deleted, segments().size());
      j.roll();
      j.deleteSegmentsCoveredBy(10);
      assertEquals(1, segments().size(), "only the new current segment is left");
    }
    try (Journal j = new Journal(dir, 100, false)) {
      assertEquals(List.of(), replayAll(j, 10));
      assertEquals(10, j.lastSequence());
    }
  }
}
