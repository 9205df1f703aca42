package io.strata.server.common;

import io.strata.common.Version;
import io.strata.common.conf.ConfigException;
import io.strata.common.conf.StrataConfig;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a server process from its {@code main}: loads and validates configuration, starts the
 * server, stops it on SIGTERM/SIGINT, and turns start-up failures into one clear line on stderr and
 * a non-zero exit (2 for configuration errors, 1 otherwise).
 */
public final class ProcessMain {
  private static final Logger LOG = LoggerFactory.getLogger(ProcessMain.class);

  private ProcessMain() {}

  /** A server that can be started once and closed once. */
  public interface Server extends AutoCloseable {
    void start() throws Exception;

    /**
     * Called on a stop request (SIGTERM) before {@link #close}: lets work in flight finish while no
     * new work comes (a worker drains its reads). Returns when done; default none.
     */
    default void drain() throws Exception {}
  }

  /** Makes the server from the loaded configuration. */
  @FunctionalInterface
  public interface ServerFactory {
    Server create(StrataConfig config) throws Exception;
  }

  /** Which malloc serves native memory (RocksDB, Netty): tcmalloc when the launcher preloads it. */
  static String allocator() {
    String preload = System.getenv("LD_PRELOAD");
    return preload != null && preload.contains("tcmalloc")
        ? "tcmalloc (" + preload + ")"
        : "glibc malloc (tcmalloc not preloaded; bin/setup installs it)";
  }

  public static void run(String processName, ServerFactory factory) {
    io.strata.common.rpc.VersionHeaders.setProcessKind(processName);
    StrataConfig config;
    try {
      config = StrataConfig.load();
    } catch (ConfigException e) {
      System.err.println("Cannot start the " + processName + ": " + e.getMessage());
      System.exit(2);
      return;
    }
    Server server;
    try {
      server = factory.create(config);
      server.start();
    } catch (ConfigException | IllegalArgumentException e) {
      System.err.println("Cannot start the " + processName + ": " + e.getMessage());
      LOG.error("Cannot start the {}", processName, e);
      System.exit(2);
      return;
    } catch (Throwable t) {
      System.err.println("Cannot start the " + processName + ": " + t);
      LOG.error("Cannot start the {}", processName, t);
      System.exit(1);
      return;
    }
    LOG.info(
        "Strata {} {} started (pid {}); native memory allocator: {}",
        processName,
        Version.RELEASE,
        ProcessHandle.current().pid(),
        allocator());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  LOG.info("Stopping the {}", processName);
                  try {
                    server.drain();
                  } catch (Exception e) {
                    LOG.warn("Error while draining the {}", processName, e);
                  }
                  try {
                    server.close();
                  } catch (Exception e) {
                    LOG.warn("Error while stopping the {}", processName, e);
                  }
                  stopped.countDown();
                },
                "shutdown"));
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
