package io.strata.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerHashingTest {
  @Test
  void losingAWorkerMovesOnlyItsBlocks() {
    List<Long> workers = List.of(1L, 2L, 3L, 4L);
    List<Long> three = List.of(1L, 2L, 4L);
    int moved = 0;
    for (long block = 0; block < 10_000; block++) {
      long before = WorkerHashing.pick(block, workers, w -> w);
      long after = WorkerHashing.pick(block, three, w -> w);
      if (before != 3L) {
        assertEquals(before, after, "block " + block + " moved though its worker stayed");
      } else {
        moved++;
      }
    }
    // About a quarter of the blocks lived on worker 3.
    assertTrue(moved > 2000 && moved < 3000, "moved " + moved);
  }

  @Test
  void rankStartsWithPickAndHoldsEveryWorker() {
    List<Long> workers = new ArrayList<>(List.of(7L, 9L, 11L));
    for (long block = 0; block < 100; block++) {
      List<Long> ranked = WorkerHashing.rank(block, workers, w -> w);
      assertEquals(WorkerHashing.pick(block, workers, w -> w), ranked.get(0));
      assertEquals(3, ranked.size());
    }
  }

  @Test
  void blockIdsRoundTrip() {
    long id = BlockIds.blockId(123456789L, 42);
    assertEquals(123456789L, BlockIds.fileId(id));
    assertEquals(42, BlockIds.index(id));
    assertEquals(0, BlockIds.blockCount(0, 64));
    assertEquals(1, BlockIds.blockCount(64, 64));
    assertEquals(2, BlockIds.blockCount(65, 64));
  }
}
