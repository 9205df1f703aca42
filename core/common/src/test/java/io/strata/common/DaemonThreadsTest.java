package io.strata.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

class DaemonThreadsTest {
  @Test
  void numberedThreadsAreDaemonsCountedFromOne() {
    ThreadFactory f = DaemonThreads.numbered("pool-");
    Thread first = f.newThread(() -> {});
    Thread second = f.newThread(() -> {});
    assertEquals("pool-1", first.getName());
    assertEquals("pool-2", second.getName());
    assertTrue(first.isDaemon() && second.isDaemon());
  }

  @Test
  void namedThreadsShareTheirName() {
    Thread t = DaemonThreads.named("checker").newThread(() -> {});
    assertEquals("checker", t.getName());
    assertTrue(t.isDaemon());
  }
}
