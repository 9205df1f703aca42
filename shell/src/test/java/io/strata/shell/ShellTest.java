package io.strata.shell;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.strata.client.TestMaster;
import io.strata.common.BlockIds;
import io.strata.proto.BlockLocation;
import io.strata.proto.FileInfo;
import io.strata.proto.TierUsage;
import io.strata.proto.WorkerAddress;
import io.strata.proto.WorkerCacheStats;
import io.strata.proto.WorkerInfo;
import io.strata.proto.WorkerState;
import io.strata.shell.ShellRun.Result;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ShellTest {
  private static final String NL = System.lineSeparator();

  @TempDir Path dir;
  private TestMaster master;
  private Server server;
  private TestWriter writer;
  private final Map<String, String> conf = new HashMap<>();

  @BeforeEach
  void setUp() throws Exception {
    Files.createDirectories(dir.resolve("ufs"));
    master = new TestMaster("file://" + dir.resolve("ufs"));
    server =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .addService(master)
            .build()
            .start();
    writer = new TestWriter(freePort());
    master.workers = List.of(writer.info());
    conf.put("strata.conf.dir", dir.resolve("conf").toString());
    conf.put("strata.master.hostname", "127.0.0.1");
    conf.put("strata.master.rpc.port", Integer.toString(server.getPort()));
    conf.put("strata.client.master.retry.max.duration", "1s");
    conf.put("strata.client.short.circuit.enabled", "false");
  }

  @AfterEach
  void tearDown() throws Exception {
    writer.close();
    server.shutdownNow().awaitTermination();
  }

  private Result run(String... args) {
    return run(Map.of(), args);
  }

  private Result run(Map<String, String> env, String... args) {
    return ShellRun.run(conf, env, Map.of(), args);
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** A file whose bytes are in the under-store folder. */
  private byte[] addFile(String path, int length) throws Exception {
    byte[] content = new byte[length];
    new Random(length).nextBytes(content);
    Path local = dir.resolve("ufs").resolve(path.substring(1));
    Files.createDirectories(local.getParent());
    Files.write(local, content);
    master.addFile(path, length, 1 << 20, "file://" + local);
    return content;
  }

  @Test
  void helpListsTheCommands() {
    Result r = run("--help");
    assertEquals(0, r.code());
    for (String c : List.of("fs", "fsadmin", "local", "master", "worker")) {
      assertTrue(r.out().contains("  " + c + " "), r.out());
    }
    Result m = run("master", "--help");
    assertEquals(0, m.code());
    assertTrue(m.out().contains("start"), m.out());
    Result fs = run("fs", "--help");
    for (String c :
        List.of(
            "ls",
            "stat",
            "cat",
            "head",
            "tail",
            "cp",
            "mkdir",
            "rm",
            "mv",
            "mount",
            "unmount",
            "location",
            "free",
            "du",
            "count",
            "load")) {
      assertTrue(fs.out().contains("  " + c + " "), c);
    }
  }

  @Test
  void onlyTheNamedBranchIsBuiltYetGroupsAndMistakesSeeEveryCommand() {
    Result journal = run("fsadmin", "journal");
    assertEquals(2, journal.code());
    assertTrue(
        journal.err().contains("  quorum ") && journal.err().contains("  checkpoint "),
        journal.err());
    Result quorum = run("fsadmin", "journal", "quorum", "--help");
    for (String c : List.of("info", "elect", "add", "remove")) {
      assertTrue(quorum.out().contains("  " + c + " "), quorum.out());
    }
    Result bogus = run("fs", "bogus");
    assertEquals(2, bogus.code());
    assertEquals(
        "strata: Unmatched argument at index 1: 'bogus' (see `strata fs --help`)" + NL,
        bogus.err());
  }

  @Test
  void noCommandPrintsUsageAndExitsTwo() {
    Result r = run();
    assertEquals(2, r.code());
    assertTrue(r.err().contains("Usage: strata"), r.err());
  }

  @Test
  void lsShowsColumnsWithHumanSizes() throws Exception {
    run("fs", "mkdir", "-p", "/dir/sub");
    master.addFile("/dir/a.bin", 500, 1 << 20, "file:///x/a");
    master.put(
        master.addFile("/dir/b.bin", 1536, 1 << 20, "file:///x/b").toBuilder()
            .setCachedBytes(768)
            .build());
    master.addFile("/dir/c.bin", 64L << 20, 1 << 20, "file:///x/c");
    Result r = run("fs", "ls", "-h", "/dir");
    assertEquals(0, r.code(), r.err());
    String time = Format.time(1_700_000_000_000L);
    List<String> lines = r.out().lines().toList();
    assertEquals(4, lines.size(), r.out());
    assertEquals(
        "-rw-r--r--  alice    staff            500B  " + time + "    0%  /dir/a.bin", lines.get(0));
    assertEquals(
        "-rw-r--r--  alice    staff          1.5KiB  " + time + "   50%  /dir/b.bin", lines.get(1));
    assertTrue(lines.get(2).contains("     64.0MiB  "), lines.get(2));
    assertTrue(
        lines.get(3).startsWith("drwxr-xr-x  alice    staff               -  "), lines.get(3));
    assertTrue(lines.get(3).endsWith("   -  /dir/sub/"), lines.get(3));

    Result exact = run("fs", "ls", "/dir/b.bin");
    assertTrue(exact.out().contains("        1536  "), exact.out());
  }

  @Test
  void lsRecursiveWalksSubdirectories() throws Exception {
    run("fs", "mkdir", "-p", "/r/s/t");
    master.addFile("/r/s/t/deep", 1, 1 << 20, "file:///x/deep");
    master.addFile("/r/top", 1, 1 << 20, "file:///x/top");
    Result r = run("fs", "ls", "-R", "/r");
    List<String> paths = r.out().lines().map(l -> l.substring(l.lastIndexOf(' ') + 1)).toList();
    assertEquals(List.of("/r/s/", "/r/s/t/", "/r/s/t/deep", "/r/top"), paths);
  }

  @Test
  void missingPathIsOneLineOnStderrWithExitCodeOne() {
    Result r = run("fs", "stat", "/nope");
    assertEquals(1, r.code());
    assertEquals("strata: Path does not exist: /nope" + NL, r.err());
    assertEquals("", r.out());
  }

  @Test
  void stackTracesOnlyWithStrataDebug() {
    assertFalse(run("fs", "ls", "/nope").err().contains("\tat "));
    Result debug = run(Map.of("STRATA_DEBUG", "1"), "fs", "ls", "/nope");
    assertEquals(1, debug.code());
    assertTrue(debug.err().startsWith("strata: Path does not exist: /nope" + NL));
    assertTrue(debug.err().contains("\tat "), debug.err());
  }

  @Test
  void usageErrorsExitWithTwo() {
    Result missing = run("fs", "mkdir");
    assertEquals(2, missing.code());
    assertTrue(
        missing.err().startsWith("strata: Missing required parameter: 'PATH'"), missing.err());
    assertEquals(1, missing.err().lines().count());
    Result badSize = run("fs", "head", "-c", "lots", "/x");
    assertEquals(2, badSize.code());
    assertTrue(badSize.err().contains("'lots' is not a byte count"), badSize.err());
    assertEquals(2, run("fs", "frobnicate").code());
    assertEquals(2, run("fs", "mount", "/only-a-path").code());
  }

  @Test
  void badConfigurationExitsWithTwo() {
    conf.put("strata.client.rpc.timeout", "soon");
    Result r = run("fs", "ls", "/");
    assertEquals(2, r.code());
    assertTrue(
        r.err()
            .startsWith(
                "strata: Bad value 'soon' for configuration key" + " 'strata.client.rpc.timeout'"),
        r.err());
    conf.remove("strata.client.rpc.timeout");
    conf.put("strata.client.no.such.key", "1");
    Result unknown = run("fs", "ls", "/");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().startsWith("strata: Unknown configuration key"), unknown.err());
  }

  @Test
  void unreachableMasterSaysHowToStartIt() throws Exception {
    int port = freePort();
    conf.put("strata.master.rpc.port", Integer.toString(port));
    Result r = run("fs", "ls", "/");
    assertEquals(1, r.code());
    assertEquals(
        "strata: Cannot reach the Strata master at 127.0.0.1:"
            + port
            + " (tried for"
            + " 1s). Start it with `strata master start` or `strata local up`, or set"
            + " strata.master.hostname / strata.master.rpc.port (conf/strata-site.properties,"
            + " STRATA_MASTER_HOSTNAME, or -Dstrata.master.hostname)"
            + NL,
        r.err());
  }

  @Test
  void namespaceCommandsChangeTheNamespace() {
    assertEquals(0, run("fs", "mkdir", "-p", "/a/b").code());
    assertEquals(1, run("fs", "mkdir", "/a/b").code());
    assertEquals(0, run("fs", "mkdir", "/c").code());
    assertEquals(1, run("fs", "mv", "/a", "/c").code());
    assertEquals(0, run("fs", "mv", "/a", "/c/a").code());
    assertTrue(master.has("/c/a/b"));
    Result notEmpty = run("fs", "rm", "/c");
    assertEquals(1, notEmpty.code());
    assertEquals(
        "strata: Directory is not empty: /c"
            + " (delete it with everything below it: `strata fs rm -R`)"
            + NL,
        notEmpty.err());
    assertEquals(0, run("fs", "rm", "-R", "/c").code());
    assertFalse(master.has("/c"));
    Result stat = run("fs", "stat", "/");
    assertTrue(stat.out().contains("Type:        directory" + NL), stat.out());
    assertTrue(stat.out().contains("Mode:        drwxr-xr-x (0755)" + NL), stat.out());
  }

  @Test
  void mountMountsAndLists() {
    Result m =
        run(
            "fs",
            "mount",
            "/data",
            "file:///srv/data",
            "--option",
            "b=2",
            "--option",
            "a=1",
            "--readonly");
    assertEquals(0, m.code(), m.err());
    assertEquals("Mounted file:///srv/data at /data (read-only)" + NL, m.out());
    Result list = run("fs", "mount");
    List<String> lines = list.out().lines().toList();
    assertEquals("/data  file:///srv/data  ro  a=1,b=2", lines.get(1));
    assertEquals(0, run("fs", "unmount", "/data").code());
    assertEquals(1, run("fs", "mount").out().lines().count());
  }

  @Test
  void duAndCountTotalTheTree() throws Exception {
    run("fs", "mkdir", "-p", "/t/x/y");
    master.addFile("/t/f1", 1000, 1 << 20, "file:///x/1");
    master.put(
        master.addFile("/t/x/f2", 3000, 1 << 20, "file:///x/2").toBuilder()
            .setCachedBytes(3000)
            .build());
    master.addFile("/t/x/y/f3", 2048, 1 << 20, "file:///x/3");
    Result count = run("fs", "count", "/t");
    assertEquals(
        String.format("%12s %12s %16s  %s", "DIRS", "FILES", "BYTES", "PATH"),
        count.out().lines().toList().get(0));
    assertEquals(
        String.format("%12d %12d %16d  %s", 3, 3, 6048, "/t"), count.out().lines().toList().get(1));
    Result du = run("fs", "du", "/t");
    assertEquals(
        List.of(
            String.format("%12s  %12s  %4s  %s", "1000", "0", "0%", "/t/f1"),
            String.format("%12s  %12s  %4s  %s", "5048", "3000", "59%", "/t/x")),
        du.out().lines().toList());
    Result total = run("fs", "du", "-s", "-h", "/t");
    assertEquals(
        String.format("%12s  %12s  %4s  %s", "5.9KiB", "2.9KiB", "49%", "/t") + NL, total.out());
  }

  @Test
  void locationShowsHoldersAndTheHomeWorker() throws Exception {
    FileInfo f = master.addFile("/loc", 3 << 20, 2 << 20, "file:///x/loc");
    long block0 = BlockIds.blockId(f.getFileId(), 0);
    master.setLocations(
        block0,
        List.of(
            BlockLocation.newBuilder()
                .setWorkerId(7)
                .setAddress(WorkerAddress.newBuilder().setHost("10.0.0.7").setDataPort(19301))
                .setTier("MEM")
                .build()));
    Result r = run("fs", "location", "/loc");
    assertEquals(0, r.code(), r.err());
    List<String> lines = r.out().lines().toList();
    assertEquals("/loc: 3.0MiB in 2 blocks of 2.0MiB, 0% cached", lines.get(0));
    assertEquals("block " + block0 + "  offset 0  length 2097152", lines.get(1));
    assertEquals("  cached on: worker 7 10.0.0.7:19301 (MEM)", lines.get(2));
    assertTrue(lines.get(3).startsWith("  home:      worker 7 127.0.0.1:"), lines.get(3));
    assertEquals("  cached on: not cached", lines.get(5));
  }

  @Test
  void freeAndCheckpointReport() throws Exception {
    master.addFile("/fr", 10, 1 << 20, "file:///x/fr");
    assertEquals("Freed 2 blocks (3.0MiB) of /fr" + NL, run("fs", "free", "/fr").out());
    assertEquals(
        "Checkpoint taken at journal sequence 42" + NL, run("fsadmin", "checkpoint").out());
  }

  @Test
  void fsadminReportSummarisesWorkersTiersAndCache() {
    WorkerInfo live =
        WorkerInfo.newBuilder()
            .setWorkerId(1)
            .setState(WorkerState.WORKER_LIVE)
            .setAddress(WorkerAddress.newBuilder().setHost("10.0.0.1").setDataPort(19301))
            .addTiers(
                TierUsage.newBuilder()
                    .setAlias("SSD")
                    .setCapacityBytes(10L << 30)
                    .setUsedBytes(5L << 30))
            .addTiers(
                TierUsage.newBuilder()
                    .setAlias("MEM")
                    .setCapacityBytes(1L << 30)
                    .setUsedBytes(256L << 20))
            .setCacheStats(
                WorkerCacheStats.newBuilder()
                    .setHits(30)
                    .setMisses(10)
                    .setBytesFromCache(3L << 20)
                    .setBytesFromUfs(1L << 20)
                    .setBlocksCorrupt(2)
                    .setBytesScrubbed(5L << 20))
            .setBlockCount(12)
            .build();
    WorkerInfo lost =
        WorkerInfo.newBuilder()
            .setWorkerId(2)
            .setState(WorkerState.WORKER_LOST)
            .setAddress(WorkerAddress.newBuilder().setHost("10.0.0.2").setDataPort(19301))
            .setCacheStats(WorkerCacheStats.newBuilder().setHits(0).setMisses(0))
            .build();
    master.workers = List.of(live, lost);
    Result r = run("fsadmin", "report");
    assertEquals(0, r.code(), r.err());
    String out = r.out();
    assertTrue(out.contains("Workers: 1 live, 1 lost"), out);
    assertTrue(out.contains("10.0.0.1:19301          live         12"), out);
    assertTrue(out.contains("10.0.0.2:19301          lost"), out);
    int mem = out.indexOf("  MEM ");
    int ssd = out.indexOf("  SSD ");
    assertTrue(mem > 0 && ssd > mem, out);
    assertTrue(
        out.contains(String.format("  %-5s  %12s  %12s  %5s", "total", "11.0GiB", "5.3GiB", "47%")),
        out);
    assertTrue(out.contains("hits 30, misses 10, hit ratio 75.0%"), out);
    assertTrue(out.contains("bytes from cache 3.0MiB, from under stores 1.0MiB"), out);
    assertTrue(
        out.contains(
            "blocks found not matching their checksums and dropped 2, verified by the scrubbers"
                + " 5.0MiB"),
        out);
  }

  @Test
  void copyRoundTripsBetweenThisMachineAndStrata() throws Exception {
    byte[] content = new byte[3 << 20];
    new Random(1).nextBytes(content);
    Path local = dir.resolve("local.bin");
    Files.write(local, content);
    run("fs", "mkdir", "/in");
    Result up = run("fs", "cp", "local:" + local, "/in");
    assertEquals(0, up.code(), up.err());
    assertTrue(master.has("/in/local.bin"));

    Result cat = run("fs", "cat", "/in/local.bin");
    assertEquals(0, cat.code(), cat.err());
    assertArrayEquals(content, cat.bytes());
    Result head = run("fs", "head", "-c", "10", "/in/local.bin");
    assertArrayEquals(java.util.Arrays.copyOf(content, 10), head.bytes());
    Result tail = run("fs", "tail", "/in/local.bin");
    assertArrayEquals(
        java.util.Arrays.copyOfRange(content, content.length - 1024, content.length), tail.bytes());

    Path back = dir.resolve("back.bin");
    Result down = run("fs", "cp", "/in/local.bin", "file://" + back);
    assertEquals(0, down.code(), down.err());
    assertArrayEquals(content, Files.readAllBytes(back));
    Result again = run("fs", "cp", "/in/local.bin", "file://" + back);
    assertEquals(1, again.code());
    assertTrue(again.err().contains("use cp -f"), again.err());
  }

  @Test
  void copyOfADirectoryNeedsMinusR() throws Exception {
    Path tree = dir.resolve("tree");
    Files.createDirectories(tree.resolve("sub"));
    Files.writeString(tree.resolve("a.txt"), "alpha");
    Files.writeString(tree.resolve("sub/b.txt"), "beta");
    Result refused = run("fs", "cp", "local:" + tree, "/t");
    assertEquals(2, refused.code());
    assertEquals("strata: local:" + tree + " is a directory (use cp -R)" + NL, refused.err());
    Result r = run("fs", "cp", "-R", "local:" + tree, "/t");
    assertEquals(0, r.code(), r.err());
    assertTrue(master.has("/t/a.txt"));
    assertTrue(master.has("/t/sub/b.txt"));
    assertEquals("beta", run("fs", "cat", "/t/sub/b.txt").out());
    addFile("/plain/x.txt", 5);
    assertEquals(1, run("fs", "cat", "/plain").code());
  }
}
