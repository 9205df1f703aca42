package io.strata.bench;

import io.strata.bench.synthetic.SyntheticTree;
import io.strata.client.CloseableIterator;
import io.strata.client.FileSystem;
import io.strata.proto.FileInfo;
import io.strata.tests.MultiProcessCluster;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One master holding a large namespace: two synthetic trees mounted read-only and loaded with
 * LoadMetadata (a tree of directories of {@code fanout} files, and one directory of {@code
 * listEntries} files), then that directory listed through the client in pages, and the master's
 * heap after a full GC ({@code jcmd GC.run}, then {@code GC.heap_info}) and its RSS ({@code
 * /proc/PID/status}), before and after a checkpoint.
 *
 * <p>The master runs with the JVM options {@code bin/strata} gives a master ({@link #JVM}): the
 * test cluster starts masters with a fixed {@code -Xmx512m} and has no way to pass others, so its
 * master is stopped and this one started on the same ports and folders.
 */
final class MasterAtScale {
  /** {@code bin/strata}'s default STRATA_MASTER_JAVA_OPTS. */
  static final List<String> JVM = List.of("-Xms256m", "-Xmx2g", "-XX:+UseG1GC");

  private static final Pattern HEAP = Pattern.compile("heap\\s+total (\\d+)K, used (\\d+)K");

  /**
   * @param inodes the master's inode count with both trees loaded
   * @param heapBytes heap used after a full GC, the log since the last snapshot not purged
   * @param heapAfterCheckpointBytes the same after a checkpoint purged the log
   * @param heapCommittedBytes heap the JVM holds from the system after that GC
   * @param rssBytes VmRSS after the GC; {@code rssPeakBytes} VmHWM
   */
  record Result(
      long inodes,
      SyntheticNamespace.Loaded tree,
      SyntheticNamespace.Loaded flat,
      long listed,
      double listSeconds,
      long heapBytes,
      long heapAfterCheckpointBytes,
      long heapCommittedBytes,
      long rssBytes,
      long rssPeakBytes,
      long logBytes) {
    double loadInodesPerSecond() {
      return (tree.files() + tree.directories() + flat.files() + flat.directories())
          / (tree.seconds() + flat.seconds());
    }
  }

  private MasterAtScale() {}

  static Result run(
      Path base, long inodes, long listEntries, int fanout, Duration loadLimit, Duration limit)
      throws Exception {
    long rest = Math.max(1, inodes - listEntries);
    SyntheticTree tree = new SyntheticTree(Math.max(1, rest * fanout / (fanout + 1)), fanout, 0);
    SyntheticTree flat = new SyntheticTree(listEntries, listEntries, 0);
    try (MultiProcessCluster cluster = HaBench.oneMaster(base).start()) {
      cluster.killMaster();
      Process master = launchMaster(cluster);
      try (FileSystem fs =
          FileSystem.connect(
              cluster.clientConfig(
                  Map.of("strata.client.list.timeout", loadLimit.toSeconds() + "s")))) {
        Deadline loading =
            Deadline.of(
                "Loading " + inodes + " inodes into one master",
                loadLimit,
                "lower --inodes or raise --load-minutes");
        SyntheticNamespace.Loaded treeLoad =
            SyntheticNamespace.mountAndLoad(fs, "/tree", tree, loading);
        SyntheticNamespace.Loaded flatLoad =
            SyntheticNamespace.mountAndLoad(fs, "/flat", flat, loading);
        long count = fs.masterInfo().inodeCount();

        Deadline deadline =
            Deadline.of(
                "Listing and measuring the master at scale", limit, "raise --limit-minutes");
        String dir = "/flat/" + flat.directoryName(0);
        long start = System.nanoTime();
        long listed = 0;
        try (CloseableIterator<FileInfo> it = fs.listStatus(dir)) {
          while (it.hasNext()) {
            it.next();
            if ((++listed & 0xFFFF) == 0) {
              deadline.check("listing " + dir + " (" + listed + " entries so far)");
            }
          }
        }
        double listSeconds = (System.nanoTime() - start) / 1e9;
        if (listed != listEntries) {
          throw new IllegalStateException(
              "Listing " + dir + " gave " + listed + " entries, not " + listEntries);
        }
        long pid = master.pid();
        long[] heap = heapAfterGc(pid);
        long rss = ProcStatus.bytes(pid, "VmRSS:");
        long logBytes =
            (long)
                MultiProcessCluster.metric(
                    MultiProcessCluster.scrapePort(cluster.masterWebPort()),
                    "strata_master_journal_log_bytes");
        fs.checkpoint();
        long heapAfter = heapAfterGc(pid)[0];
        long peak = ProcStatus.bytes(pid, "VmHWM:");
        return new Result(
            count,
            treeLoad,
            flatLoad,
            listed,
            listSeconds,
            heap[0],
            heapAfter,
            heap[1],
            rss,
            peak,
            logBytes);
      } finally {
        master.destroyForcibly();
        master.waitFor(60, TimeUnit.SECONDS);
      }
    }
  }

  /** Starts the master as the cluster would, with {@link #JVM}, and waits until it serves. */
  private static Process launchMaster(MultiProcessCluster cluster) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(JVM);
    cmd.add("-Dlogback.configurationFile=strata-logback-file.xml");
    cmd.add("-Dstrata.log.file=" + cluster.logsDir().resolve("master-2g.log"));
    cmd.addAll(
        cluster.configArgs(
            Map.of("strata.master.web.port", Integer.toString(cluster.masterWebPort()))));
    cmd.add("-cp");
    cmd.add(serverClasspath());
    cmd.add("io.strata.master.MasterMain");
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(
                ProcessBuilder.Redirect.appendTo(
                    cluster.logsDir().resolve("master-2g.out").toFile()))
            .start();
    try {
      // Its metrics endpoint serving; the first client call waits for the lead as every call
      // does.
      MultiProcessCluster.waitFor(
          "the master with "
              + String.join(" ", JVM)
              + " serving"
              + " /metrics (log: "
              + cluster.logsDir().resolve("master-2g.log")
              + ")",
          Duration.ofSeconds(120),
          () -> !MultiProcessCluster.scrapePort(cluster.masterWebPort()).isEmpty(),
          p);
    } catch (RuntimeException e) {
      p.destroyForcibly();
      throw e;
    }
    return p;
  }

  /** This JVM's classpath less the test servers' jars, as the test cluster gives its processes. */
  private static String serverClasspath() {
    List<String> keep = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      String name =
          Path.of(entry).getFileName() == null ? entry : Path.of(entry).getFileName().toString();
      if (!name.startsWith("hadoop-client-minicluster") && !name.startsWith("s3proxy")) {
        keep.add(entry);
      }
    }
    return String.join(File.pathSeparator, keep);
  }

  /**
   * Runs a full GC in the process and returns the heap it uses after it and the heap it has
   * committed, in bytes.
   */
  static long[] heapAfterGc(long pid) throws Exception {
    jcmd(pid, "GC.run");
    String info = jcmd(pid, "GC.heap_info");
    Matcher m = HEAP.matcher(info);
    if (!m.find()) {
      throw new IllegalStateException("jcmd " + pid + " GC.heap_info gave no heap figure: " + info);
    }
    return new long[] {Long.parseLong(m.group(2)) * 1024, Long.parseLong(m.group(1)) * 1024};
  }

  private static String jcmd(long pid, String command) throws Exception {
    Path out = java.nio.file.Files.createTempFile("strata-bench-jcmd", ".out");
    try {
      Process p =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                  Long.toString(pid),
                  command)
              .redirectErrorStream(true)
              .redirectOutput(out.toFile())
              .start();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("jcmd " + pid + " " + command + " hung for 120 s");
      }
      String text = java.nio.file.Files.readString(out, StandardCharsets.UTF_8);
      if (p.exitValue() != 0) {
        throw new IllegalStateException("jcmd " + pid + " " + command + " failed: " + text);
      }
      return text;
    } finally {
      java.nio.file.Files.deleteIfExists(out);
    }
  }
}
