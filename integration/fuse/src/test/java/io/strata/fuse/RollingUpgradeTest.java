package io.strata.fuse;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.client.FileInStream;
import io.strata.client.FileSystem;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.LoadJobStatus;
import io.strata.tests.FuseProcess;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.MultiProcessCluster.ShellResult;
import io.strata.tests.Release;
import io.strata.tests.TestTree;
import io.strata.tests.upgrade.ReaderLoop;
import io.strata.tests.upgrade.RollingUpgrade;
import io.strata.tests.upgrade.WriterLoop;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Rolling upgrades between two real releases: a cluster of three masters and two workers of the
 * previous release (tests/compat/PREVIOUS_RELEASE, built from this repository's history), with a
 * FUSE mount and an S3 proxy, is upgraded one process at a time by the commands of
 * docs/rolling-upgrade.md while readers read cached and uncached files through the mount and
 * through the client, and writers create, rename and delete files through the client and the mount;
 * or partly upgraded, refused a finalize, and rolled back. Either way no read fails or returns
 * wrong bytes, every write that was acknowledged is there exactly once with its bytes (and every
 * acknowledged delete is gone), the namespace read and the load job are as before, and `upgrade
 * status` shows one release at the end.
 */
class RollingUpgradeTest {
  static final long BLOCK = 1 << 20;
  static final String MOUNT_READER = "fuse";
  static final String MOUNT_WRITER = "fuse-writer";

  /** Where the writers write, outside what the readers read and the dump compares. */
  static final String WORK = "/work";

  static final String ACCESS_KEY = "upgradeaccesskey";
  static final String SECRET_KEY = "upgrade-secret-key-0123456789";
  @TempDir Path dir;

  /** A cluster of the previous release with data, a load job, a FUSE mount and readers. */
  private final class Scenario implements AutoCloseable {
    final Release previous = Release.previous();
    final Release current = Release.current();
    final MultiProcessCluster cluster;
    final FileSystem fs;
    final RollingUpgrade upgrade;
    Path point;
    FuseProcess fuse;
    final List<ReaderLoop.Expected> files = new ArrayList<>();
    final Map<String, byte[]> contents = new java.util.HashMap<>();
    ReaderLoop readers;
    WriterLoop writers;
    List<String> namespaceBefore;
    LoadJobStatus jobBefore;

    Scenario(boolean proxy) throws Exception {
      cluster =
          MultiProcessCluster.builder(dir.resolve("cluster"))
              .masters(3)
              .workers(2)
              .release(previous)
              .property("strata.master.file.block.size", Long.toString(BLOCK))
              .start();
      fs = FileSystem.connect(cluster.clientConfig());
      upgrade = new RollingUpgrade(cluster);
      try {
        setUp(proxy);
      } catch (Exception | Error e) {
        upgrade.close();
        fs.close();
        cluster.close();
        throw e;
      }
    }

    private void setUp(boolean proxy) throws Exception {
      Path ufs = cluster.underStoreRoot();
      for (int i = 0; i < 6; i++) {
        write(ufs, "/data/cached/part-" + i + ".bin", BLOCK + 4096L * i + 7, i);
        write(ufs, "/data/cold/part-" + i + ".bin", BLOCK / 2 + 1024L * i + 3, 100 + i);
      }
      upgrade.strata("fs", "load", "/data/cached");
      jobBefore = fs.loadStatus("/data/cached", 0);
      namespaceBefore = dump(fs);
      point = Files.createDirectories(dir.resolve("mnt"));
      fuse = cluster.startFuse(point, Map.of("strata.fuse.web.port", "-1"), previous);
      if (proxy) {
        cluster.writeProxyCredentials(
            ACCESS_KEY + " " + SECRET_KEY + " " + System.getProperty("user.name"));
        cluster.startProxy(Map.of(), List.of(), previous);
        assertProxyReads();
      }
      readers =
          new ReaderLoop(files)
              .reader("client-1", this::readWithClient)
              .reader("client-2", this::readWithClient)
              .reader(MOUNT_READER, p -> Files.readAllBytes(point.resolve(p.substring(1))));
      readers.start("before", Duration.ofMinutes(12));
      for (String folder : WriterLoop.folders()) {
        fs.createDirectory(WORK + "/" + folder, true, true);
      }
      writers =
          new WriterLoop(3000, 150)
              .writer(
                  "client",
                  new WriterLoop.Target() {
                    @Override
                    public void create(String path, byte[] bytes) throws java.io.IOException {
                      try (var out = fs.createFile(WORK + "/" + path)) {
                        out.write(bytes);
                      }
                    }

                    @Override
                    public void rename(String from, String to) throws java.io.IOException {
                      fs.rename(WORK + "/" + from, WORK + "/" + to);
                    }

                    @Override
                    public void delete(String path) throws java.io.IOException {
                      fs.delete(WORK + "/" + path, false);
                    }
                  })
              .writer(
                  MOUNT_WRITER,
                  new WriterLoop.Target() {
                    @Override
                    public void create(String path, byte[] bytes) throws java.io.IOException {
                      Files.write(point.resolve(WORK.substring(1)).resolve(path), bytes);
                    }

                    @Override
                    public void rename(String from, String to) throws java.io.IOException {
                      Path work = point.resolve(WORK.substring(1));
                      Files.move(work.resolve(from), work.resolve(to));
                    }

                    @Override
                    public void delete(String path) throws java.io.IOException {
                      Files.delete(point.resolve(WORK.substring(1)).resolve(path));
                    }
                  });
      writers.start(Duration.ofMinutes(12));
      await("reads before the upgrade")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> readers.phases().get("before").reads() > 0);
    }

    private void write(Path ufs, String path, long length, long seed) throws Exception {
      Path file = ufs.resolve(path.substring(1));
      Files.createDirectories(file.getParent());
      TestTree.writeRandom(file, length, seed);
      byte[] bytes = Files.readAllBytes(file);
      contents.put(path, bytes);
      files.add(ReaderLoop.Expected.of(path, bytes));
    }

    private byte[] readWithClient(String path) throws java.io.IOException {
      try (FileInStream in = fs.openFile(path)) {
        return in.readAllBytes();
      }
    }

    void assertProxyReads() throws Exception {
      try (S3Client s3 =
          S3Client.builder()
              .endpointOverride(URI.create("http://127.0.0.1:" + cluster.proxyPort()))
              .region(Region.US_EAST_1)
              .forcePathStyle(true)
              .credentialsProvider(
                  StaticCredentialsProvider.create(
                      AwsBasicCredentials.create(ACCESS_KEY, SECRET_KEY)))
              .build()) {
        assertArrayEquals(
            contents.get("/data/cold/part-1.bin"),
            s3.getObjectAsBytes(b -> b.bucket("data").key("cold/part-1.bin")).asByteArray());
      }
    }

    /** Swaps the FUSE mount for one of {@code to}, with its reader paused (the runbook's way). */
    void remount(Release to) throws Exception {
      readers.pause(MOUNT_READER);
      writers.pause(MOUNT_WRITER);
      assertTrue(cluster.stopFuse(fuse), "the mount did not go on SIGTERM");
      fuse = cluster.startFuse(point, Map.of("strata.fuse.web.port", "-1"), to);
      readers.resume(MOUNT_READER);
      writers.resume(MOUNT_WRITER);
    }

    /** Stops the readers; checks no read failed and the namespace and load job are unchanged. */
    void assertNothingLost() throws Exception {
      Map<String, ReaderLoop.PhaseStats> phases = readers.phases();
      String last = new ArrayList<>(phases.keySet()).get(phases.size() - 1);
      long readsSoFar = phases.get(last).reads();
      await("more reads in phase " + last + ", after its last step")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> readers.phases().get(last).reads() > readsSoFar);
      readers.stop();
      assertEquals(0, readers.totalFailures(), String.join("\n", readers.failures()));
      readers
          .phases()
          .forEach(
              (phase, s) ->
                  assertTrue(s.reads() > 0 || s.seconds() < 1, "no read in phase " + phase));
      assertTrue(readers.phases().get("before").reads() > 0);
      assertEquals(namespaceBefore, dump(fs));
      LoadJobStatus job = fs.loadStatus("/data/cached", 0);
      assertEquals(jobBefore.getJobId(), job.getJobId());
      assertEquals(jobBefore.getState(), job.getState());
      assertEquals(jobBefore.getFilesDone(), job.getFilesDone());
      assertWritesKept();
    }

    /** Every acknowledged write is there exactly once with its bytes; nothing else is. */
    void assertWritesKept() throws Exception {
      writers.stop();
      List<String> found = new ArrayList<>();
      for (String folder : WriterLoop.folders()) {
        try (CloseableIterator<FileInfo> it = fs.listStatus(WORK + "/" + folder)) {
          while (it.hasNext()) {
            found.add(folder + "/" + it.next().getName());
          }
        }
      }
      List<String> problems = writers.check(found, p -> readWithClient(WORK + "/" + p));
      assertTrue(problems.isEmpty(), String.join("\n", problems));
      writers
          .counts()
          .forEach(
              (writer, c) -> {
                System.out.printf(
                    "writer %s: %d changes acknowledged, %d failed %s%n",
                    writer, c.acknowledged(), c.failed(), c.firstFailures());
                assertTrue(
                    c.acknowledged() > 0,
                    "writer " + writer + " made no change: " + c.firstFailures());
              });
    }

    /** The line of `upgrade status` that lists the releases running. */
    String releasesRunning() throws Exception {
      String status = upgrade.strata("fsadmin", "upgrade", "status");
      return status
          .lines()
          .filter(l -> l.startsWith("Releases running:"))
          .findFirst()
          .orElseThrow(() -> new AssertionError(status));
    }

    @Override
    public void close() throws Exception {
      if (readers != null) {
        readers.stop();
      }
      if (writers != null) {
        writers.stop();
      }
      upgrade.close();
      fs.close();
      cluster.close();
      keepLogs();
    }

    /** Copies the processes' logs and the commands run under target/, for a failure's story. */
    private void keepLogs() throws java.io.IOException {
      Path to = Path.of("target", "rolling-upgrade-logs", dir.getFileName().toString());
      Files.createDirectories(to);
      try (var logs = Files.list(cluster.logsDir())) {
        for (Path log : (Iterable<Path>) logs::iterator) {
          Files.copy(
              log,
              to.resolve(log.getFileName()),
              java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
      Files.write(to.resolve("commands.txt"), upgrade.transcript());
    }
  }

  /** Path, kind, length, mode, owner and group of every path but the root, in listing order. */
  static List<String> dump(FileSystem fs) throws StrataException {
    List<String> out = new ArrayList<>();
    dump(fs, "/", out);
    return out;
  }

  private static void dump(FileSystem fs, String dir, List<String> out) throws StrataException {
    List<FileInfo> children = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = fs.listStatus(dir)) {
      it.forEachRemaining(children::add);
    }
    for (FileInfo f : children) {
      if (f.getPath().equals(WORK)) {
        continue;
      }
      out.add(
          f.getPath()
              + (f.getDirectory() ? "/" : "")
              + " "
              + f.getLength()
              + " "
              + Integer.toOctalString(f.getMode())
              + " "
              + f.getOwner()
              + ":"
              + f.getGroup());
      if (f.getDirectory()) {
        dump(fs, f.getPath(), out);
      }
    }
  }

  @Test
  void everyProcessIsUpgradedOneAtATimeThenTheClusterIsFinalized() throws Exception {
    try (Scenario s = new Scenario(true)) {
      assertTrue(s.releasesRunning().contains(s.previous.release()));
      s.upgrade.prepare();
      assertTrue(s.upgrade.strata("fsadmin", "upgrade", "status").contains("Prepared: backup "));

      s.readers.phase("masters");
      s.upgrade.upgradeMasters(s.current);
      s.readers.phase("workers");
      s.upgrade.upgradeWorkers(s.current, 2);
      s.readers.phase("fuse and proxy");
      // The previous release's proxy, on upgraded masters and workers.
      s.assertProxyReads();
      s.remount(s.current);
      s.cluster.killProxy();
      s.cluster.startProxy(Map.of(), List.of(), s.current);
      s.assertProxyReads();

      s.readers.phase("finalize");
      String status = s.upgrade.strata("fsadmin", "upgrade", "status");
      assertTrue(status.contains("Finalize: ready"), status);
      String finalized = s.upgrade.finalizeUpgrade();
      assertTrue(finalized.contains("metadata layout 1 -> 2"), finalized);
      // What the new layout enables works now.
      s.upgrade.strata("fs", "setTtl", "/data/cold/part-0.bin", "1h");
      assertTrue(
          s.upgrade
              .strata("fs", "stat", "/data/cold/part-0.bin")
              .lines()
              .anyMatch(l -> l.startsWith("TTL:") && l.contains("1h")));
      s.upgrade.strata("fs", "unsetTtl", "/data/cold/part-0.bin");
      s.readers.phase("after");
      s.assertNothingLost();
      assertEquals("Releases running: " + s.current.release(), s.releasesRunning());
      assertTrue(s.upgrade.strata("fsadmin", "upgrade", "status").contains("Finalized: layout 2"));
    }
  }

  @Test
  void finalizeIsRefusedWhileAMasterRunsThePreviousReleaseAndTheUpgradeRollsBack()
      throws Exception {
    try (Scenario s = new Scenario(false)) {
      s.upgrade.prepare();
      s.readers.phase("partial upgrade");
      int oldLeader = s.cluster.awaitLeader(Duration.ofSeconds(60));
      List<Integer> followers = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        if (i != oldLeader) {
          followers.add(i);
        }
      }
      for (int i : followers) {
        s.upgrade.restartMaster(i, s.current);
      }
      s.upgrade.elect(followers.get(0));
      s.upgrade.restartWorker(0, s.current, 2);

      ShellResult refused = s.upgrade.strataFailing("fsadmin", "upgrade", "finalize");
      String laggard = s.cluster.masterAddresses().get(oldLeader);
      assertTrue(
          refused
              .stderr()
              .contains("the master at " + laggard + " runs release " + s.previous.release()),
          refused.stderr());
      assertTrue(
          s.upgrade
              .strata("fsadmin", "upgrade", "status")
              .contains("Finalize: not yet; upgrade first: " + laggard));
      // The leader runs the new release, but the cluster's layout is still the old one.
      ShellResult ttl = s.upgrade.strataFailing("fs", "setTtl", "/data/cold/part-0.bin", "1h");
      assertTrue(ttl.stderr().contains("strata fsadmin upgrade finalize"), ttl.stderr());

      s.readers.phase("rollback");
      s.upgrade.restartWorker(0, s.previous, 2);
      s.upgrade.restartMaster(followers.get(1), s.previous);
      s.upgrade.elect(oldLeader);
      s.upgrade.restartMaster(followers.get(0), s.previous);
      s.readers.phase("after");
      s.assertNothingLost();
      assertEquals("Releases running: " + s.previous.release(), s.releasesRunning());
    }
  }
}
