package io.strata.master;

import static io.strata.master.UfsSyncTest.list;
import static io.strata.master.UfsSyncTest.names;
import static io.strata.master.UfsSyncTest.stat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.MountRequest;
import io.strata.proto.RenameRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Listing syncs counted and raced through a test store that counts its calls. */
class ListingSyncTest {
  @TempDir Path home;
  @TempDir Path store;

  @BeforeEach
  void reset() {
    CountingUnderFileSystem.reset();
  }

  private void mount(TestMaster m, String path, String interval) {
    m.fs.mount(
        MountRequest.newBuilder()
            .setPath(path)
            .setUfsUri("counting://" + store)
            .putOptions("sync.interval", interval)
            .build());
  }

  @Test
  void listingStoresEveryChildsStatusSoSiblingsNeedNoStoreCall() throws Exception {
    for (int i = 0; i < 20; i++) {
      Files.write(store.resolve("f" + i), new byte[i]);
    }
    try (TestMaster m = TestMaster.start(home)) {
      mount(m, "/c", "1h");
      CountingUnderFileSystem.reset();
      assertEquals(20, m.list("/c").size());
      assertEquals(1, CountingUnderFileSystem.LIST_CALLS.get());
      for (int i = 0; i < 20; i++) {
        FileInfo f = m.stat("/c/f" + i);
        assertEquals(i, f.getLength());
        assertEquals(
            i + ":" + Files.getLastModifiedTime(store.resolve("f" + i)).toMillis(),
            f.getUfsFingerprint());
      }
      assertEquals(0, CountingUnderFileSystem.STATUS_CALLS.get(), "loaded by the listing");

      // A sync of the listing checks every child again with one call.
      assertEquals(20, list(m, "/c", 0).size());
      assertEquals(2, CountingUnderFileSystem.LIST_CALLS.get());
      for (int i = 0; i < 20; i++) {
        m.stat("/c/f" + i);
      }
      assertEquals(0, CountingUnderFileSystem.STATUS_CALLS.get(), "synced by the listing");
      stat(m, "/c/f3", 0);
      assertEquals(1, CountingUnderFileSystem.STATUS_CALLS.get(), "always asks the store");
    }
  }

  @Test
  void renameAndDeleteThroughStrataDuringASyncAreNotUndone() throws Exception {
    Files.write(store.resolve("doomed"), new byte[1]);
    Files.write(store.resolve("moved"), new byte[2]);
    Files.write(store.resolve("changed"), new byte[3]);
    try (TestMaster m = TestMaster.start(home)) {
      mount(m, "/race", "never");
      assertEquals(List.of("changed", "doomed", "moved"), m.names("/race"));
      FileInfo changed = m.stat("/race/changed");
      Files.write(store.resolve("changed"), new byte[30]);
      Files.write(store.resolve("added"), new byte[4]);

      // Runs on the sync's thread after the store listed every name, before any is applied.
      CountingUnderFileSystem.afterListing =
          () -> {
            m.fs.delete(DeleteRequest.newBuilder().setPath("/race/doomed").build());
            m.fs.rename(
                RenameRequest.newBuilder()
                    .setSrcPath("/race/moved")
                    .setDstPath("/race/renamed")
                    .build());
          };
      List<FileInfo> synced = list(m, "/race", 0);
      assertEquals(null, CountingUnderFileSystem.afterListing, "the hook ran");
      assertEquals(List.of("added", "changed", "renamed"), names(synced));
      assertEquals(30, synced.get(1).getLength());
      assertNotEquals(changed.getFileId(), synced.get(1).getFileId());
      assertEquals(
          List.of("added", "changed", "renamed"),
          names(list(m, "/race", 0)),
          "the store agrees on the next sync");
    }
  }
}
