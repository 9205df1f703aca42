package io.strata.bench;

import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.S3ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * GetStatus of a path in a local-folder mount, timed one call after another, first with every store
 * answering (the baseline) and then while the S3 store of another mount does not answer (its server
 * process paused with SIGSTOP) and {@code stallers} client threads keep calling mkdir there, each
 * waiting its store timeout or being refused at once. The figures are the p50 and p99 of each.
 */
final class StoreStall {
  private StoreStall() {}

  /** p50 and p99 (ms) without and with the stall, and what the stalled calls met. */
  record Result(
      double baseP50,
      double baseP99,
      double stallP50,
      double stallP99,
      int calls,
      int stallers,
      long stalledTimeouts,
      long stalledRefused) {}

  static Result run(Path base, int calls, int stallers, Duration storeTimeout, Deadline deadline)
      throws Exception {
    try (S3ServerProcess s3 =
            new S3ServerProcess(
                Files.createDirectories(base.resolve("s3")), base.resolve("s3.log"));
        MultiProcessCluster cluster =
            HaBench.oneMaster(base.resolve("cluster"))
                .property("strata.master.ufs.s3.timeout", storeTimeout.toMillis() + "ms")
                .start();
        FileSystem fs = FileSystem.connect(cluster.clientConfig())) {
      try (S3Client client = s3.client()) {
        client.createBucket(b -> b.bucket("stall"));
        client.putObject(b -> b.bucket("stall").key("data/"), RequestBody.empty());
      }
      fs.mount("/s3", "s3://stall/data", s3.mountOptions(), false);
      fs.createDirectory("/local/target", true, true);
      timeStats(fs, calls, Duration.ZERO, deadline); // warm-up
      double[] before = timeStats(fs, calls, Duration.ZERO, deadline);

      s3.pause();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong timeouts = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      ExecutorService pool = Executors.newFixedThreadPool(stallers);
      try {
        for (int t = 0; t < stallers; t++) {
          int thread = t;
          pool.execute(
              () -> {
                for (int i = 0; !stop.get() && !deadline.passed(); i++) {
                  long start = System.nanoTime();
                  try {
                    fs.createDirectory("/s3/d" + thread + "-" + i, false, true);
                  } catch (StrataException e) {
                    boolean waited = System.nanoTime() - start > storeTimeout.toNanos() / 2;
                    (waited ? timeouts : refused).incrementAndGet();
                    if (!waited) {
                      // As an application that tries again after an error.
                      sleep(10);
                    }
                  }
                }
              });
        }
        // Until the first calls on /s3 reach the store and wait on it.
        MultiProcessCluster.waitFor(
            "calls waiting on the stalled store",
            Duration.ofSeconds(30),
            () -> {
              try {
                return fs.mountHealth().stream()
                    .anyMatch(h -> h.getPath().equals("/s3") && h.getCallsInProgress() > 0);
              } catch (StrataException e) {
                return false;
              }
            },
            null);
        // Long enough for the waiting calls to time out and the next ones to be refused.
        double[] during = timeStats(fs, calls, storeTimeout.multipliedBy(2), deadline);
        return new Result(
            percentile(before, 50),
            percentile(before, 99),
            percentile(during, 50),
            percentile(during, 99),
            during.length,
            stallers,
            timeouts.get(),
            refused.get());
      } finally {
        stop.set(true);
        s3.resume();
        pool.shutdown();
        pool.awaitTermination(storeTimeout.toSeconds() * 3 + 10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * GetStatus of the local path, one after another, each in ms: {@code calls} of them, and more
   * until {@code atLeast} passed.
   */
  private static double[] timeStats(FileSystem fs, int calls, Duration atLeast, Deadline deadline)
      throws StrataException {
    double[] ms = new double[calls];
    int n = 0;
    long end = System.nanoTime() + atLeast.toNanos();
    while (n < calls || System.nanoTime() < end) {
      if ((n & 255) == 0) {
        deadline.check("timing GetStatus " + n + " of " + calls);
      }
      if (n == ms.length) {
        ms = Arrays.copyOf(ms, ms.length * 2);
      }
      long start = System.nanoTime();
      fs.getStatus("/local/target");
      ms[n++] = (System.nanoTime() - start) / 1e6;
    }
    return Arrays.copyOf(ms, n);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static double percentile(double[] values, int p) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }
}
