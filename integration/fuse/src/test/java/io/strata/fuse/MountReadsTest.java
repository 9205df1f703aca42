package io.strata.fuse;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.strata.client.FileSystem;
import io.strata.client.SyncOption;
import io.strata.common.conf.StrataConfig;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import io.strata.tests.TestTree.FileFacts;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real FUSE mounts (through /dev/fuse) of a cluster of a master and a worker process: one of the
 * namespace root with kernel caching, one of {@code /data} with {@code direct_io} so that every
 * read reaches the shared reader, and one of the root without kernel caching whose metadata cache
 * has a long TTL and counts its master calls. Checked with java.nio and with shell tools. A machine
 * that cannot mount fails these tests; it does not skip them.
 */
class MountReadsTest {
  static final long BLOCK = 1 << 20;
  static final int WIDE = 2000;
  static final int BIG = 64 << 20;
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem fs;
  static TestTree tree;
  static Map<String, String> wideSha = new LinkedHashMap<>();
  static byte[] big;
  static StrataFuseFileSystem rootFs;
  static StrataFuseFileSystem dataFs;
  static FuseMount rootMount;
  static FuseMount dataMount;
  static StrataFuseFileSystem countedFs;
  static FuseMount countedMount;
  static final Map<String, AtomicInteger> statusLoads = new ConcurrentHashMap<>();

  @BeforeAll
  static void mount() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            // A scrubber fast enough to pass over every cached block within a test.
            .property("strata.worker.scrub.rate", "64MB")
            .start();
    Path ufs = cluster.underStoreRoot();
    tree = TestTree.generate(ufs.resolve("tree"), 300, BLOCK, 3, 42);
    Files.createDirectories(ufs.resolve("wide"));
    for (int i = 0; i < WIDE; i++) {
      String name = String.format("f%05d", i);
      wideSha.put(name, TestTree.writeRandom(ufs.resolve("wide").resolve(name), 1024, i).sha256());
    }
    Files.createDirectories(ufs.resolve("data"));
    TestTree.writeRandom(ufs.resolve("data/big.bin"), BIG, 99);
    big = Files.readAllBytes(ufs.resolve("data/big.bin"));
    fs = FileSystem.connect(cluster.clientConfig());

