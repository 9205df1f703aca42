package io.strata.common;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories for the background pools of every process: daemon threads (a process never stays
 * up for a pool it forgot to shut down) with names that say what they do, for thread dumps and
 * logs. Kept here rather than taken from Guava's {@code ThreadFactoryBuilder}: Guava reaches the
 * modules only through gRPC's dependencies, and its numbers start at 0 where the thread names
 * operators know start at 1.
 */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** Daemon threads named {@code prefix} followed by 1, 2, 3 and so on. */
  public static ThreadFactory numbered(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> daemon(r, prefix + n.incrementAndGet());
  }

  /** Daemon threads that all have the name {@code name} (for a pool of one thread). */
  public static ThreadFactory named(String name) {
    return r -> daemon(r, name);
  }

  /** A new daemon thread, not started, that runs {@code r}. */
  public static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
