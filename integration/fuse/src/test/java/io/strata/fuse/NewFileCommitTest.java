package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.FileSystem;
import io.strata.common.WriteTypeAttribute;
import io.strata.common.conf.StrataConfig;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proto.PersistenceState;
import io.strata.tests.MultiProcessCluster;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file created through a mount reaches the master in one call, at its first close: until then it
 * is the mount's alone (its processes see it, its name, size, mode, times and inode number; other
 * clients do not), and what was done to it meanwhile (chmod, utimens, rename, unlink) is what the
 * cluster gets; what close waits for follows the write type (CACHE_THROUGH: the bytes cached as
 * well as in the store; THROUGH: in the store only). Two real mounts of one cluster of a master and
 * a worker process, through /dev/fuse.
 */
class NewFileCommitTest {
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem fs;
  static FileSystem otherFs;
  static Path ufs;
  static FuseMount mount;
  static FuseMount other;

  @BeforeAll
  static void mount() throws Exception {
    // Persist rounds 5 s apart: a test can act on a file written ASYNC_THROUGH before its turn.
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(1)
            .property("strata.master.persist.interval", "5s")
            .start();
    ufs = cluster.underStoreRoot();
    fs = FileSystem.connect(cluster.clientConfig());
    otherFs = FileSystem.connect(cluster.clientConfig());
    mount = mountAt(fs, "mnt");
    other = mountAt(otherFs, "other");
  }

  private static FuseMount mountAt(FileSystem client, String name) throws Exception {
    StrataConfig conf =
        StrataConfig.load(
            Map.of(
                "strata.fuse.metadata.cache.ttl",
                "10s",
                "strata.fuse.write.staging.dir",
                dir.resolve("staging-" + name).toString()));
    Path point = Files.createDirectories(dir.resolve(name));
    return FuseMount.mount(
        StrataFuseFileSystem.create(client, "/", conf, new SimpleMeterRegistry()),
        point,
        MountOptions.withDefaults(List.of(), conf),
        Duration.ofSeconds(30));
  }

