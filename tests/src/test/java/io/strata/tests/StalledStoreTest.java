package io.strata.tests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.MountHealth;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A master with a local-folder mount and an S3 mount whose server stops answering (its process is
 * paused with SIGSTOP): the calls that need the S3 store (mkdir, rename, delete) wait at most its
 * timeout and then fail with one line naming the mount, the store and the key to raise; meanwhile
 * every call on the other mount answers at its normal speed; once the store has timed out, calls to
 * it fail at once, `fsadmin report` says so, and when the server answers again so does the mount.
 */
class StalledStoreTest {
  private static final String BUCKET = "stall";

  /** The S3 store's timeout in this test: far above what a call on the other mount takes. */
  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(8);

  /** What a call on the healthy mount may take at most, on a loaded two-core machine. */
  private static final Duration FAST = Duration.ofSeconds(3);

  @TempDir static Path dir;
  static S3ServerProcess s3;
  static MultiProcessCluster cluster;
  static FileSystem fs;

  @BeforeAll
  static void start() throws Exception {
    s3 = new S3ServerProcess(Files.createDirectories(dir.resolve("s3")), dir.resolve("s3.log"));
    try (S3Client client = s3.client()) {
      client.createBucket(b -> b.bucket(BUCKET));
      client.putObject(b -> b.bucket(BUCKET).key("data/"), RequestBody.empty());
      client.putObject(b -> b.bucket(BUCKET).key("data/a"), RequestBody.fromString("a"));
      client.putObject(b -> b.bucket(BUCKET).key("data/c"), RequestBody.fromString("c"));
    }
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(0)
            .property("strata.master.ufs.s3.timeout", STORE_TIMEOUT.toSeconds() + "s")
            .property("strata.master.ufs.unavailable.period", "4s")
            .start();
    fs = FileSystem.connect(cluster.clientConfig());
    fs.mount("/s3", "s3://" + BUCKET + "/data", s3.mountOptions(), false);
    // Loaded before the stall: /s3/a is known to the namespace.
    assertEquals(List.of("a", "c"), names("/s3"));
    for (int i = 0; i < 10; i++) {
      fs.createDirectory("/local/d" + i, true, true);
    }
  }

  @AfterAll
  static void stop() throws Exception {
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
    if (s3 != null) {
      s3.close();
    }
  }

  private static List<String> names(String path) throws StrataException {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus(path)) {
      while (it.hasNext()) {
        out.add(it.next().getName());
      }
    }
    return out;
  }

  private record Timed(long millis, Throwable failure) {}

  private static Callable<Timed> timed(Callable<?> call) {
    return () -> {
      long start = System.nanoTime();
      Throwable failure = null;
      try {
        call.call();
      } catch (Exception e) {
        failure = e;
      }
      return new Timed(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), failure);
    };
  }

  private static MountHealth health(String path) throws StrataException {
    for (MountHealth h : fs.mountHealth()) {
      if (h.getPath().equals(path)) {
        return h;
      }
    }
    throw new AssertionError("no health of " + path + " in " + fs.mountHealth());
  }

  @Test
  void aStoreThatStopsAnsweringDelaysOnlyTheCallsThatNeedIt() throws Exception {
    s3.pause();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Timed>> stalled =
          List.of(
              pool.submit(timed(() -> fs.createDirectory("/s3/newdir", false, false))),
              pool.submit(
                  timed(
                      () -> {
                        fs.rename("/s3/a", "/s3/b");
                        return null;
                      })),
              pool.submit(
                  timed(
                      () -> {
                        fs.delete("/s3/c", false);
                        return null;
                      })));
      MultiProcessCluster.waitFor(
          "the calls on /s3 to reach its store",
          Duration.ofSeconds(20),
          () -> {
            try {
              return health("/s3").getCallsInProgress() >= 1;
            } catch (StrataException e) {
              return false;
            }
          },
          null);

      // While they wait: the other mount answers as usual (reads, listings and changes).
      long slowest = 0;
      for (int i = 0; i < 10; i++) {
        int n = i;
        List<Timed> round =
            List.of(
                timed(() -> fs.getStatus("/local/d" + n)).call(),
                timed(() -> names("/local")).call(),
                timed(() -> fs.createDirectory("/local/new" + n, false, false)).call(),
                timed(() -> fs.getStatus("/s3")).call());
        for (Timed t : round) {
          assertEquals(null, t.failure(), "a call off the stalled store failed: " + t.failure());
          slowest = Math.max(slowest, t.millis());
        }
      }
      assertTrue(
          slowest < FAST.toMillis(),
          "a call on the other mount took "
              + slowest
              + " ms while the S3 store was stalled (its timeout is "
              + STORE_TIMEOUT
              + ")");
      assertFalse(stalled.get(0).isDone(), "the mkdir on the stalled store waits for it");

      // The stalled calls fail after the store's timeout, each with one line that says what.
      for (Future<Timed> f : stalled) {
        Timed t = f.get(60, TimeUnit.SECONDS);
        assertTrue(t.failure() instanceof StrataException, "failed: " + t.failure());
        StrataException e = (StrataException) t.failure();
        assertEquals(ErrorCode.DEADLINE_EXCEEDED, e.code(), e.getMessage());
        assertTrue(
            e.getMessage().contains("mount /s3")
                && e.getMessage().contains("strata.master.ufs.s3.timeout"),
            e.getMessage());
        assertFalse(
            e.getMessage().contains("\n") || e.getMessage().contains("CallOptions"),
            e.getMessage());
        assertTrue(t.millis() < STORE_TIMEOUT.toMillis() * 3, t.millis() + " ms");
      }
    } finally {
      pool.shutdownNow();
    }

    // Timed out in a row: the mount answers at once now, instead of stacking callers up.
    long start = System.nanoTime();
    StrataException refused =
        assertThrows(StrataException.class, () -> fs.createDirectory("/s3/another", false, false));
    assertTrue(System.nanoTime() - start < FAST.toNanos(), "refused at once");
    assertTrue(refused.getMessage().contains("is not answering"), refused.getMessage());
    MultiProcessCluster.ShellResult cli = cluster.shell("fs", "mkdir", "/s3/from-cli");
    assertNotEquals(0, cli.exitCode());
    assertEquals(1, cli.stderr().strip().lines().count(), cli.stderr());
    assertTrue(cli.stderr().startsWith("strata: ") && cli.stderr().contains("/s3"), cli.stderr());
    MultiProcessCluster.ShellResult report = cluster.shell("fsadmin", "report");
    assertEquals(0, report.exitCode(), report.stderr());
    assertTrue(report.stdout().contains("NOT ANSWERING"), report.stdout());

    // Answering again: the next call let through finds it so.
    s3.resume();
    MultiProcessCluster.waitFor(
        "the S3 mount to answer again",
        Duration.ofSeconds(60),
        () -> {
          try {
            fs.createDirectory("/s3/later", false, true);
            return true;
          } catch (StrataException e) {
            return false;
          }
        },
        null);
    assertTrue(health("/s3").getAnswering());
    assertTrue(names("/s3").contains("later"));
  }
}
