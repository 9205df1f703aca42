package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class ByteRangesTest {
  @Test
  void touchingAndOverlappingRangesMerge() {
    ByteRanges r = new ByteRanges();
    r.add(10, 20);
    r.add(30, 40);
    assertEquals(2, r.count());
    r.add(20, 30);
    assertEquals(1, r.count());
    assertEquals(30, r.bytes());
    r.add(5, 12);
    r.add(38, 50);
    assertEquals(1, r.count());
    assertEquals(45, r.bytes());
    r.add(7, 9);
    assertEquals(45, r.bytes());
  }

  @Test
  void truncationCutsAndDropsRanges() {
    ByteRanges r = new ByteRanges();
    r.add(0, 10);
    r.add(20, 30);
    r.add(40, 50);
    r.truncate(25);
    assertEquals(15, r.bytes());
    assertEquals(
        List.of(
            new ByteRanges.Piece(0, 10, true),
            new ByteRanges.Piece(10, 20, false),
            new ByteRanges.Piece(20, 25, true),
            new ByteRanges.Piece(25, 60, false)),
        r.split(0, 60));
    r.truncate(0);
    assertEquals(0, r.bytes());
    assertEquals(0, r.count());
  }

  @Test
  void splitCoversTheRangeExactly() {
    ByteRanges r = new ByteRanges();
    r.add(100, 200);
    assertEquals(
        List.of(new ByteRanges.Piece(150, 200, true), new ByteRanges.Piece(200, 250, false)),
        r.split(150, 250));
    assertEquals(List.of(new ByteRanges.Piece(0, 50, false)), r.split(0, 50));
    assertEquals(List.of(new ByteRanges.Piece(120, 130, true)), r.split(120, 130));
  }

  /** Random writes and cuts against a plain boolean array of the same bytes. */
  @Test
  void agreesWithAByteMapUnderRandomChanges() {
    Random random = new Random(7);
    ByteRanges r = new ByteRanges();
    boolean[] held = new boolean[4096];
    for (int i = 0; i < 2000; i++) {
      if (random.nextInt(20) == 0) {
        int cut = random.nextInt(held.length);
        r.truncate(cut);
        java.util.Arrays.fill(held, cut, held.length, false);
      } else {
        int start = random.nextInt(held.length - 64);
        int end = start + 1 + random.nextInt(64);
        r.add(start, end);
        java.util.Arrays.fill(held, start, end, true);
      }
      long count = 0;
      for (boolean b : held) {
        count += b ? 1 : 0;
      }
      assertEquals(count, r.bytes());
      for (ByteRanges.Piece p : r.split(0, held.length)) {
        for (long b = p.start(); b < p.end(); b++) {
          assertEquals(held[(int) b], p.held(), "byte " + b + " after " + i + " changes");
        }
      }
    }
  }
}
