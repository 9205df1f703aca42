package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.ListMountsRequest;
import io.strata.proto.MountInfo;
import io.strata.proto.MountRequest;
import io.strata.proto.RenameRequest;
import io.strata.proto.UnmountRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MountTest {
  @TempDir Path home;
  @TempDir Path other;

  private MountInfo mount(TestMaster m, String path, Path dir, boolean readOnly) {
    return m.fs
        .mount(
            MountRequest.newBuilder()
                .setPath(path)
                .setUfsUri("file://" + dir)
                .setReadOnly(readOnly)
                .build())
        .getMount();
  }

  @Test
  void mountedStoreIsServedUnderItsPathAndSurvivesARestart() throws Exception {
    Files.createDirectories(other.resolve("shard"));
    Files.write(other.resolve("shard/0.tar"), new byte[42]);
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/mnt");
      MountInfo info = mount(m, "/mnt/other", other, false);
      assertEquals("/mnt/other", info.getPath());
      FileInfo f = m.stat("/mnt/other/shard/0.tar");
      assertEquals(42, f.getLength());
      assertEquals(info.getMountId(), f.getMountId());
      assertEquals("file://" + other.resolve("shard/0.tar"), f.getUfsPath());
      m.mkdirs("/mnt/other/new");
      assertTrue(Files.isDirectory(other.resolve("new")));
      List<MountInfo> mounts =
          m.fs.listMounts(ListMountsRequest.getDefaultInstance()).getMountsList();
      assertEquals(List.of("/", "/mnt/other"), mounts.stream().map(MountInfo::getPath).toList());
      assertEquals("file://" + other, mounts.get(1).getUfsUri());
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Local under stores take no options",
          () ->
              m.fs.mount(
                  MountRequest.newBuilder()
                      .setPath("/opt")
                      .setUfsUri("file://" + other)
                      .putOptions("region", "x")
                      .build()));

      m.file("/local", 3);
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Cannot rename across mounts",
          () ->
              m.fs.rename(
                  RenameRequest.newBuilder()
                      .setSrcPath("/local")
                      .setDstPath("/mnt/other/local")
                      .build()));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Cannot rename mount point /mnt/other",
          () ->
              m.fs.rename(
                  RenameRequest.newBuilder()
                      .setSrcPath("/mnt/other")
                      .setDstPath("/mnt/x")
                      .build()));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "mount point /mnt/other is below it",
          () ->
              m.fs.rename(
                  RenameRequest.newBuilder().setSrcPath("/mnt").setDstPath("/mnt2").build()));
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "/mnt/other is mounted below it",
          () -> m.fs.delete(DeleteRequest.newBuilder().setPath("/mnt").setRecursive(true).build()));
      assertFails(
          Status.Code.ALREADY_EXISTS,
          "A mount already exists at /mnt/other",
          () -> mount(m, "/mnt/other", other, false));
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "Cannot mount on /local",
          () -> mount(m, "/local", other, false));
      assertFails(
          Status.Code.NOT_FOUND,
          "Under-store directory does not exist",
          () -> mount(m, "/gone", other.resolve("gone"), false));
    }
    try (TestMaster again = TestMaster.start(home)) {
      assertEquals(42, again.stat("/mnt/other/shard/0.tar").getLength());
      assertEquals(2, again.fs.listMounts(ListMountsRequest.getDefaultInstance()).getMountsCount());
    }
  }

  @Test
  void readOnlyMountRefusesChangesAndUnmountDropsItsInodes() throws Exception {
    Files.write(other.resolve("keep.txt"), new byte[5]);
    try (TestMaster m = TestMaster.start(home)) {
      Files.createDirectories(m.ufs.resolve("ro"));
      mount(m, "/ro", other, true);
      assertEquals(List.of("keep.txt"), m.names("/ro"));
      assertFails(
          Status.Code.PERMISSION_DENIED,
          "mount /ro is read-only",
          () -> m.fs.createFile(CreateFileRequest.newBuilder().setPath("/ro/new").build()));
      assertFails(
          Status.Code.PERMISSION_DENIED,
          "mount /ro is read-only",
          () -> m.fs.delete(DeleteRequest.newBuilder().setPath("/ro/keep.txt").build()));

      m.fs.unmount(UnmountRequest.newBuilder().setPath("/ro").build());
      assertTrue(Files.exists(other.resolve("keep.txt")), "the store is untouched");
      assertFails(
          Status.Code.NOT_FOUND, "Path does not exist: /ro/keep.txt", () -> m.stat("/ro/keep.txt"));
      // The root store's own folder of that name is visible again.
      assertTrue(m.stat("/ro").getDirectory());
      assertEquals(1, m.stat("/ro").getMountId());
      assertFails(
          Status.Code.NOT_FOUND,
          "No mount at /ro",
          () -> m.fs.unmount(UnmountRequest.newBuilder().setPath("/ro").build()));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "The root mount cannot be removed",
          () -> m.fs.unmount(UnmountRequest.newBuilder().setPath("/").build()));
      assertFalse(m.names("/").isEmpty());
    }
  }
}