    Path rootPoint = Files.createDirectories(dir.resolve("mnt-root"));
    Path dataPoint = Files.createDirectories(dir.resolve("mnt-data"));
    rootFs = StrataFuseFileSystem.create(fs, "/");
    rootMount =
        FuseMount.mount(
            rootFs,
            rootPoint,
            List.of("-o", "attr_timeout=1,entry_timeout=1"),
            Duration.ofSeconds(30));
    dataFs = StrataFuseFileSystem.create(fs, "/data");
    dataMount =
        FuseMount.mount(dataFs, dataPoint, List.of("-o", "direct_io"), Duration.ofSeconds(30));
    MetadataCache counted =
        new MetadataCache(
            path -> {
              statusLoads.computeIfAbsent(path, p -> new AtomicInteger()).incrementAndGet();
              return fs.getStatus(path);
            },
            Duration.ofMinutes(10),
            10_000);
    countedFs =
        StrataFuseFileSystem.create(
            fs, "/", StrataConfig.load(Map.of()), new SimpleMeterRegistry(), counted);
    // Served by libfuse's own loop (strata.fuse.upcall.threads=0), so that path stays tested.
    countedMount =
        FuseMount.mount(
            countedFs,
            Files.createDirectories(dir.resolve("mnt-counted")),
            List.of("-o", "attr_timeout=0,entry_timeout=0,negative_timeout=0"),
            0,
            Duration.ofSeconds(30));
  }

  @AfterAll
  static void unmount() {
    for (FuseMount m : new FuseMount[] {rootMount, dataMount, countedMount}) {
      if (m != null) {
        m.close();
        if (FuseMount.isMounted(m.mountPoint())) {
          FuseMount.lazyUnmount(m.mountPoint());
        }
      }
    }
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static Path mnt(String rel) {
    return rootMount.mountPoint().resolve(rel);
  }

  static Commands.Run run(String... cmd) throws Exception {
    return Commands.run(dir, cmd);
  }

  @Test
  void everyFileOfTheTreeReadsBackAsItsSource() throws Exception {
    for (Map.Entry<String, FileFacts> e : tree.files().entrySet()) {
      Path p = mnt("tree/" + e.getKey());
      assertEquals(e.getValue().length(), Files.size(p), e.getKey());
      try (InputStream in = Files.newInputStream(p)) {
        assertEquals(e.getValue().sha256(), TestTree.sha256(in), e.getKey());
      }
    }
  }

  @Test
  void findAndMd5sumThroughTheMountMatchTheSource() throws Exception {
    Commands.Run find = run("find", mnt("tree").toString(), "-type", "f");
    assertEquals(0, find.exit(), find.err());
    Set<String> found = new HashSet<>();
    String prefix = mnt("tree") + "/";
    for (String line : find.out().split("\n")) {
      if (!line.isEmpty()) {
        found.add(line.substring(prefix.length()));
      }
    }
    assertEquals(tree.files().keySet(), found);
    Commands.Run dirs = run("find", mnt("tree").toString(), "-mindepth", "1", "-type", "d");
    assertEquals(tree.directories().size(), dirs.out().split("\n").length, dirs.out());

    Commands.Run md5 =
        run("find", mnt("tree").toString(), "-type", "f", "-exec", "md5sum", "{}", "+");
    assertEquals(0, md5.exit(), md5.err());
    Map<String, String> sums = new HashMap<>();
    for (String line : md5.out().split("\n")) {
      if (!line.isEmpty()) {
        sums.put(line.substring(34 + prefix.length()), line.substring(0, 32));
      }
    }
    assertEquals(tree.files().size(), sums.size());
    for (String rel : tree.files().keySet()) {
      byte[] source = Files.readAllBytes(cluster.underStoreRoot().resolve("tree").resolve(rel));
      String expected = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(source));
      assertEquals(expected, sums.get(rel), "md5sum of " + rel);
    }
  }

  @Test
  void listingOfTwoThousandEntriesShowsThemAll() throws Exception {
    Commands.Run ls = run("ls", "-1", mnt("wide").toString());
    assertEquals(0, ls.exit(), ls.err());
    assertEquals(wideSha.keySet(), Set.of(ls.out().split("\n")));
    try (Stream<Path> list = Files.list(mnt("wide"))) {
      assertEquals(WIDE, list.count());
    }
  }

  @Test
  void smallFilesReadWholeMatchTheirSource() throws Exception {
    List<String> names = new ArrayList<>(wideSha.keySet()).subList(0, 1000);
    long start = System.nanoTime();
    for (String name : names) {
      assertEquals(
          wideSha.get(name), TestTree.sha256(Files.readAllBytes(mnt("wide/" + name))), name);
    }
    long cold = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    start = System.nanoTime();
    for (String name : names) {
      assertEquals(1024, Files.readAllBytes(mnt("wide/" + name)).length, name);
    }
    long warm = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.out.printf(
        "1,000 files of 1 KiB read whole through the mount (open, read, close):"
            + " first pass %d ms, second pass %d ms%n",
        cold, warm);
  }

  @Test
  void smallPositionedReadsThroughTheMountMatchTheSource() throws Exception {
    Random random = new Random(5);
    int count = 1000;
    long[] offsets = new long[count];
    for (int i = 0; i < count; i++) {
      offsets[i] = random.nextInt(BIG / 4096) * 4096L;
    }
    ByteBuffer buf = ByteBuffer.allocate(4096);
    long start = System.nanoTime();
    try (FileChannel ch = FileChannel.open(dataMount.mountPoint().resolve("big.bin"))) {
      for (long off : offsets) {
        buf.clear();
        assertEquals(4096, ch.read(buf, off), "read at " + off);
        assertEquals(java.nio.ByteBuffer.wrap(big, (int) off, 4096), buf.flip(), "read at " + off);
      }
    }
    long viaMount = System.nanoTime() - start;
    byte[] b = new byte[4096];
    start = System.nanoTime();
    try (io.strata.client.FileInStream in = fs.openFile("/data/big.bin")) {
      for (long off : offsets) {
        assertEquals(4096, in.read(off, b, 0, 4096));
      }
    }
    long viaClient = System.nanoTime() - start;
    System.out.printf(
        "1,000 reads of 4 KiB at random offsets (direct_io): through the mount"
            + " %d us/read, through the Java client alone %d us/read%n",
        viaMount / count / 1000, viaClient / count / 1000);
  }

  /** Reads a file through the Java client, whole. */
  private static byte[] readWithClient(String path) throws IOException {
    try (io.strata.client.FileInStream in = fs.openFile(path)) {
      return in.readAllBytes();
    }
  }

  /** Reads {@code path} once so that the worker caches it, and returns its block's files. */
  private static List<Path> cachedBlockFiles(String path) throws Exception {
    readWithClient(path);
    long id = fs.getStatus(path, SyncOption.NEVER, true).getBlocks(0).getBlockId();
    await().atMost(Duration.ofSeconds(30)).until(() -> !cluster.blockFiles(id).isEmpty());
    return cluster.blockFiles(id);
  }

  private static double corruptions() {
    return MultiProcessCluster.metric(
        cluster.scrapeWorker(0), "strata_worker_block_corruptions_total");
  }

  @Test
  void aCachedBlockThatChangedAtRestIsNeverHandedOn() throws Exception {
    Path ufs = cluster.underStoreRoot().resolve("data/damaged");
    Files.createDirectories(ufs);
    Map<String, byte[]> originals = new LinkedHashMap<>();
    for (String name : List.of("flipped", "truncated", "deleted")) {
      TestTree.writeRandom(ufs.resolve(name), 300_000, name.hashCode());
      originals.put(name, Files.readAllBytes(ufs.resolve(name)));
    }
    double before = corruptions();
    for (String name : originals.keySet()) {
      for (Path block : cachedBlockFiles("/data/damaged/" + name)) {
        switch (name) {
          case "flipped" -> {
            byte[] b = Files.readAllBytes(block);
            b[200_000] ^= 0x10;
            Files.write(block, b);
          }
          case "truncated" -> {
            try (FileChannel ch = FileChannel.open(block, StandardOpenOption.WRITE)) {
              ch.truncate(100_000);
            }
          }
          default -> Files.delete(block);
        }
      }
    }
    for (Map.Entry<String, byte[]> e : originals.entrySet()) {
      // Through the mount (direct_io: every read reaches the client), then the client alone.
      assertTrue(
          java.util.Arrays.equals(
              e.getValue(),
              Files.readAllBytes(dataMount.mountPoint().resolve("damaged/" + e.getKey()))),
          e.getKey() + " read through the mount");
      assertTrue(
          java.util.Arrays.equals(e.getValue(), readWithClient("/data/damaged/" + e.getKey())),
          e.getKey() + " read through the client");
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertTrue(corruptions() >= before + 3, "corruptions counted"));
  }

  @Test
  void theScrubberFindsADamagedBlockNobodyReads() throws Exception {
    Path ufs = cluster.underStoreRoot().resolve("data/scrubbed");
    Files.createDirectories(ufs);
    TestTree.writeRandom(ufs.resolve("rotten"), 100_000, 5);
    List<Path> blocks = cachedBlockFiles("/data/scrubbed/rotten");
    double before = corruptions();
    for (Path block : blocks) {
      byte[] b = Files.readAllBytes(block);
      b[5] ^= 0x01;
      Files.write(block, b);
    }
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertTrue(corruptions() > before, "the scrubber counted the damage");
              for (Path block : blocks) {
                assertFalse(Files.exists(block), block + " is dropped");
              }
            });
    assertTrue(
        MultiProcessCluster.metric(
                cluster.scrapeWorker(0), "strata_worker_scrub_verified_bytes_total")
            > 0);
  }

  @Test
  void sigtermOfFuseMainUnmounts() throws Exception {
    Path point = Files.createDirectories(dir.resolve("mnt-main"));
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:+UseSerialGC");
    cmd.addAll(cluster.configArgs(Map.of()));
    String testCp = System.getProperty("surefire.test.class.path");
    String cp =
        testCp != null && !testCp.isEmpty() ? testCp : System.getProperty("java.class.path");
    cmd.addAll(
        List.of(
            "-cp",
            cp,
            FuseMain.class.getName(),
            point.toString(),
            "/tree",
            "-o",
            "attr_timeout=1"));
    Path log = dir.resolve("fuse-main.log");
    Process p =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    try {
      MultiProcessCluster.waitFor(
          "FuseMain to mount", Duration.ofSeconds(60), () -> FuseMount.isMounted(point), p);
      String rel = tree.largestFile();
      try (InputStream in = Files.newInputStream(point.resolve(rel))) {
        assertEquals(tree.files().get(rel).sha256(), TestTree.sha256(in));
      }
      p.destroy();
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "FuseMain still running after SIGTERM");
      assertFalse(FuseMount.isMounted(point), "mount left after SIGTERM: " + Files.readString(log));
    } finally {
      if (p.isAlive()) {
        p.destroyForcibly();
      }
      if (FuseMount.isMounted(point)) {
        FuseMount.lazyUnmount(point);
      }
    }
  }

  @Test
  void eightThreadsReadingOneLargeFileAtRandomOffsetsShareOneReaderAndGetTheRightBytes()
      throws Exception {
    Path file = dataMount.mountPoint().resolve("big.bin");
    long fileId = fs.getStatus("/data/big.bin").getFileId();
    int threads = 8;
    List<FileChannel> channels = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int t = 0; t < threads; t++) {
        channels.add(FileChannel.open(file, StandardOpenOption.READ));
      }
      assertEquals(threads, dataFs.handleCount(fileId), "handles sharing the reader");
      assertEquals(1, dataFs.openFileCount());
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        FileChannel ch = channels.get(t);
        long seed = t;
        done.add(pool.submit(() -> readRandomly(ch, new Random(seed), 60)));
      }
      int reads = 0;
      for (Future<Integer> f : done) {
        reads += f.get(300, TimeUnit.SECONDS);
      }
      assertEquals(threads * 60, reads);
    } finally {
      pool.shutdownNow();
      for (FileChannel ch : channels) {
        ch.close();
      }
    }
    // The kernel sends releases after close returns.
    MultiProcessCluster.waitFor(
        "the shared reader to be closed",
        Duration.ofSeconds(30),
        () -> dataFs.handleCount(fileId) == 0,
        null);
    assertEquals(0, dataFs.openFileCount());
  }

  @Test
  void concurrentReadsAreServedByTheMountsOwnThreadsWithoutStartingNewOnes() throws Exception {
    Path file = dataMount.mountPoint().resolve("big.bin");
    int threads = 4;
    int readsEach = 500;
    ThreadMXBean jvmThreads = ManagementFactory.getThreadMXBean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ch.read(ByteBuffer.allocate(4096), 0);
      long startedBefore = jvmThreads.getTotalStartedThreadCount();
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        Random random = new Random(100 + t);
        done.add(
            pool.submit(
                () -> {
                  ByteBuffer buf = ByteBuffer.allocate(4096);
                  for (int i = 0; i < readsEach; i++) {
                    int pos = random.nextInt(BIG / 4096) * 4096;
                    buf.clear();
                    ch.read(buf, pos);
                    if (buf.position() != 4096
                        || buf.get(0) != big[pos]
                        || buf.get(4095) != big[pos + 4095]) {
                      throw new AssertionError("wrong bytes at " + pos);
                    }
                  }
                  return readsEach;
                }));
      }
      for (Future<Integer> f : done) {
        assertEquals(readsEach, f.get(300, TimeUnit.SECONDS));
      }
      long started = jvmThreads.getTotalStartedThreadCount() - startedBefore;
      // libfuse's own loop attaches a new Java thread for a large share of such reads (hundreds
      // here); the mount's fixed upcall threads start none, and the test process's other pools
      // only a few.
      assertTrue(
          started < 50, started + " Java threads started during " + threads * readsEach + " reads");
    } finally {
      pool.shutdownNow();
    }
    assertTrue(
        Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().startsWith("strata-fuse-upcall-")),
        "no upcall thread alive");
  }

  static int readRandomly(FileChannel ch, Random random, int count) throws IOException {
    for (int i = 0; i < count; i++) {
      int pos = random.nextInt(BIG);
      int len = Math.min(BIG - pos, 1 + random.nextInt(256 << 10));
      ByteBuffer buf = ByteBuffer.allocate(len);
      int bounded = 0;
      while (buf.hasRemaining() && bounded++ < 64) {
        if (ch.read(buf, pos + buf.position()) < 0) {
          break;
        }
      }
      assertEquals(len, buf.position(), "bytes read at " + pos);
      byte[] got = buf.array();
      for (int k = 0; k < len; k++) {
        if (got[k] != big[pos + k]) {
          throw new AssertionError("byte " + (pos + k) + " differs after a read at " + pos);
        }
      }
    }
    return count;
  }

  @Test
  void missingPathsGiveNoSuchFile() throws Exception {
    assertFalse(Files.exists(mnt("tree/no-such-file")));
    assertThrows(NoSuchFileException.class, () -> Files.newInputStream(mnt("tree/no-such-file")));
    assertThrows(
        NoSuchFileException.class,
        () -> {
          try (Stream<Path> listed = Files.list(mnt("no-such-dir"))) {
            fail("a missing folder was listed: " + listed.toList());
          }
        });
    Commands.Run cat = run("cat", mnt("tree/no-such-file").toString());
    assertNotEquals(0, cat.exit());
    assertTrue(cat.err().contains("No such file or directory"), cat.err());
  }

  @Test
  void statfsReportsTheWorkersCapacity() throws Exception {
    long total = Files.getFileStore(mnt("tree")).getTotalSpace();
    // One worker with a 64 MB memory tier and a 1 GB SSD tier.
    assertTrue(total >= (1L << 30), "total space " + total);
    Commands.Run df = run("df", "-k", rootMount.mountPoint().toString());
    assertEquals(0, df.exit(), df.err());
  }

  @Test
  void attributesComeFromTheNamespace() throws Exception {
    String rel = tree.largestFile();
    Path p = mnt("tree/" + rel);
    assertTrue(Files.isRegularFile(p));
    assertTrue(Files.isDirectory(mnt("tree")));
    assertEquals(tree.files().get(rel).length(), Files.size(p));
    long nsMtime = fs.getStatus("/tree/" + rel).getModificationTimeMs();
    assertEquals(nsMtime / 1000, Files.getLastModifiedTime(p).toMillis() / 1000);
    assertEquals(Files.size(dataMount.mountPoint().resolve("big.bin")), BIG);
  }

  static long sizeOrMinusOne(Path p) {
    try {
      return Files.size(p);
    } catch (IOException e) {
      return -1;
    }
  }

  static int loads(String path) {
    AtomicInteger n = statusLoads.get(path);
    return n == null ? 0 : n.get();
  }

  @Test
  void repeatedGetattrWithinTheTtlDoesNotCallTheMaster() throws Exception {
    String rel = tree.largestFile();
    Path p = countedMount.mountPoint().resolve("tree/" + rel);
    long upcalls = countedFs.getattrCalls();
    for (int i = 0; i < 5; i++) {
      assertEquals(tree.files().get(rel).length(), Files.size(p));
    }
    try (InputStream in = Files.newInputStream(p)) {
      assertEquals(tree.files().get(rel).sha256(), TestTree.sha256(in));
    }
    assertTrue(countedFs.getattrCalls() - upcalls >= 5, "the kernel asked every time");
    assertEquals(1, loads("/tree/" + rel), "master calls for the file's status");

    Path missing = countedMount.mountPoint().resolve("tree/no-such-file");
    for (int i = 0; i < 5; i++) {
      assertFalse(Files.exists(missing));
    }
    assertThrows(NoSuchFileException.class, () -> Files.newInputStream(missing));
    assertEquals(1, loads("/tree/no-such-file"), "master calls for a missing path");

    // A listing fills the cache with its children's statuses.
    try (Stream<Path> list = Files.list(countedMount.mountPoint().resolve("wide"))) {
      assertEquals(WIDE, list.count());
    }
    assertEquals(1024, Files.size(countedMount.mountPoint().resolve("wide/f01234")));
    assertEquals(0, loads("/wide/f01234"));
  }

  @Test
  void aFileChangedInTheUnderStoreShowsItsNewSizeAfterTheTtl() throws Exception {
    Path source =
        Files.createDirectories(cluster.underStoreRoot().resolve("changing")).resolve("grows.bin");
    TestTree.writeRandom(source, 1000, 1);
    Path p = mnt("changing/grows.bin");
    assertEquals(1000, Files.size(p));
    assertEquals(1000, Files.readAllBytes(p).length);
    TestTree.writeRandom(source, 3000, 2);
    assertEquals(3000, fs.getStatus("/changing/grows.bin", SyncOption.ALWAYS).getLength());
    // The mount's cache and the kernel's (1 s each here) expire; then the new size shows.
    MultiProcessCluster.waitFor(
        "the mount to show the new size",
        Duration.ofSeconds(60),
        () -> sizeOrMinusOne(p) == 3000,
        null);
    assertEquals(
        TestTree.sha256(Files.readAllBytes(source)),
        TestTree.sha256(Files.readAllBytes(p)),
        "the new bytes, not the kernel's old pages");
  }

  @Test
  void anUnchangedFileReadAgainIsServedFromTheKernelsPageCache() throws Exception {
    Path source =
        Files.createDirectories(cluster.underStoreRoot().resolve("kept")).resolve("same.bin");
    TestTree.writeRandom(source, 64 << 10, 3);
    byte[] expected = Files.readAllBytes(source);
    Path p = mnt("kept/same.bin");
    long before = rootFs.readCalls();
    assertTrue(java.util.Arrays.equals(expected, Files.readAllBytes(p)));
    long afterFirst = rootFs.readCalls();
    assertTrue(afterFirst > before, "the first read reaches the file system");
    assertTrue(java.util.Arrays.equals(expected, Files.readAllBytes(p)));
    assertEquals(afterFirst, rootFs.readCalls(), "read upcalls of the second read (keep_cache)");
  }

  @Test
  void aFileRewrittenInTheUnderStoreIsNeverReadAsAMixOfVersions() throws Exception {
    int length = 8 << 20;
    int chunk = 1 << 20;
    Path source = cluster.underStoreRoot().resolve("data/versions.bin");
    byte[] oldBytes = new byte[length];
    java.util.Arrays.fill(oldBytes, (byte) 'A');
    byte[] newBytes = new byte[length];
    java.util.Arrays.fill(newBytes, (byte) 'B');
    Files.write(source, oldBytes);
    Path p = dataMount.mountPoint().resolve("versions.bin");
    int failed = 0;
    try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
      ByteBuffer first = ByteBuffer.allocate(chunk);
      assertEquals(chunk, c.read(first, 0));
      assertTrue(allBytesAre(first, 'A'), "first megabyte before the rewrite");
      Files.write(source, newBytes);
      Files.setLastModifiedTime(
          source, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() + 10_000));
      assertNotEquals(
          fs.getStatus("/data/versions.bin", SyncOption.NEVER).getFileId(),
          fs.getStatus("/data/versions.bin", SyncOption.ALWAYS).getFileId(),
          "the sync replaces the inode of a changed file");
      for (long off = chunk; off < length; off += chunk) {
        ByteBuffer b = ByteBuffer.allocate(chunk);
        try {
          while (b.hasRemaining() && c.read(b, off + b.position()) > 0) {
            // read the whole chunk
          }
        } catch (IOException e) {
          // Refused: the version this handle opened can no longer be read whole. Allowed.
          failed++;
          continue;
        }
        assertTrue(
            allBytesAre(b, 'A'),
            "bytes at "
                + off
                + " of the handle opened before the"
                + " rewrite come from the old version only");
      }
    }
    System.out.printf(
        "rewritten file: %d of %d later chunks refused, the rest old bytes%n",
        failed, length / chunk - 1);
    // Until the mount's 1 s status cache expires, an open may still see the old version's
    // status; its first read then answers ESTALE rather than bytes of a version it did not open.
    byte[] now =
        await("a new open to read the new version")
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () -> {
                  try {
                    return Files.readAllBytes(p);
                  } catch (IOException e) {
                    assertTrue(
                        String.valueOf(e.getMessage()).contains("Stale file handle"), e.toString());
                    return null;
                  }
                },
                b -> b != null && b[0] == 'B');
    assertTrue(java.util.Arrays.equals(newBytes, now), "a new open reads the new version whole");
  }

  static boolean allBytesAre(ByteBuffer b, char c) {
    for (int i = 0; i < b.position(); i++) {
      if (b.get(i) != (byte) c) {
        return false;
      }
    }
    return b.position() > 0;
  }
}
