package io.strata.master;

import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScratchBenchTest {
  @TempDir Path home;

  @Test
  void bench() throws Exception {
    try (TestMaster m = TestMaster.start(home, Map.of("strata.master.rpc.threads", "32", "strata.master.journal.batch.inflight", "4"))) {
      for (int threads : new int[] {16, 16, 16, 16, 16, 16}) {
        String dir = "/d" + threads + "-" + System.nanoTime();
        m.fs.createDirectory(CreateDirectoryRequest.newBuilder().setPath(dir).build());
        int count = 4000;
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long start = System.nanoTime();
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          fs.add(pool.submit(() -> {
            int i;
            while ((i = next.getAndIncrement()) < count) {
              String p = dir + "/f" + i;
              long id = m.fs.createFile(CreateFileRequest.newBuilder().setPath(p).build())
                  .getFile().getFileId();
              m.fs.completeFile(CompleteFileRequest.newBuilder().setPath(p).setFileId(id)
                  .setLength(0).build());
            }
            return null;
          }));
        }
        for (Future<?> f : fs) {
          f.get();
        }
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf("SCRATCH %d threads: %.0f files/s, %.2f cores%n", threads, count / s,
            (os.getProcessCpuTime() - cpu0) / 1e9 / s);
        for (String line : m.server.meterRegistry().scrape().split("\n")) {
          if (line.startsWith("strata_master_journal_batch_changes_")
              || line.startsWith("strata_master_rpc_latency_seconds_sum")
              || line.startsWith("strata_master_rpc_latency_seconds_count")) {
            System.out.println("SCRATCH   " + line);
          }
        }
        pool.shutdown();
      }
    }
  }
}
