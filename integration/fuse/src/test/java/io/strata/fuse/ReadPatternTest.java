package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReadPatternTest {
  private static final int PAGE = 4096;
  private static final long FILE = 1L << 30;

  @Test
  void sequentialReadsGrowTheWindowFromOnePageToTheMax() {
    ReadPattern p = new ReadPattern(PAGE, 32 * 1024);
    long[] windows = new long[6];
    for (int i = 0; i < windows.length; i++) {
      assertTrue(p.onRead(i * 8192L, 8192, FILE).sequential());
      windows[i] = p.window();
    }
    assertEquals("[4096, 8192, 16384, 32768, 32768, 32768]", java.util.Arrays.toString(windows));
  }

  @Test
  void readAheadRangesArePageAlignedAndNeverRepeat() {
    ReadPattern p = new ReadPattern(PAGE, 64 * 1024);
    ReadPattern.Plan first = p.onRead(0, 1000, FILE);
    assertEquals(PAGE, first.aheadFrom());
    assertEquals(2 * PAGE, first.aheadTo());
    long claimedEnd = first.aheadTo();
    for (long off = 1000; off < 200_000; off += 1000) {
      ReadPattern.Plan plan = p.onRead(off, 1000, FILE);
      if (plan.readsAhead()) {
        assertEquals(0, plan.aheadFrom() % PAGE);
        assertEquals(0, plan.aheadTo() % PAGE);
        assertTrue(plan.aheadFrom() >= claimedEnd, "range " + plan + " repeats " + claimedEnd);
        assertTrue(plan.aheadFrom() >= off + 1000);
        claimedEnd = plan.aheadTo();
      }
    }
  }

  @Test
  void readAheadStopsAtTheEndOfTheFile() {
    long length = 3 * PAGE + 100;
    ReadPattern p = new ReadPattern(PAGE, 1 << 20);
    p.onRead(0, PAGE, length);
    ReadPattern.Plan plan = p.onRead(PAGE, PAGE, length);
    assertEquals(length, plan.aheadTo());
    ReadPattern.Plan last = p.onRead(2 * PAGE, PAGE, length);
    assertFalse(last.readsAhead());
  }

  @Test
  void aRandomReadResetsTheWindow() {
    ReadPattern p = new ReadPattern(PAGE, 1 << 20);
    for (int i = 0; i < 4; i++) {
      p.onRead(i * 65536L, 65536, FILE);
    }
    assertTrue(p.window() > PAGE);
    ReadPattern.Plan jump = p.onRead(500L << 20, 4096, FILE);
    assertFalse(jump.sequential());
    assertFalse(jump.readsAhead());
    assertEquals(0, p.window());
    // Reading on from the new place is sequential again, starting from one page.
    assertTrue(p.onRead((500L << 20) + 4096, 4096, FILE).sequential());
    assertEquals(PAGE, p.window());
  }

  @Test
  void theFirstReadIsRandomUnlessItStartsTheFile() {
    assertFalse(new ReadPattern(PAGE, 1 << 20).onRead(100L << 20, 4096, FILE).sequential());
    assertTrue(new ReadPattern(PAGE, 1 << 20).onRead(0, 4096, FILE).sequential());
  }

  @Test
  void slightlyReorderedKernelReadsStaySequential() {
    ReadPattern p = new ReadPattern(PAGE, 1 << 20);
    int chunk = 128 * 1024;
    long[] order = {0, 2, 1, 3, 5, 4, 6};
    for (long i : order) {
      assertTrue(p.onRead(i * chunk, chunk, FILE).sequential(), "chunk " + i);
    }
  }

  @Test
  void noReadAheadWhenTheMaxIsZero() {
    ReadPattern p = new ReadPattern(PAGE, 0);
    ReadPattern.Plan plan = p.onRead(0, PAGE, FILE);
    assertTrue(plan.sequential());
    assertFalse(plan.readsAhead());
    assertFalse(p.onRead(PAGE, PAGE, FILE).readsAhead());
  }

  @Test
  void skippedReadAheadIsAskedForAgain() {
    ReadPattern skipped = new ReadPattern(PAGE, 1 << 20);
    ReadPattern done = new ReadPattern(PAGE, 1 << 20);
    ReadPattern.Plan first = skipped.onRead(0, PAGE, FILE);
    done.onRead(0, PAGE, FILE);
    skipped.readAheadSkipped(first.aheadFrom());
    // A read that does not move the end on: only the skipped handle asks for that range again.
    assertEquals(first.aheadFrom(), skipped.onRead(100, 100, FILE).aheadFrom());
    assertEquals(first.aheadTo(), done.onRead(100, 100, FILE).aheadFrom());
  }
}
