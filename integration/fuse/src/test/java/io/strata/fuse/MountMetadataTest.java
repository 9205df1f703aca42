package io.strata.fuse;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.FileSystem;
import io.strata.client.SetAttributeOptions;
import io.strata.client.SyncOption;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.LoadJobOptions;
import io.strata.proto.LoadJobState;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the mount's metadata cache and the master's change stream promise, through real mounts
 * (/dev/fuse) of a master and a worker process: a listed folder's files open and read with no
 * master call; a change made through another client, another mount or {@code strata fs} reaches a
 * mount whose own and kernel caches would otherwise hold the old answer for ten minutes; the stream
 * comes back after a master restart; a block freed under a mount that opened its file directly
 * still reads right; a first read of an uncached small file reads the under store once; {@code rm
 * -rf} of a large tree leaves the rest of a full cache cached.
 */
class MountMetadataTest {
  static final long BLOCK = 1 << 20;
  static final int LISTED = 1000;

  /** How long a change may take to show: far below the long mount's 10-minute caches. */
  static final Duration SEEN_WITHIN = Duration.ofSeconds(10);

  /** Caches that only invalidation can make a mount see past: user-space TTL and kernel's. */
  static final Map<String, String> LONG_CACHES =
      Map.of(
          "strata.fuse.metadata.cache.ttl", "10min",
          "strata.fuse.attr.timeout", "10min",
          "strata.fuse.entry.timeout", "10min");

  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem client;
  static final List<Mounted> mounts = new ArrayList<>();

  /** At the defaults a mount process gets. */
  static Mounted plain;

  /** With {@link #LONG_CACHES}. */
  static Mounted longCaches;

  /** A mount in this JVM with a client of its own, as a mount process has. */
  record Mounted(FileSystem fs, StrataFuseFileSystem fileSystem, FuseMount mount) {
    Path path(String rel) {
      return mount.mountPoint().resolve(rel);
    }
  }

  static Mounted mount(String name, Map<String, String> settings) throws Exception {
    StrataConfig conf = cluster.clientConfig(settings);
    FileSystem fs = FileSystem.connect(conf);
    StrataFuseFileSystem fileSystem =
        StrataFuseFileSystem.create(fs, "/", conf, new SimpleMeterRegistry());
    FuseMount mount =
        FuseMount.mount(
            fileSystem,
            Files.createDirectories(dir.resolve(name)),
            MountOptions.withDefaults(List.of(), conf),
            Duration.ofSeconds(30));
    Mounted m = new Mounted(fs, fileSystem, mount);
    mounts.add(m);
    if (!"false".equals(settings.get("strata.fuse.metadata.watch.enabled"))) {
      await(name + "'s change stream")
          .atMost(WAIT)
          .pollInterval(Duration.ofMillis(100))
          .until(() -> fileSystem.metadata().watchLive());
    }
    return m;
  }

