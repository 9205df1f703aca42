package io.strata.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.strata.proto.BlockReport;
import io.strata.worker.master.BlockChangeLog;
import java.util.List;
import org.junit.jupiter.api.Test;

class BlockChangeLogTest {
  private static BlockReport block(long id) {
    return BlockReport.newBuilder().setBlockId(id).setLength(10).setTier("MEM").build();
  }

  @Test
  void failedHeartbeatGivesBackItsChangesUnlessNewerOnesCame() {
    BlockChangeLog log = new BlockChangeLog();
    log.added(block(1));
    log.added(block(2));
    log.removed(3);
    log.removed(4);
    BlockChangeLog.Changes sent = log.drain();
    assertEquals(List.of(block(1), block(2)), sent.added());
    assertEquals(List.of(3L, 4L), sent.removed());
    // While the heartbeat was out: block 2 was evicted and block 4 cached again.
    log.removed(2);
    log.added(block(4));
    log.restore(sent);
    BlockChangeLog.Changes next = log.drain();
    assertEquals(List.of(block(4), block(1)), next.added());
    assertEquals(List.of(2L, 3L), next.removed());
    assertEquals(0, log.drain().added().size());
  }

  @Test
  void latestChangeOfABlockWins() {
    BlockChangeLog log = new BlockChangeLog();
    log.added(block(1));
    log.removed(1);
    log.removed(2);
    log.added(block(2));
    BlockChangeLog.Changes c = log.drain();
    assertEquals(List.of(block(2)), c.added());
    assertEquals(List.of(1L), c.removed());
  }
}
