package io.strata.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;

/**
 * The Raft log of one group: the segment files in {@code raft/<group-uuid>/current/}, in index
 * order. {@link #read} streams every entry and stops at the first damage; {@link #checkOrder} holds
 * the rules between segments and entries that no single segment can check.
 */
final class GroupLog {
  static final String CURRENT = "current";
  static final String RATIS_LOCK = "in_use.lock";

  /** Receives entries in index order with the segment and offset each came from. */
  @FunctionalInterface
  interface Visitor {
    void visit(SegmentFile segment, LogEntryProto entry, long offset) throws IOException;
  }

  private final Path groupDir;
  private final List<SegmentFile> segments;

  private GroupLog(Path groupDir, List<SegmentFile> segments) {
    this.groupDir = groupDir;
    this.segments = segments;
  }

  /** The group in a {@code raft/<group-uuid>} folder. */
  static GroupLog of(Path groupDir) throws IOException {
    List<SegmentFile> segments = new ArrayList<>();
    Path current = groupDir.resolve(CURRENT);
    if (Files.isDirectory(current)) {
      try (Stream<Path> files = Files.list(current)) {
        for (Path p : (Iterable<Path>) files::iterator) {
          SegmentFile s = Files.isRegularFile(p) ? SegmentFile.of(p) : null;
          if (s != null) {
            segments.add(s);
          }
        }
      }
    }
    // Closed before open at the same first index: an open segment there is a leftover.
    segments.sort(Comparator.comparingLong(SegmentFile::first).thenComparing(SegmentFile::open));
    return new GroupLog(groupDir, List.copyOf(segments));
  }

  Path dir() {
    return groupDir;
  }

  /** The group id: the folder name, a UUID. */
  String id() {
    return groupDir.getFileName().toString();
  }

  List<SegmentFile> segments() {
    return segments;
  }

  /** First index in the log, or -1 when the log has no segment. */
  long firstIndex() {
    return segments.isEmpty() ? -1 : segments.get(0).first();
  }

  /**
   * Reads the entries with indexes from {@code from} to {@code to} (inclusive) in order, skipping
   * closed segments wholly outside that range, and checks their order as {@link #checkOrder} does.
   *
   * @throws JournalDamage at the first damage
   */
  void read(long from, long to, Visitor visitor) throws IOException {
    SegmentFile previous = null;
    long[] lastIndex = {-1};
    long[] lastTerm = {-1};
    for (SegmentFile segment : segments) {
      if (!segment.open() && (segment.last() < from || segment.first() > to)) {
        previous = null;
        continue;
      }
      if (segment.first() > to) {
        break;
      }
      if (previous != null) {
        checkOrder(previous, lastIndex[0], segment);
      }
      SegmentFile.Result r =
          segment.read(
              (entry, offset) -> {
                checkTerm(segment, entry, offset, lastTerm[0]);
                lastTerm[0] = entry.getTerm();
                if (entry.getIndex() >= from && entry.getIndex() <= to) {
                  visitor.visit(segment, entry, offset);
                }
              });
      previous = segment;
      lastIndex[0] = r.lastIndex();
    }
  }

  /**
   * Checks that {@code next} continues the log where {@code previous} (whose last entry is {@code
   * previousLast}) ended: no gap, no overlap, and only the last segment open.
   */
  static void checkOrder(SegmentFile previous, long previousLast, SegmentFile next)
      throws JournalDamage {
    if (previous.open()) {
      throw new JournalDamage(
          previous.path(),
          -1,
          -1,
          "an open segment is followed by " + next + "; only the last segment may be open");
    }
    if (next.first() != previousLast + 1) {
      String what =
          next.first() > previousLast + 1
              ? "entries " + (previousLast + 1) + " to " + (next.first() - 1) + " are missing"
              : "it overlaps " + previous + ", which ends at entry " + previousLast;
      throw new JournalDamage(
          next.path(),
          -1,
          next.first(),
          "the segment starts at entry " + next.first() + " after " + previous + ": " + what);
    }
  }

  /** Raft terms never go down along the log. */
  static void checkTerm(SegmentFile segment, LogEntryProto entry, long offset, long lastTerm)
      throws JournalDamage {
    if (entry.getTerm() < lastTerm) {
      throw new JournalDamage(
          segment.path(),
          offset,
          entry.getIndex(),
          "term " + entry.getTerm() + " after term " + lastTerm + ": terms must not decrease");
    }
  }
}
