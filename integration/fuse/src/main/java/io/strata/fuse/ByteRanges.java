package io.strata.fuse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A set of byte ranges of a file, kept as disjoint, non-adjacent half-open intervals: the bytes a
 * staged copy holds itself, as opposed to those still read from the version it started from. Adding
 * a range merges it with those it touches, so random writes of one file cost one entry per run of
 * written bytes, never one per write. Not thread-safe: its {@link StagedFile} guards it.
 */
final class ByteRanges {
  /** A run of bytes {@code [start, end)}. */
  record Range(long start, long end) {
    long length() {
      return end - start;
    }
  }

  /** Start of each range to its end. */
  private final TreeMap<Long, Long> ranges = new TreeMap<>();

  private long bytes;

  /** Adds {@code [start, end)}. */
  void add(long start, long end) {
    if (end <= start) {
      return;
    }
    Map.Entry<Long, Long> before = ranges.floorEntry(start);
    if (before != null && before.getValue() >= start) {
      if (before.getValue() >= end) {
        return;
      }
      start = before.getKey();
      bytes -= before.getValue() - before.getKey();
      ranges.remove(before.getKey());
    }
    Map.Entry<Long, Long> next = ranges.ceilingEntry(start);
    while (next != null && next.getKey() <= end) {
      end = Math.max(end, next.getValue());
      bytes -= next.getValue() - next.getKey();
      ranges.remove(next.getKey());
      next = ranges.ceilingEntry(start);
    }
    ranges.put(start, end);
    bytes += end - start;
  }

  /** Removes every byte at or after {@code from} (a truncation). */
  void truncate(long from) {
    Map.Entry<Long, Long> before = ranges.lowerEntry(from);
    if (before != null && before.getValue() > from) {
      bytes -= before.getValue() - from;
      ranges.put(before.getKey(), from);
    }
    for (Map.Entry<Long, Long> e : new ArrayList<>(ranges.tailMap(from, true).entrySet())) {
      bytes -= e.getValue() - e.getKey();
      ranges.remove(e.getKey());
    }
  }

  /** Removes every range. */
  void clear() {
    ranges.clear();
    bytes = 0;
  }

  /** How many bytes the ranges cover. */
  long bytes() {
    return bytes;
  }

  /** How many disjoint ranges there are. */
  int count() {
    return ranges.size();
  }

  /**
   * The pieces of {@code [start, end)} in order, each either inside a range (held) or in a gap
   * between ranges (not held); together they cover it exactly.
   */
  List<Piece> split(long start, long end) {
    List<Piece> out = new ArrayList<>(2);
    long at = start;
    Map.Entry<Long, Long> e = ranges.floorEntry(start);
    if (e == null || e.getValue() <= start) {
      e = ranges.higherEntry(start);
    }
    while (at < end) {
      if (e == null || e.getKey() >= end) {
        out.add(new Piece(at, end, false));
        break;
      }
      if (e.getKey() > at) {
        out.add(new Piece(at, e.getKey(), false));
        at = e.getKey();
      }
      long stop = Math.min(end, e.getValue());
      out.add(new Piece(at, stop, true));
      at = stop;
      e = ranges.higherEntry(e.getKey());
    }
    return out;
  }

  /** How many bytes of {@code [start, end)} no range holds (what adding it would add). */
  long missing(long start, long end) {
    long n = 0;
    for (Piece p : split(start, end)) {
      if (!p.held()) {
        n += p.length();
      }
    }
    return n;
  }

  /** A piece of a requested range: {@code [start, end)}, held by the ranges or not. */
  record Piece(long start, long end, boolean held) {
    int length() {
      return (int) (end - start);
    }
  }
}
