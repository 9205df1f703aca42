package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.LoadMetadataProgress;
import io.strata.proto.LoadMetadataRequest;
import io.strata.proto.MountRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LoadMetadataTest {
  @TempDir Path home;

  private static List<LoadMetadataProgress> load(TestMaster m, LoadMetadataRequest request) {
    List<LoadMetadataProgress> all = new ArrayList<>();
    Iterator<LoadMetadataProgress> it = m.fs.loadMetadata(request);
    while (it.hasNext()) {
      all.add(it.next());
    }
    return all;
  }

  private static LoadMetadataProgress last(List<LoadMetadataProgress> all) {
    return all.get(all.size() - 1);
  }

  @Test
  void loadOfANestedTreeOfFiveThousandFilesReportsEveryFileAndEndsWithDone() throws Exception {
    Path tree = home.resolve("ufs/tree");
    long bytes = 0;
    for (int a = 0; a < 10; a++) {
      for (int b = 0; b < 10; b++) {
        Path dir = tree.resolve("a" + a).resolve("b" + b);
        Files.createDirectories(dir);
        for (int f = 0; f < 50; f++) {
          Files.write(dir.resolve("f" + f), new byte[f]);
          bytes += f;
        }
      }
    }
    try (TestMaster m = TestMaster.start(home)) {
      List<LoadMetadataProgress> all =
          load(m, LoadMetadataRequest.newBuilder().setPath("/tree").build());
      LoadMetadataProgress done = last(all);
      assertTrue(done.getDone());
      for (LoadMetadataProgress p : all.subList(0, all.size() - 1)) {
        assertFalse(p.getDone(), "only the last message is done");
      }
      assertEquals(5000, done.getFiles());
      assertEquals(111, done.getDirectories(), "/tree, 10 and 100 below it");
      assertEquals(bytes, done.getBytes());
      assertEquals(0, done.getFailedCount());
      long inodes =
          m.fs
              .getMasterInfo(io.strata.proto.GetMasterInfoRequest.getDefaultInstance())
              .getInodeCount();
      assertEquals(1 + 1 + 110 + 5000, inodes, "root, /tree, directories and files");
      assertEquals(50, m.names("/tree/a3/b7").size());

      // Again with a sync: changes made in the store since are found everywhere.
      Files.delete(tree.resolve("a0/b0/f0"));
      Files.write(tree.resolve("a9/b9/extra"), new byte[1000]);
      LoadMetadataProgress synced =
          last(
              load(
                  m,
                  LoadMetadataRequest.newBuilder().setPath("/tree").setSyncIntervalMs(0).build()));
      assertEquals(5000, synced.getFiles());
      assertEquals(bytes + 1000, synced.getBytes());
      assertTrue(m.names("/tree/a9/b9").contains("extra"));
    }
  }

  @Test
  void unlistableDirectoryIsReportedAndTheWalkGoesOn() throws Exception {
    Path store = home.resolve("other");
    Files.createDirectories(store.resolve("ok"));
    Files.createDirectories(store.resolve(CountingUnderFileSystem.UNLISTABLE));
    Files.write(store.resolve("ok/f"), new byte[3]);
    try (TestMaster m = TestMaster.start(home)) {
      m.fs.mount(MountRequest.newBuilder().setPath("/o").setUfsUri("counting://" + store).build());
      LoadMetadataProgress done =
          last(load(m, LoadMetadataRequest.newBuilder().setPath("/o").build()));
      assertTrue(done.getDone());
      assertEquals(1, done.getFiles());
      assertEquals(1, done.getFailedCount());
      assertEquals(List.of("/o/" + CountingUnderFileSystem.UNLISTABLE), done.getFailedPathsList());
      assertFails(
          Status.Code.NOT_FOUND,
          "Path does not exist: /nowhere",
          () -> load(m, LoadMetadataRequest.newBuilder().setPath("/nowhere").build()));
      assertEquals(
          1,
          last(load(m, LoadMetadataRequest.newBuilder().setPath("/o/ok/f").build())).getFiles(),
          "a file counts itself");
    }
  }
}