  @AfterAll
  static void unmount() {
    for (FuseMount m : new FuseMount[] {mount, other}) {
      if (m != null) {
        m.close();
        if (FuseMount.isMounted(m.mountPoint())) {
          FuseMount.lazyUnmount(m.mountPoint());
        }
      }
    }
    for (FileSystem f : new FileSystem[] {fs, otherFs}) {
      if (f != null) {
        f.close();
      }
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static Path mnt(String rel) {
    return mount.mountPoint().resolve(rel);
  }

  static Path otherMnt(String rel) {
    return other.mountPoint().resolve(rel);
  }

  private static List<String> names(Path folder) throws IOException {
    try (Stream<Path> s = Files.list(folder)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private static boolean inMaster(String path) throws StrataException {
    try {
      fs.getStatus(path);
      return true;
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  @Test
  void aNewFileIsTheMountsUntilItsFirstCloseCommitsItWithWhatWasDoneMeanwhile() throws Exception {
    Files.createDirectories(mnt("pending"));
    byte[] body = "first close commits me".getBytes(StandardCharsets.UTF_8);
    Path a = mnt("pending/a");
    long inode;
    try (FileChannel c =
        FileChannel.open(a, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(body));
      // The mount's processes see it at once; the master and other mounts do not yet.
      assertTrue(Files.exists(a));
      assertEquals(List.of("a"), names(mnt("pending")));
      assertEquals(body.length, Files.size(a));
      assertFalse(inMaster("/pending/a"));
      assertFalse(Files.exists(otherMnt("pending/a")));
      assertFalse(Files.exists(ufs.resolve("pending/a")));
      inode = (long) Files.getAttribute(a, "unix:ino");
      Files.setPosixFilePermissions(a, PosixFilePermissions.fromString("rw-------"));
      Files.setLastModifiedTime(a, FileTime.fromMillis(1_600_000_000_000L));
    }
    // Committed by the close, with the mode and time set before it, in one call.
    FileInfo committed = fs.getStatus("/pending/a");
    assertTrue(committed.getComplete());
    assertEquals(body.length, committed.getLength());
    assertEquals(0600, committed.getMode());
    assertEquals(1_600_000_000_000L, committed.getModificationTimeMs());
    assertArrayEquals(body, Files.readAllBytes(ufs.resolve("pending/a")));
    assertArrayEquals(body, Files.readAllBytes(otherMnt("pending/a")));
    // The number a process saw stays the file's in this mount.
    assertEquals(inode, (long) Files.getAttribute(a, "unix:ino"));

    // Renamed while open: committed at its new name with everything written.
    Path b = mnt("pending/b");
    try (FileChannel c =
        FileChannel.open(b, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(body));
      Files.move(b, mnt("pending/c"));
      c.write(ByteBuffer.wrap(body));
    }
    assertFalse(Files.exists(b));
    assertFalse(inMaster("/pending/b"));
    assertEquals(2L * body.length, fs.getStatus("/pending/c").getLength());
    assertEquals(2L * body.length, Files.size(ufs.resolve("pending/c")));

    // Unlinked before its first close: nothing of it reaches the cluster.
    Path d = mnt("pending/d");
    try (FileChannel c =
        FileChannel.open(d, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(body));
      Files.delete(d);
      assertFalse(Files.exists(d));
    }
    assertFalse(inMaster("/pending/d"));
    assertFalse(Files.exists(ufs.resolve("pending/d")));
    assertEquals(List.of("a", "c"), names(mnt("pending")));
  }

  /** Blocks the worker has been asked to load so far (load jobs and written files). */
  private static double workerLoadCalls() {
    double sum = 0;
    for (String line : cluster.scrapeWorker(0).split("\n")) {
      if (line.startsWith("strata_worker_rpc_latency_seconds_count{")
          && line.contains("method=\"LoadBlocks\"")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  private static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    new java.util.Random(seed).nextBytes(b);
    return b;
  }

  @Test
  void aCloseWaitsForTheCacheWithCacheThroughAndOnlyForTheStoreWithThrough() throws Exception {
    Files.createDirectories(mnt("types"));
    // The mount at the default, CACHE_THROUGH: when close returns, the worker reads go to has
    // cached the file, and the store has it.
    byte[] viaMount = bytes(300_000, 1);
    double loadsBefore = workerLoadCalls();
    Files.write(mnt("types/mount.bin"), viaMount);
    assertEquals(loadsBefore + 1, workerLoadCalls(), "LoadBlocks calls at a mount's close");
    assertArrayEquals(viaMount, Files.readAllBytes(ufs.resolve("types/mount.bin")));
    MultiProcessCluster.waitFor(
        "the master to hear of the cached block",
        Duration.ofSeconds(30),
        () -> cachedBytes("/types/mount.bin") == viaMount.length,
        null);

    // A client at CACHE_THROUGH, a file of several blocks (each cached), and a new version.
    byte[] big = bytes(3 * 1024 * 1024 + 5, 2);
    try (var out =
        fs.createFile(
            "/types/blocks.bin", io.strata.client.CreateOptions.defaults().blockSize(1 << 20))) {
      out.write(big);
    }
    MultiProcessCluster.waitFor(
        "the master to hear of the cached blocks",
        Duration.ofSeconds(30),
        () -> cachedBytes("/types/blocks.bin") == big.length,
        null);
    long cachedBefore = fs.metrics().cachedOnWriteBytes();
    try (var out = fs.writeNewFile("/types/small.bin", io.strata.client.CreateOptions.defaults())) {
      out.write(viaMount, 0, 1000);
    }
    assertEquals(cachedBefore + 1000, fs.metrics().cachedOnWriteBytes());

    // THROUGH: close returns when the store has the bytes; nothing asks the worker to cache.
    try (FileSystem through =
        FileSystem.connect(
            cluster.clientConfig(Map.of("strata.user.file.write.type", "through")))) {
      double before = workerLoadCalls();
      byte[] body = bytes(200_000, 3);
      try (var out =
          through.writeNewFile("/types/through.bin", io.strata.client.CreateOptions.defaults())) {
        out.write(body);
      }
      assertArrayEquals(body, Files.readAllBytes(ufs.resolve("types/through.bin")));
      assertEquals(before, workerLoadCalls(), "LoadBlocks calls at a THROUGH close");
      assertEquals(0, through.metrics().cachedOnWriteBytes());
    }

    // A folder's write type wins over the client's, for what is made in it afterwards.
    Files.createDirectories(mnt("types/scratch"));
    fs.setAttribute(
        "/types/scratch",
        io.strata.client.SetAttributeOptions.defaults()
            .xattr(
                WriteTypeAttribute.NAME, com.google.protobuf.ByteString.copyFromUtf8("THROUGH")));
    Files.createDirectories(mnt("types/scratch/sub"));
    double beforeScratch = workerLoadCalls();
    Files.write(mnt("types/scratch/sub/a.bin"), viaMount);
    assertEquals(beforeScratch, workerLoadCalls(), "LoadBlocks calls in a THROUGH folder");
    assertArrayEquals(viaMount, Files.readAllBytes(ufs.resolve("types/scratch/sub/a.bin")));
    // The master takes only the write types it knows.
    StrataException badType =
        assertThrows(
            StrataException.class,
            () ->
                fs.setAttribute(
                    "/types/scratch",
                    io.strata.client.SetAttributeOptions.defaults()
                        .xattr(
                            WriteTypeAttribute.NAME,
                            com.google.protobuf.ByteString.copyFromUtf8("CACHE"))));
    assertEquals(ErrorCode.INVALID_ARGUMENT, badType.code());
    assertTrue(
        badType
            .getMessage()
            .contains("give CACHE_THROUGH, THROUGH, ASYNC_THROUGH or" + " MUST_CACHE"),
        badType.getMessage());

    // Unknown write types are refused by name when a client starts.
    for (String refused : new String[] {"CACHE", "cache-through"}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () ->
                  FileSystem.connect(
                          cluster.clientConfig(Map.of("strata.user.file.write.type", refused)))
                      .close());
      assertTrue(
          e.getMessage().contains("strata.user.file.write.type")
              && e.getMessage().contains("CACHE_THROUGH"),
          e.getMessage());
    }
  }

  /**
   * ASYNC_THROUGH: close returns with the bytes in the worker's cache only, readable at once; the
   * master's persist scheduler writes them to the store later, also after a kill -9 of the master
   * and of the worker in between; a file deleted before its turn never reaches the store.
   * MUST_CACHE (set on a folder): never in the store, kept by `fs free`, until `fs persist` writes
   * it.
   */
  @Test
  void cacheOnlyWriteTypesKeepBytesOutOfTheStoreUntilPersisted() throws Exception {
    Files.createDirectories(mnt("async"));
    byte[] body = bytes(2_500_000, 7);
    byte[] gone = bytes(70_000, 8);
    FileInfo written;
    try (FileSystem async =
        FileSystem.connect(
            cluster.clientConfig(Map.of("strata.user.file.write.type", "ASYNC_THROUGH")))) {
      var out =
          async.writeNewFile(
              "/async/a.bin", io.strata.client.CreateOptions.defaults().blockSize(1 << 20));
      out.write(body);
      out.close();
      written = out.completedStatus();
      try (var doomed =
          async.writeNewFile("/async/gone.bin", io.strata.client.CreateOptions.defaults())) {
        doomed.write(gone);
      }
      async.delete("/async/gone.bin", false);
    }
    assertEquals(PersistenceState.PERSISTENCE_TO_BE_PERSISTED, written.getPersistenceState());
    assertArrayEquals(body, Files.readAllBytes(mnt("async/a.bin")));
    // The master and the worker die before the scheduler's turn (or just after it).
    cluster.killMaster();
    cluster.killWorker(0);
    cluster.startWorker(0);
    cluster.restartMaster(0);
    MultiProcessCluster.waitFor(
        "the scheduler to persist /async/a.bin",
        Duration.ofSeconds(90),
        () -> persistence("/async/a.bin") == PersistenceState.PERSISTENCE_PERSISTED,
        null);
    assertArrayEquals(body, Files.readAllBytes(ufs.resolve("async/a.bin")));
    assertArrayEquals(body, Files.readAllBytes(mnt("async/a.bin")));
    assertTrue(
        names(ufs.resolve("async")).stream().noneMatch(n -> n.contains("gone.bin")),
        "a file deleted before its turn is never written, not even as a temporary file: "
            + names(ufs.resolve("async")));

    // MUST_CACHE set on a folder: in the cache only, kept by a free, persisted on demand.
    Files.createDirectories(mnt("scratch"));
    fs.setAttribute(
        "/scratch",
        io.strata.client.SetAttributeOptions.defaults()
            .xattr(
                WriteTypeAttribute.NAME,
                com.google.protobuf.ByteString.copyFromUtf8("MUST_CACHE")));
    byte[] scratch = bytes(100_000, 9);
    Files.write(mnt("scratch/s.bin"), scratch);
    assertEquals(PersistenceState.PERSISTENCE_NOT_PERSISTED, persistence("/scratch/s.bin"));
    fs.free("/scratch", true);
    assertArrayEquals(scratch, Files.readAllBytes(otherMnt("scratch/s.bin")));
    assertFalse(Files.exists(ufs.resolve("scratch/s.bin")));
    FileInfo persisted = fs.persist("/scratch/s.bin");
    assertEquals(PersistenceState.PERSISTENCE_PERSISTED, persisted.getPersistenceState());
    assertArrayEquals(scratch, Files.readAllBytes(ufs.resolve("scratch/s.bin")));
  }

  /**
   * A file closed while its worker is away is written through once the worker is back: close waits
   * (within strata.client.write.retry.duration) instead of failing with EIO, and every byte
   * arrives.
   */
  @Test
  void aCloseWhileTheWorkerRestartsWaitsForItAndLosesNothing() throws Exception {
    Files.createDirectories(mnt("restart"));
    cluster.killWorker(0);
    java.util.concurrent.CompletableFuture<Void> restarted =
        java.util.concurrent.CompletableFuture.runAsync(
            () -> {
              try {
                Thread.sleep(3_000);
                cluster.startWorker(0);
              } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });
    Map<String, byte[]> written = new java.util.LinkedHashMap<>();
    // `strata fs cp` from this machine waits for the worker as the mount does.
    byte[] copied = bytes(200_000, 29);
    Path source = Files.write(dir.resolve("copied-source.bin"), copied);
    Map<String, String> conf = new java.util.HashMap<>();
    for (String arg : cluster.configArgs(Map.of())) {
      int eq = arg.indexOf('=');
      conf.put(arg.substring(2, eq), arg.substring(eq + 1));
    }
    conf.put("strata.home", dir.resolve("shell-home").toString());
    io.strata.shell.ShellRun.Result cp =
        io.strata.shell.ShellRun.run(conf, "fs", "cp", "local:" + source, "/restart/copied.bin");
    assertEquals(0, cp.code(), cp.err());
    written.put("restart/copied.bin", copied);
    for (int i = 0; i < 4; i++) {
      byte[] b = bytes(40_000 + i, 30 + i);
      Files.write(mnt("restart/f" + i + ".bin"), b);
      written.put("restart/f" + i + ".bin", b);
    }
    restarted.get(90, java.util.concurrent.TimeUnit.SECONDS);
    for (Map.Entry<String, byte[]> f : written.entrySet()) {
      assertArrayEquals(f.getValue(), Files.readAllBytes(ufs.resolve(f.getKey())), f.getKey());
      assertArrayEquals(f.getValue(), Files.readAllBytes(otherMnt(f.getKey())), f.getKey());
    }
    cluster.waitForLiveWorkers(1, Duration.ofSeconds(60));
  }

  private static PersistenceState persistence(String path) {
    try {
      return fs.getStatus(path).getPersistenceState();
    } catch (StrataException e) {
      return PersistenceState.UNRECOGNIZED;
    }
  }

  private static long cachedBytes(String path) {
    try {
      return fs.getStatus(path).getCachedBytes();
    } catch (StrataException e) {
      return -1;
    }
  }

  @Test
  void aFolderHoldingAFileNotClosedYetIsNotEmpty() throws Exception {
    Files.createDirectories(mnt("holder"));
    Path f = mnt("holder/open");
    try (FileChannel c =
        FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(new byte[] {1}));
      assertThrows(DirectoryNotEmptyException.class, () -> Files.delete(mnt("holder")));
    }
    assertTrue(inMaster("/holder/open"));
  }

  @Test
  void ofTwoMountsCreatingOneNameExclusivelyExactlyOneWins() throws Exception {
    Files.createDirectories(mnt("race"));
    int names = 20;
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Boolean>> mine = new ArrayList<>();
      List<Future<Boolean>> theirs = new ArrayList<>();
      for (int i = 0; i < names; i++) {
        String name = "race/n" + i;
        mine.add(pool.submit(createExclusively(mnt(name), "mine")));
        theirs.add(pool.submit(createExclusively(otherMnt(name), "theirs")));
      }
      for (int i = 0; i < names; i++) {
        boolean a = mine.get(i).get(60, TimeUnit.SECONDS);
        boolean b = theirs.get(i).get(60, TimeUnit.SECONDS);
        assertTrue(a ^ b, "n" + i + ": mine " + a + ", theirs " + b);
        String content = Files.readString(ufs.resolve("race/n" + i));
        assertEquals(a ? "mine" : "theirs", content, "n" + i);
        assertEquals(content.length(), fs.getStatus("/race/n" + i).getLength());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** Creates {@code p} with O_EXCL and writes {@code text}; whether open and close succeeded. */
  private static Callable<Boolean> createExclusively(Path p, String text) {
    return () -> {
      FileChannel c;
      try {
        c = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
      } catch (FileAlreadyExistsException e) {
        return false;
      }
      IOException closeFailure = null;
      try {
        c.write(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
      } finally {
        try {
          c.close();
        } catch (IOException e) {
          closeFailure = e;
        }
      }
      if (closeFailure != null) {
        // The master gave the name to the other mount: EEXIST at close.
        assertTrue(closeFailure.getMessage().contains("exists"), closeFailure.toString());
        return false;
      }
      return true;
    };
  }
}
