package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConcurrentOperationsTest {
  @TempDir Path home;

  @Test
  void concurrentCreatesDeletesAndListingsKeepTheNamespaceConsistent() throws Exception {
    Path loaded = home.resolve("ufs/shared");
    Files.createDirectories(loaded);
    for (int i = 0; i < 2000; i++) {
      Files.createFile(loaded.resolve("old-" + i));
    }
    Map<String, FileInfo> before;
    try (TestMaster m = TestMaster.start(home)) {
      ExecutorService pool = Executors.newFixedThreadPool(6);
      List<Future<?>> work = new ArrayList<>();
      // Listings load the under-store directory in batches while others change it.
      for (int t = 0; t < 2; t++) {
        work.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 5; i++) {
                    m.list("/shared");
                  }
                  return null;
                }));
      }
      for (int t = 0; t < 3; t++) {
        int thread = t;
        work.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 50; i++) {
                    m.fs.createFile(
                        CreateFileRequest.newBuilder()
                            .setPath("/shared/new-" + thread + "-" + i)
                            .build());
                  }
                  return null;
                }));
      }
      work.add(
          pool.submit(
              () -> {
                for (int i = 0; i < 100; i++) {
                  m.fs.delete(DeleteRequest.newBuilder().setPath("/shared/old-" + i).build());
                }
                return null;
              }));
      for (Future<?> f : work) {
        f.get();
      }
      pool.shutdown();

      List<FileInfo> listed = m.list("/shared");
      Set<String> names = new HashSet<>();
      Set<Long> ids = new HashSet<>();
      for (FileInfo f : listed) {
        assertTrue(names.add(f.getName()), "listed twice: " + f.getName());
        assertTrue(ids.add(f.getFileId()), "id used twice: " + f.getFileId());
      }
      assertEquals(1900 + 150, names.size());
      for (int i = 0; i < 100; i++) {
        assertTrue(!names.contains("old-" + i), "deleted file came back: old-" + i);
      }
      before = JournalRecoveryTest.snapshot(m.fs);
      m.crash();
    }
    try (TestMaster again = TestMaster.start(home)) {
      assertEquals(before, JournalRecoveryTest.snapshot(again.fs));
    }
  }
}