  @BeforeAll
  static void start() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .start();
    Path ufs = cluster.underStoreRoot();
    for (String folder : new String[] {"listed", "blocks", "changes/dir", "resync", "xattr"}) {
      Files.createDirectories(ufs.resolve(folder));
    }
    for (int i = 0; i < LISTED; i++) {
      TestTree.writeRandom(ufs.resolve(String.format("listed/f%04d", i)), 1000 + i, i);
    }
    TestTree.writeRandom(ufs.resolve("blocks/three.bin"), 3 * BLOCK, 7);
    TestTree.writeRandom(ufs.resolve("changes/a"), 100, 1);
    TestTree.writeRandom(ufs.resolve("changes/dir/inner"), 100, 2);
    TestTree.writeRandom(ufs.resolve("resync/f"), 100, 3);
    TestTree.writeRandom(ufs.resolve("xattr/f"), 100, 4);
    client = FileSystem.connect(cluster.clientConfig());
    client.submitLoad("/", LoadJobOptions.getDefaultInstance());
    await("the preload")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              try {
                return client.loadStatus("/", 0).getState() == LoadJobState.LOAD_SUCCEEDED;
              } catch (Exception e) {
                return false;
              }
            });
    plain = mount("mnt-plain", Map.of());
    longCaches = mount("mnt-long", LONG_CACHES);
  }

  @AfterAll
  static void stop() {
    for (Mounted m : mounts) {
      m.mount().close();
      if (FuseMount.isMounted(m.mount().mountPoint())) {
        FuseMount.lazyUnmount(m.mount().mountPoint());
      }
      m.fileSystem().shutdown();
      m.fs().close();
    }
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  /** The bound of the waits for the cluster and the mounts to get somewhere. */
  static final Duration WAIT = Duration.ofSeconds(120);

  /** Polls until {@code condition} holds; fails naming {@code what} after {@link #SEEN_WITHIN}. */
  static void seen(String what, BooleanSupplier condition) throws InterruptedException {
    long start = System.nanoTime();
    await(what + " seen")
        .atMost(SEEN_WITHIN)
        .pollDelay(Duration.ZERO)
        .pollInterval(Duration.ofMillis(2))
        .until(condition::getAsBoolean);
    System.out.printf("%s seen after %.1f ms%n", what, (System.nanoTime() - start) / 1e6);
  }

  /** The master's calls of the methods a mount makes per path, from its metrics. */
  static double masterPathCalls() {
    String scrape = cluster.scrapeMaster();
    double sum = 0;
    for (String method : new String[] {"GetStatus", "GetFileBlocks", "ListStatus"}) {
      for (String line : scrape.split("\n")) {
        if (line.startsWith("strata_master_rpc_latency_seconds_count{")
            && line.contains("method=\"" + method + "\"")) {
          sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
    }
    return sum;
  }

  @Test
  void openingAndReadingEveryFileOfAListedFolderMakesNoMasterCall() throws Exception {
    Mounted fresh = mount("mnt-fresh", Map.of());
    try (Stream<Path> list = Files.list(fresh.path("listed"))) {
      assertEquals(LISTED, list.count());
    }
    double before = masterPathCalls();
    long loadsBefore = fresh.fileSystem().metadata().loads();
    double hitsBefore =
        MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_cache_hits_total");
    for (int i = 0; i < LISTED; i++) {
      String rel = String.format("listed/f%04d", i);
      assertArrayEquals(
          Files.readAllBytes(cluster.underStoreRoot().resolve(rel)),
          Files.readAllBytes(fresh.path(rel)),
          rel);
    }
    assertEquals(
        before, masterPathCalls(), "master calls to open and read " + LISTED + " listed files");
    assertEquals(loadsBefore, fresh.fileSystem().metadata().loads(), "statuses loaded one by one");
    // The blocks were read from the worker's files without asking it; the mount reports them,
    // so that the worker keeps them recently used and counts them.
    await("the worker to hear of the local reads")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                MultiProcessCluster.metric(
                        cluster.scrapeWorker(0), "strata_worker_cache_hits_total")
                    >= hitsBefore + LISTED);
  }

  @Test
  void aChangeThroughAnotherClientAnotherMountOrTheCommandLineIsSeenDespiteLongCaches()
      throws Exception {
    Mounted other = mount("mnt-other", Map.of());
    Path a = longCaches.path("changes/a");
    long mtime = Files.getLastModifiedTime(a).toMillis();
    assertFalse(Files.exists(longCaches.path("changes/b"), LinkOption.NOFOLLOW_LINKS));
    try (Stream<Path> list = Files.list(longCaches.path("changes"))) {
      assertEquals(2, list.count());
    }
    assertTrue(Files.exists(longCaches.path("changes/dir/inner")));

    long newTime = mtime - 3_600_000;
    client.setAttribute("/changes/a", SetAttributeOptions.defaults().modificationTimeMs(newTime));
    seen("a modification time set through the Java client", () -> mtimeOf(a) == newTime);

    Files.write(other.path("changes/b"), new byte[] {1, 2, 3});
    seen(
        "a file written through another mount",
        () ->
            Files.exists(longCaches.path("changes/b"))
                && sizeOf(longCaches.path("changes/b")) == 3);
    try (Stream<Path> list = Files.list(longCaches.path("changes"))) {
      assertEquals(3, list.count(), "the new file is listed too");
    }

    MultiProcessCluster.ShellResult rm = cluster.shell("fs", "rm", "/changes/a");
    assertEquals(0, rm.exitCode(), rm.stderr());
    seen("a file removed with strata fs rm", () -> !Files.exists(a, LinkOption.NOFOLLOW_LINKS));

    client.rename("/changes/dir", "/changes/moved");
    seen(
        "a folder renamed through the Java client",
        () ->
            !Files.exists(longCaches.path("changes/dir/inner"))
                && Files.exists(longCaches.path("changes/moved/inner")));
  }

  @Test
  void userExtendedAttributesOfTheNamespaceReadThroughTheMountAndFollowChanges() throws Exception {
    Path f = longCaches.path("xattr/f");
    java.nio.file.attribute.UserDefinedFileAttributeView view =
        Files.getFileAttributeView(f, java.nio.file.attribute.UserDefinedFileAttributeView.class);
    assertEquals(List.of(), view.list());
    client.setAttribute(
        "/xattr/f",
        SetAttributeOptions.defaults()
            .xattr("user.colour", com.google.protobuf.ByteString.copyFromUtf8("blue"))
            .xattr("strata.s3.etag", com.google.protobuf.ByteString.copyFromUtf8("not shown")));
    seen(
        "an extended attribute set through the Java client",
        () -> {
          try {
            return view.list().equals(List.of("colour"));
          } catch (IOException e) {
            return false;
          }
        });
    java.nio.ByteBuffer value = java.nio.ByteBuffer.allocate(view.size("colour"));
    view.read("colour", value);
    assertEquals("blue", new String(value.array(), java.nio.charset.StandardCharsets.UTF_8));
    assertThrows(IOException.class, () -> view.size("absent"));
    client.setAttribute("/xattr/f", SetAttributeOptions.defaults().removeXattr("user.colour"));
    seen(
        "an extended attribute removed",
        () -> {
          try {
            return view.list().isEmpty();
          } catch (IOException e) {
            return false;
          }
        });
  }

  @Test
  void afterAMasterRestartTheStreamComesBackAndChangesAreSeenAgain() throws Exception {
    Mounted ttlOnly = mount("mnt-ttl", Map.of("strata.fuse.metadata.watch.enabled", "false"));
    Path f = longCaches.path("resync/f");
    long mtime = Files.getLastModifiedTime(f).toMillis();
    assertEquals(mtime, mtimeOf(ttlOnly.path("resync/f")));

    cluster.killMaster();
    await("the long mount to notice the stream is gone")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> !longCaches.fileSystem().metadata().watchLive());
    cluster.startMaster();
    await("the long mount's stream to come back")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .until(() -> longCaches.fileSystem().metadata().watchLive());

    long newTime = mtime - 7_200_000;
    client.setAttribute("/resync/f", SetAttributeOptions.defaults().modificationTimeMs(newTime));
    seen(
        "a change after the master restarted, through a mount with 10-minute caches",
        () -> mtimeOf(f) == newTime);
    seen(
        "the same change through a mount without the stream, by its 1 s time-to-live",
        () -> mtimeOf(ttlOnly.path("resync/f")) == newTime);
  }

  @Test
  void aBlockFreedUnderAMountThatOpenedItsFileDirectlyStillReadsRight() throws Exception {
    byte[] source = Files.readAllBytes(cluster.underStoreRoot().resolve("blocks/three.bin"));
    Path file = plain.path("blocks/three.bin");
    try (FileChannel ch = FileChannel.open(file)) {
      ByteBuffer first = ByteBuffer.allocate((int) BLOCK);
      assertEquals(BLOCK, readFully(ch, first, 0));
      assertArrayEquals(java.util.Arrays.copyOfRange(source, 0, (int) BLOCK), first.array());

      client.free("/blocks/three.bin", false);
      await("the worker to drop the blocks")
          .atMost(WAIT)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () -> {
                try {
                  return client.getStatus("/blocks/three.bin").getCachedBytes() == 0;
                } catch (Exception e) {
                  return false;
                }
              });
      ByteBuffer rest = ByteBuffer.allocate((int) (2 * BLOCK));
      assertEquals(2 * BLOCK, readFully(ch, rest, BLOCK));
      assertArrayEquals(
          java.util.Arrays.copyOfRange(source, (int) BLOCK, source.length),
          rest.array(),
          "blocks read after they were freed");
    }
    assertArrayEquals(source, Files.readAllBytes(file), "a new open after the free");
  }

  @Test
  void aFirstReadOfAnUncachedSmallFileMakesOneUnderStoreRead() throws Exception {
    Path source = cluster.underStoreRoot().resolve("cold/small.bin");
    Files.createDirectories(source.getParent());
    TestTree.writeRandom(source, 20 << 10, 11);
    // The root was listed by the preload: a file added to the under store since is found by a
    // sync, as `strata fs ls --sync` makes one.
    client.getStatus("/cold/small.bin", SyncOption.ALWAYS);
    double before =
        MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_calls_total");
    assertArrayEquals(Files.readAllBytes(source), Files.readAllBytes(plain.path("cold/small.bin")));
    double after =
        MultiProcessCluster.metric(cluster.scrapeWorker(0), "strata_worker_read_ufs_calls_total");
    assertEquals(1.0, after - before, "under-store reads for the first read of a 20 KiB file");
    await("the file to be cached")
        .atMost(WAIT)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              try {
                return client.getStatus("/cold/small.bin").getCachedBytes() == 20 << 10;
              } catch (Exception e) {
                return false;
              }
            });
  }

  @Test
  void rmRfOfALargeTreeLeavesTheRestOfAFullCacheCached() throws Exception {
    // 80,000 files to keep and a tree of 20,000 entries to remove (100 folders of 199 files),
    // made in the under store; the mount lists them from there.
    Path ufs = cluster.underStoreRoot().resolve("bulk");
    int keepFolders = 80;
    int removeFolders = 100;
    for (int d = 0; d < keepFolders; d++) {
      Path folder = Files.createDirectories(ufs.resolve(String.format("keep/d%03d", d)));
      for (int f = 0; f < 1000; f++) {
        Files.createFile(folder.resolve(String.format("f%04d", f)));
      }
    }
    for (int d = 0; d < removeFolders; d++) {
      Path folder = Files.createDirectories(ufs.resolve(String.format("gone/d%03d", d)));
      for (int f = 0; f < 199; f++) {
        Files.createFile(folder.resolve(String.format("f%04d", f)));
      }
    }
    client.getStatus("/bulk", SyncOption.ALWAYS);
    Mounted m =
        mount(
            "mnt-rmrf",
            Map.of(
                "strata.fuse.metadata.cache.size",
                "150000",
                "strata.fuse.metadata.cache.ttl",
                "10min"));
    long walked;
    try (Stream<Path> all = Files.walk(m.path("bulk"))) {
      walked = all.count();
    }
    assertEquals(1 + 2 + keepFolders * 1001 + removeFolders * 200, walked, "entries walked");
    assertTrue(
        m.fileSystem().metadata().size() >= 100_000,
        "the cache holds " + m.fileSystem().metadata().size() + " entries after the walk");

    Commands.Run rm =
        Commands.run(dir, Duration.ofMinutes(10), "rm", "-rf", m.path("bulk/gone").toString());
    assertEquals(0, rm.exit(), rm.err());
    assertFalse(Files.exists(m.path("bulk/gone"), LinkOption.NOFOLLOW_LINKS));
    assertFalse(Files.exists(ufs.resolve("gone"), LinkOption.NOFOLLOW_LINKS));
    assertTrue(
        m.fileSystem().metadata().size() >= keepFolders * 1001L,
        "the cache holds " + m.fileSystem().metadata().size() + " entries after rm -rf");

    // What was kept is still answered from the cache: statting every kept file asks the
    // master nothing.
    double callsBefore = masterPathCalls();
    long loadsBefore = m.fileSystem().metadata().loads();
    for (int d = 0; d < keepFolders; d++) {
      for (int f = 0; f < 1000; f += 7) {
        assertTrue(Files.isRegularFile(m.path(String.format("bulk/keep/d%03d/f%04d", d, f))));
      }
    }
    assertEquals(loadsBefore, m.fileSystem().metadata().loads(), "statuses loaded one by one");
    assertEquals(callsBefore, masterPathCalls(), "master calls to stat the kept files");
  }

  private static long readFully(FileChannel ch, ByteBuffer buf, long position) throws Exception {
    long done = 0;
    while (buf.hasRemaining()) {
      int n = ch.read(buf, position + done);
      if (n < 0) {
        break;
      }
      done += n;
    }
    return done;
  }

  private static long mtimeOf(Path p) {
    try {
      return Files.getLastModifiedTime(p).toMillis();
    } catch (Exception e) {
      return -1;
    }
  }

  private static long sizeOf(Path p) {
    try {
      return Files.size(p);
    } catch (Exception e) {
      return -1;
    }
  }
}
