package io.strata.bench;

import io.strata.client.master.MasterClient;
import io.strata.common.error.StrataException;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.tests.MultiProcessCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Metadata write throughput of the leading master: empty files made with the master's two calls of
 * a write, CreateFile then CompleteFile (length 0), each one journal write, straight on the master
 * client, so no worker and no under-store write takes part. Client threads take the next file
 * number from a shared counter until the count is made. An untimed warm-up of the same calls comes
 * first on every cluster.
 */
final class MetadataWrites {
  private MetadataWrites() {}

  /**
   * One measured row.
   *
   * @param filesPerSecond files made per second
   * @param createMs the leader's mean time in CreateFile over the row (its own timer: lock wait and
   *     journal commit included, client and network not)
   * @param completeMs the same for CompleteFile
   */
  record Row(double filesPerSecond, double createMs, double completeMs, Cpu cpu) {}

  /**
   * Where the cores went during a row: each master's and this (client) process's CPU seconds per
   * second of the row, and the leader's busiest threads.
   */
  record Cpu(
      double leaderCores, double followerCores, double clientCores, List<String> leaderThreads) {
    String describe() {
      return String.format(
          "leader %.2f cores, followers %.2f, client %.2f; the leader's" + " busiest threads: %s",
          leaderCores, followerCores, clientCores, String.join(", ", leaderThreads));
    }
  }

  /** Makes {@code count} files in a new folder {@code dir} from {@code threads} threads. */
  static Row run(MultiProcessCluster cluster, String dir, int threads, int count, Deadline deadline)
      throws Exception {
    try (MasterClient master = new MasterClient(cluster.clientConfig())) {
      master.call(
          s ->
              s.createDirectory(
                  CreateDirectoryRequest.newBuilder().setPath(dir).setRecursive(true).build()));
      AtomicInteger next = new AtomicInteger();
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        String before = cluster.scrapeMaster();
        int leader = cluster.leaderIndex();
        long self = ProcessHandle.current().pid();
        double[] cpuBefore = masterCpu(cluster);
        double clientBefore = ProcCpu.seconds(self);
        java.util.Map<String, Double> threadsBefore = ProcCpu.byThread(cluster.masterPid(leader));
        long start = System.nanoTime();
        List<Future<?>> running = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          running.add(
              pool.submit(
                  () -> {
                    int i;
                    while ((i = next.getAndIncrement()) < count) {
                      if ((i & 63) == 0) {
                        deadline.check("making file " + i + " of " + count + " in " + dir);
                      }
                      create(master, dir + "/f" + i);
                    }
                    return null;
                  }));
        }
        for (Future<?> f : running) {
          f.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double[] cpuAfter = masterCpu(cluster);
        double clientCores = (ProcCpu.seconds(self) - clientBefore) / seconds;
        List<String> busiest =
            ProcCpu.busiest(threadsBefore, ProcCpu.byThread(cluster.masterPid(leader)), 6);
        double leaderCores = 0;
        double followerCores = 0;
        for (int i = 0; i < cpuAfter.length; i++) {
          double cores = (cpuAfter[i] - cpuBefore[i]) / seconds;
          if (i == leader) {
            leaderCores = cores;
          } else {
            followerCores += cores;
          }
        }
        String after = cluster.scrapeMaster();
        return new Row(
            count / seconds,
            meanMs(before, after, "CreateFile"),
            meanMs(before, after, "CompleteFile"),
            new Cpu(leaderCores, followerCores, clientCores, busiest));
      } finally {
        pool.shutdownNow();
      }
    }
  }

  private static double[] masterCpu(MultiProcessCluster cluster) {
    double[] out = new double[cluster.masterCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = ProcCpu.seconds(cluster.masterPid(i));
    }
    return out;
  }

  private static void create(MasterClient master, String path) throws StrataException {
    long id =
        master
            .call(s -> s.createFile(CreateFileRequest.newBuilder().setPath(path).build()))
            .getFile()
            .getFileId();
    master.call(
        s ->
            s.completeFile(
                CompleteFileRequest.newBuilder().setPath(path).setLength(0).setFileId(id).build()));
  }

  /** Mean time of a master call between two scrapes, in ms; -1 when a scrape is missing. */
  private static double meanMs(String before, String after, String method) {
    if (before.isEmpty() || after.isEmpty()) {
      return -1;
    }
    String tag = "{method=\"" + method + "\"}";
    double calls =
        MultiProcessCluster.metric(after, "strata_master_rpc_latency_seconds_count" + tag)
            - MultiProcessCluster.metric(before, "strata_master_rpc_latency_seconds_count" + tag);
    double sum =
        MultiProcessCluster.metric(after, "strata_master_rpc_latency_seconds_sum" + tag)
            - MultiProcessCluster.metric(before, "strata_master_rpc_latency_seconds_sum" + tag);
    return calls <= 0 ? -1 : sum / calls * 1000;
  }
}
