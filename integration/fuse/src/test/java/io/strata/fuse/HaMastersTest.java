package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.strata.client.CloseableIterator;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.proto.FileInfo;
import io.strata.proto.FileSystemMasterGrpc;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.tests.FuseProcess;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three master processes replicating one journal, two workers, a FUSE mount read with ordinary file
 * I/O and a client reading and changing the namespace, all the while masters are killed (leader,
 * follower, the leader again once the first is back), the leader is paused and resumed, and a
 * follower loses its journal folder; then a worker, the S3 proxy and a FUSE mount process that
 * writes are killed in turn. Files are written all along through the client, that mount and the
 * proxy ({@link WriteLoad}). Every time: no read fails or returns other bytes, every acknowledged
 * change and write is there exactly once with its bytes, no half-written file is left, a load job
 * started before a fail-over finishes, and the masters end on the same journal sequence.
 */
class HaMastersTest {
  private static final int FILES = 24;
  private static final int FILE_SIZE = 256 << 10;
  private static final Duration SETTLE = Duration.ofSeconds(90);
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem fs;
  static FuseMount mount;
  static Path point;
  static final Map<String, String> sha = new LinkedHashMap<>();

  /** Reads, changes and their failures, from background threads while masters fail. */
  static final AtomicBoolean stop = new AtomicBoolean();

  static final AtomicLong reads = new AtomicLong();
  static final List<String> failures = new CopyOnWriteArrayList<>();
  static final Set<String> acknowledged = new ConcurrentSkipListSet<>();
  static final List<Thread> threads = new ArrayList<>();

  static final String LOAD = "/load";
  static final String ACCESS_KEY = "haaccesskey";
  static final String SECRET_KEY = "ha-secret-key-0123456789";
  static final WriteLoad load = new WriteLoad(LOAD);
  static Path writeMount;
  static FuseProcess writeFuse;

  @BeforeAll
  static void start() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .masters(3)
            .workers(2)
            // Small enough that the log is purged behind snapshots during the test, so the
            // follower that loses its folder must be sent a snapshot.
            .property("strata.master.journal.checkpoint.entries", "100")
            .property("strata.client.master.failover.timeout", "60s")
            // A dead writer's file goes soon after its writer; live ones renew every second.
            .property("strata.master.lease.timeout", "5s")
            .property("strata.client.lease.renew.interval", "1s")
            .start();
    Path ufs = cluster.underStoreRoot();
    Files.createDirectories(ufs.resolve("data"));
    Files.createDirectories(ufs.resolve("loadme"));
    for (int i = 0; i < FILES; i++) {
      String name = String.format("f%02d.bin", i);
      sha.put(name, TestTree.writeRandom(ufs.resolve("data").resolve(name), FILE_SIZE, i).sha256());
      TestTree.writeRandom(ufs.resolve("loadme").resolve(name), FILE_SIZE, 1000 + i);
    }
    fs = FileSystem.connect(cluster.clientConfig());
    fs.createDirectory("/changes", true, true);
    // Half the files are cached before the masters start failing, half are read first during.
    for (int i = 0; i < FILES / 2; i++) {
      readThroughClient(String.format("f%02d.bin", i));
    }
    point = Files.createDirectories(dir.resolve("mnt"));
    mount =
        FuseMount.mount(
            StrataFuseFileSystem.create(fs, "/"),
            point,
            List.of("-o", "attr_timeout=1,entry_timeout=1"),
            Duration.ofSeconds(30));
    threads.add(loop("fuse-reader", HaMastersTest::readThroughMount));
    threads.add(
        loop(
            "client-reader",
            () -> {
              for (String name : sha.keySet()) {
                readThroughClient(name);
              }
            }));
    threads.add(loop("writer", HaMastersTest::changeNamespace));
    for (Thread t : threads) {
      t.start();
    }

