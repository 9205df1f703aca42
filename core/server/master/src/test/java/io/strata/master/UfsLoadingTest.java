package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.FileInfo;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UfsLoadingTest {
  @TempDir Path home;

  private void write(Path file, int bytes) throws Exception {
    Files.createDirectories(file.getParent());
    Files.write(file, new byte[bytes]);
  }

  @Test
  void statOfANestedUnseenPathLoadsEachComponentFromTheStore() throws Exception {
    Path ufs = home.resolve("ufs");
    write(ufs.resolve("datasets/imagenet/train/n01440764.tar"), 1234);
    Files.setPosixFilePermissions(
        ufs.resolve("datasets/imagenet/train/n01440764.tar"),
        PosixFilePermissions.fromString("rw-r-----"));
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo f = m.stat("/datasets/imagenet/train/n01440764.tar");
      assertEquals(1234, f.getLength());
      assertTrue(f.getComplete());
      assertEquals(0640, f.getMode());
      assertEquals(
          "file://" + ufs.resolve("datasets/imagenet/train/n01440764.tar"), f.getUfsPath());
      assertTrue(f.getUfsFingerprint().startsWith("1234:"), f.getUfsFingerprint());
      assertEquals(1, f.getBlockCount());
      FileInfo train = m.stat("/datasets/imagenet/train");
      assertTrue(train.getDirectory());
      assertFails(
          Status.Code.NOT_FOUND,
          "Path does not exist: /datasets/imagenet/val",
          () -> m.stat("/datasets/imagenet/val"));
      assertFails(
          Status.Code.NOT_FOUND,
          "Path does not exist: /datasets/x/y/z",
          () -> m.stat("/datasets/x/y/z"));
    }
  }

  @Test
  void listingLoadsNestedDirectoriesOnceAndIdsSurviveARestart() throws Exception {
    Path ufs = home.resolve("ufs");
    write(ufs.resolve("a/1.bin"), 10);
    write(ufs.resolve("a/2.bin"), 20);
    write(ufs.resolve("a/sub/3.bin"), 30);
    Files.createDirectories(ufs.resolve("a/empty"));
    List<FileInfo> before;
    FileInfo nested;
    try (TestMaster m = TestMaster.start(home)) {
      assertEquals(List.of("a"), m.names("/"));
      before = m.list("/a");
      assertEquals(
          List.of("1.bin", "2.bin", "empty", "sub"),
          before.stream().map(FileInfo::getName).toList());
      assertEquals(20, before.get(1).getLength());
      assertTrue(before.get(3).getDirectory());
      assertEquals(List.of("3.bin"), m.names("/a/sub"));
      assertEquals(List.of(), m.names("/a/empty"));
      nested = m.stat("/a/sub/3.bin");
      // Loaded once: a file added to the store later is not picked up by a second listing
      // (sync of later changes is separate), and the listing is served from the metastore.
      write(ufs.resolve("a/late.bin"), 1);
      assertEquals(4, m.list("/a").size());
      long inodes = m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance()).getInodeCount();
      assertEquals(7, inodes, "root, a, 1.bin, 2.bin, empty, sub, 3.bin");
    }
    try (TestMaster again = TestMaster.start(home)) {
      assertEquals(before, again.list("/a"));
      assertEquals(nested, again.stat("/a/sub/3.bin"));
    }
  }

  @Test
  void pagedListingOfFiveThousandFilesReturnsEveryNameOnce() throws Exception {
    Path dir = home.resolve("ufs/big");
    Files.createDirectories(dir);
    for (int i = 0; i < 5000; i++) {
      Files.createFile(dir.resolve(String.format("f%05d", i)));
    }
    try (TestMaster m = TestMaster.start(home)) {
      Set<String> seen = new HashSet<>();
      List<String> order = new ArrayList<>();
      int pages = 0;
      Iterator<ListStatusResponse> it =
          m.fs.listStatus(ListStatusRequest.newBuilder().setPath("/big").setPageSize(100).build());
      while (it.hasNext()) {
        ListStatusResponse page = it.next();
        pages++;
        assertTrue(page.getFilesCount() <= 100, "page of " + page.getFilesCount());
        for (FileInfo f : page.getFilesList()) {
          assertTrue(seen.add(f.getName()), "twice: " + f.getName());
          order.add(f.getName());
          assertEquals("/big/" + f.getName(), f.getPath());
        }
      }
      assertEquals(5000, seen.size());
      assertEquals(50, pages);
      List<String> sorted = new ArrayList<>(order);
      sorted.sort(null);
      assertEquals(sorted, order);

      // Resume after a name in the middle of a page.
      List<String> rest = new ArrayList<>();
      m.fs
          .listStatus(
              ListStatusRequest.newBuilder()
                  .setPath("/big")
                  .setPageSize(100)
                  .setStartAfter("f04949")
                  .build())
          .forEachRemaining(r -> r.getFilesList().forEach(f -> rest.add(f.getName())));
      assertEquals(50, rest.size());
      assertEquals("f04950", rest.get(0));
      assertEquals("f04999", rest.get(49));
      assertFalse(rest.contains("f04949"));
    }
  }
}