    // Files written through the client, a FUSE mount process and the S3 proxy, with those
    // processes killed in turn too.
    fs.createDirectory(LOAD, false, false);
    cluster.writeProxyCredentials(
        ACCESS_KEY + " " + SECRET_KEY + " " + System.getProperty("user.name"));
    cluster.startProxy(Map.of(), List.of());
    writeMount = Files.createDirectories(dir.resolve("write-mnt"));
    writeFuse = startWriteFuse();
  }

  private static FuseProcess startWriteFuse() throws IOException {
    return cluster.startFuse(
        writeMount, Map.of("strata.fuse.web.port", "-1"), io.strata.tests.Release.current());
  }

  @AfterAll
  static void stopAll() throws Exception {
    stop.set(true);
    load.stop();
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(90));
    }
    if (mount != null) {
      mount.close();
      if (FuseMount.isMounted(point)) {
        FuseMount.lazyUnmount(point);
      }
    }
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private interface Step {
    void run() throws Exception;
  }

  /** A daemon thread repeating {@code step} until the test ends; a failure is recorded. */
  private static Thread loop(String name, Step step) {
    Thread t =
        new Thread(
            () -> {
              long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(15);
              while (!stop.get() && System.nanoTime() < deadline) {
                try {
                  step.run();
                } catch (Exception | AssertionError e) {
                  failures.add(name + " at " + java.time.Instant.now() + ": " + e);
                }
              }
            },
            name);
    t.setDaemon(true);
    return t;
  }

  private static void readThroughMount() throws IOException {
    for (Map.Entry<String, String> f : sha.entrySet()) {
      byte[] bytes = Files.readAllBytes(point.resolve("data").resolve(f.getKey()));
      if (!f.getValue().equals(TestTree.sha256(bytes))) {
        failures.add("mount read other bytes of " + f.getKey());
      }
      reads.incrementAndGet();
      if (stop.get()) {
        return;
      }
    }
  }

  private static void readThroughClient(String name) throws IOException {
    try (FileInStream in = fs.openFile("/data/" + name)) {
      if (!sha.get(name).equals(TestTree.sha256(in))) {
        failures.add("client read other bytes of " + name);
      }
    }
    reads.incrementAndGet();
  }

  private static final AtomicLong nextChange = new AtomicLong();

  /** Creates one directory; acknowledged ones must all be there, exactly once, at the end. */
  private static void changeNamespace() throws Exception {
    String path = "/changes/c" + nextChange.incrementAndGet();
    fs.createDirectory(path, false, false);
    acknowledged.add(path);
    Thread.sleep(20);
  }

  /** Waits (bounded) until the test's threads made progress: reads and changes both moved. */
  private static void awaitProgress(String after) throws InterruptedException {
    long readsBefore = reads.get();
    int changesBefore = acknowledged.size();
    long deadline = System.nanoTime() + SETTLE.toNanos();
    while (reads.get() < readsBefore + FILES || acknowledged.size() < changesBefore + 20) {
      assertTrue(
          System.nanoTime() < deadline,
          "no progress within "
              + SETTLE.toSeconds()
              + " s after "
              + after
              + ": reads "
              + readsBefore
              + " -> "
              + reads.get()
              + ", changes "
              + changesBefore
              + " -> "
              + acknowledged.size()
              + "; failures "
              + failures);
      Thread.sleep(100);
    }
    assertEquals(List.of(), failures, "after " + after);
  }

  private static int leader() {
    return cluster.awaitLeader(SETTLE);
  }

  private static GetMasterInfoResponse info(int master) {
    String address = cluster.masterAddresses().get(master);
    ManagedChannel c = NettyChannelBuilder.forTarget(address).usePlaintext().build();
    try {
      return FileSystemMasterGrpc.newBlockingStub(c)
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
    } finally {
      c.shutdownNow();
    }
  }

  /** Waits (bounded) until every master has applied as far as the leader. */
  private static void awaitMastersAgree(String after) throws InterruptedException {
    long deadline = System.nanoTime() + SETTLE.toNanos();
    while (true) {
      List<Long> sequences = new ArrayList<>();
      try {
        long leaderSequence = info(leader()).getJournalSequence();
        for (int i = 0; i < cluster.masterCount(); i++) {
          sequences.add(info(i).getJournalSequence());
        }
        if (sequences.stream().allMatch(s -> s >= leaderSequence)) {
          return;
        }
      } catch (RuntimeException e) {
        sequences.add(-1L);
      }
      assertTrue(
          System.nanoTime() < deadline,
          "masters did not catch up after " + after + ": " + sequences);
      Thread.sleep(200);
    }
  }

  @Test
  void readersAndWritersGoOnThroughEveryKindOfMasterFailure() throws Exception {
    awaitProgress("start");

    // 1. The leader is killed while a load job runs; the job finishes on the new leader.
    fs.submitLoad("/loadme", LoadJobOptions.getDefaultInstance());
    int first = leader();
    cluster.killMaster(first);
    int second = leader();
    assertNotEquals(first, second);
    awaitProgress("kill -9 of the leader");
    long deadline = System.nanoTime() + SETTLE.toNanos();
    LoadJobState state;
    while ((state = fs.loadStatus("/loadme", 10).getState()) != LoadJobState.LOAD_SUCCEEDED) {
      assertTrue(System.nanoTime() < deadline, "load job ended " + state + " / still running");
      Thread.sleep(200);
    }
    cluster.restartMaster(first);
    awaitMastersAgree("the killed leader came back");

    // 2. A follower is killed and comes back.
    int follower = (leader() + 1) % 3;
    cluster.killMaster(follower);
    awaitProgress("kill -9 of a follower");
    cluster.restartMaster(follower);
    awaitMastersAgree("the killed follower came back");

    // 3. The leader again, now that every master is back.
    int third = leader();
    cluster.killMaster(third);
    awaitProgress("kill -9 of the leader again");
    cluster.restartMaster(third);
    awaitMastersAgree("the second killed leader came back");

    // 4. The leader is paused: the others elect a leader; resumed, it follows and never
    // serves a write of its old term.
    int paused = leader();
    cluster.pauseMaster(paused);
    try {
      long electedBy = System.nanoTime() + SETTLE.toNanos();
      while (cluster.leaderIndex() == paused || cluster.leaderIndex() < 0) {
        assertTrue(System.nanoTime() < electedBy, "no new leader while the leader was paused");
        Thread.sleep(100);
      }
      awaitProgress("SIGSTOP of the leader");
    } finally {
      cluster.resumeMaster(paused);
    }
    awaitMastersAgree("the paused leader resumed");
    awaitProgress("SIGCONT of the old leader");

    // 5. A follower loses its journal folder; restarted, it catches up from a snapshot.
    int wiped = (leader() + 1) % 3;
    cluster.killMaster(wiped);
    deleteTree(cluster.masterJournalDir(wiped));
    awaitProgress("kill -9 of the follower to wipe");
    cluster.restartMaster(wiped);
    awaitMastersAgree("the wiped follower restarted");
    awaitProgress("the wiped follower's catch-up");

    // From here on, files are written too (after the steps above: at this test's snapshot every
    // 100 entries, a write load makes snapshots so often that the wiped follower's install
    // above is not the subject any more).
    load.start(fs, writeMount, cluster.proxyPort(), ACCESS_KEY, SECRET_KEY);
    load.awaitProgress(3, SETTLE, "the start of the writers");

    // 6. The leader is killed while files are written.
    int writing = leader();
    cluster.killMaster(writing);
    load.awaitProgress(3, SETTLE, "kill -9 of the leader during writes");
    cluster.restartMaster(writing);
    awaitMastersAgree("the leader killed during writes came back");

    // 7. A worker is killed while files are written: writes go to the other, or wait for it.
    cluster.killWorker(0);
    load.awaitProgress(3, SETTLE, "kill -9 of a worker");
    awaitProgress("kill -9 of a worker");
    cluster.startWorker(0);
    cluster.waitForLiveWorkers(2, SETTLE);

    // 8. The S3 proxy is killed and started again.
    cluster.killProxy();
    cluster.startProxy(Map.of(), List.of());
    load.awaitProgress(3, SETTLE, "kill -9 of the proxy");

    // 9. The FUSE process that writes is killed (its staged copies die with it) and mounted
    // again.
    cluster.killFuse(writeFuse);
    writeFuse = startWriteFuse();
    load.awaitProgress(3, SETTLE, "kill -9 of the writing mount");

    // Every acknowledged write is there with its bytes; nothing half-written is visible.
    load.stop();
    assertTrue(load.acknowledgedCount() > 0);
    load.verify(fs, Duration.ofSeconds(60));

    // Every acknowledged change is there once; nothing else is.
    stop.set(true);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(90));
    }
    Set<String> listed = new TreeSet<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus("/changes")) {
      while (it.hasNext()) {
        assertTrue(listed.add(it.next().getPath()), "listed twice");
      }
    }
    assertEquals(new TreeSet<>(acknowledged), listed);
    assertEquals(List.of(), failures);
    awaitMastersAgree("the end");
    long inodes = info(0).getInodeCount();
    for (int i = 1; i < 3; i++) {
      assertEquals(inodes, info(i).getInodeCount(), "inodes of master " + i);
    }
  }

  private static void deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      List<Path> all = new ArrayList<>(walk.toList());
      Collections.sort(all, Comparator.reverseOrder());
      for (Path p : all) {
        Files.delete(p);
      }
    }
  }
}
