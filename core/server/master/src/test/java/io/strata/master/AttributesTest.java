package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.GetStatusRequest;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.SetAttributeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Owner and group on create, and SetAttribute: namespace-only, journaled, never synced away. */
class AttributesTest {
  private static final long MTIME = 1_600_000_000_123L;
  private static final String ME = System.getProperty("user.name");

  @TempDir Path home;

  private static FileInfo set(TestMaster m, SetAttributeRequest.Builder request) {
    return m.fs.setAttribute(request.build()).getFile();
  }

  /** The given FileInfo with the attributes SetAttribute may change taken from another. */
  private static FileInfo withAttributes(FileInfo f, FileInfo from) {
    return f.toBuilder()
        .setMode(from.getMode())
        .setOwner(from.getOwner())
        .setGroup(from.getGroup())
        .setModificationTimeMs(from.getModificationTimeMs())
        .setModificationTimeNs(from.getModificationTimeNs())
        .setChangeTimeNs(from.getChangeTimeNs())
        .build();
  }

  @Test
  void setAttributeChangesOnlyWhatIsGiven() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo before = m.file("/d/f", 3 << 20);
      GetFileBlocksResponse blocks =
          m.fs.getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/d/f").build());

      FileInfo chmod = set(m, SetAttributeRequest.newBuilder().setPath("/d//f").setMode(0600));
      assertEquals(0600, chmod.getMode());
      assertEquals(before.getOwner(), chmod.getOwner());
      assertEquals(
          before.toBuilder().setMode(0600).setChangeTimeNs(chmod.getChangeTimeNs()).build(), chmod);
      assertTrue(
          chmod.getChangeTimeNs() >= before.getChangeTimeNs(),
          "a change of attributes moves the change time, as POSIX says");

      FileInfo chown = set(m, SetAttributeRequest.newBuilder().setPath("/d/f").setOwner("bob"));
      assertEquals("bob", chown.getOwner());
      assertEquals(before.getGroup(), chown.getGroup());
      FileInfo chgrp = set(m, SetAttributeRequest.newBuilder().setPath("/d/f").setGroup("ml"));
      FileInfo touched =
          set(m, SetAttributeRequest.newBuilder().setPath("/d/f").setModificationTimeMs(MTIME));
      assertEquals("ml", chgrp.getGroup());
      assertEquals(MTIME, touched.getModificationTimeMs());
      // chmod 000 is a mode like any other.
      FileInfo none = set(m, SetAttributeRequest.newBuilder().setPath("/d/f").setMode(0));
      assertEquals(0, none.getMode());

      FileInfo expected = withAttributes(before, none);
      assertEquals(MTIME, expected.getModificationTimeMs());
      assertEquals(
          MTIME * 1_000_000L,
          expected.getModificationTimeNs(),
          "a time set in milliseconds reads the same in nanoseconds");
      assertEquals(expected, none);
      assertEquals(expected, m.stat("/d/f"));
      // Same id, so same block ids; same length and fingerprint.
      assertEquals(
          blocks.getBlocksList(),
          m.fs
              .getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/d/f").build())
              .getBlocksList());

      FileInfo dir =
          set(
              m,
              SetAttributeRequest.newBuilder()
                  .setPath("/d")
                  .setMode(01777)
                  .setOwner("root")
                  .setGroup("wheel")
                  .setModificationTimeMs(MTIME));
      assertEquals(01777, dir.getMode());
      assertEquals(List.of("f"), m.names("/d"));
      // Setting what is already there moves only the change time, as chmod(2) and chown(2) do.
      FileInfo again =
          set(m, SetAttributeRequest.newBuilder().setPath("/d").setMode(01777).setOwner("root"));
      assertEquals(dir.toBuilder().setChangeTimeNs(again.getChangeTimeNs()).build(), again);
      assertTrue(again.getChangeTimeNs() >= dir.getChangeTimeNs());
      // Nothing is pushed to the under store.
      assertEquals(
          "rw-r--r--",
          PosixFilePermissions.toString(Files.getPosixFilePermissions(m.ufs.resolve("d/f"))));
      assertEquals(ME, Files.getOwner(m.ufs.resolve("d")).getName());
    }
  }

  @Test
  void attributesSurviveJournalReplayAndCheckpoint() throws Exception {
    TestMaster m = TestMaster.start(home);
    m.file("/a/f", 10);
    m.mkdirs("/a/sub");
    set(
        m,
        SetAttributeRequest.newBuilder()
            .setPath("/a/f")
            .setMode(0640)
            .setOwner("bob")
            .setGroup("ml")
            .setModificationTimeMs(MTIME));
    set(m, SetAttributeRequest.newBuilder().setPath("/a").setMode(0700).setOwner("carol"));
    set(m, SetAttributeRequest.newBuilder().setPath("/").setMode(0711));
    Map<String, FileInfo> before = JournalRecoveryTest.snapshot(m.fs);
    m.crash();
    TestMaster replayed = m.restart();
    assertEquals(before, JournalRecoveryTest.snapshot(replayed.fs), "replayed from the journal");
    assertEquals(0640, replayed.stat("/a/f").getMode());

    replayed.fs.checkpoint(CheckpointRequest.getDefaultInstance());
    set(replayed, SetAttributeRequest.newBuilder().setPath("/a/sub").setGroup("ops"));
    Map<String, FileInfo> after = JournalRecoveryTest.snapshot(replayed.fs);
    replayed.crash();
    try (TestMaster restored = replayed.restart()) {
      assertEquals(
          after,
          JournalRecoveryTest.snapshot(restored.fs),
          "a checkpoint and the entries after it");
      assertEquals("ops", restored.stat("/a/sub").getGroup());
      assertEquals("carol", restored.stat("/a").getOwner());
      assertEquals(0711, restored.stat("/").getMode());
    }
  }

  @Test
  void syncsKeepTheAttributesSet() throws Exception {
    Files.createDirectories(home.resolve("ufs/data"));
    Files.write(home.resolve("ufs/data/loaded.bin"), new byte[77]);
    try (TestMaster m =
        TestMaster.start(home, Map.of("strata.master.ufs.sync.interval", "always"))) {
      FileInfo loaded = m.stat("/data/loaded.bin");
      FileInfo changed =
          set(
              m,
              SetAttributeRequest.newBuilder()
                  .setPath("/data/loaded.bin")
                  .setMode(0400)
                  .setOwner("bob")
                  .setModificationTimeMs(MTIME));
      FileInfo dir =
          set(
              m,
              SetAttributeRequest.newBuilder()
                  .setPath("/data")
                  .setMode(0711)
                  .setModificationTimeMs(MTIME));
      assertEquals(withAttributes(loaded, changed), changed);

      // Every access checks the store ("always"): the check must not undo the change.
      assertEquals(
          changed,
          m.fs
              .getStatus(
                  GetStatusRequest.newBuilder()
                      .setPath("/data/loaded.bin")
                      .setSyncIntervalMs(0)
                      .build())
              .getFile());
      List<FileInfo> listed = new ArrayList<>();
      m.fs
          .listStatus(ListStatusRequest.newBuilder().setPath("/data").setSyncIntervalMs(0).build())
          .forEachRemaining(p -> listed.addAll(p.getFilesList()));
      assertEquals(List.of(changed), listed);
      assertEquals(
          dir,
          m.fs
              .getStatus(
                  GetStatusRequest.newBuilder().setPath("/data").setSyncIntervalMs(0).build())
              .getFile());

      // New content in the store is a new file: the store's attributes come back with it.
      Files.write(home.resolve("ufs/data/loaded.bin"), new byte[78]);
      FileInfo replaced =
          m.fs
              .getStatus(
                  GetStatusRequest.newBuilder()
                      .setPath("/data/loaded.bin")
                      .setSyncIntervalMs(0)
                      .build())
              .getFile();
      assertEquals(78, replaced.getLength());
      assertNotEquals(loaded.getFileId(), replaced.getFileId());
      assertNotEquals(0400, replaced.getMode());
      assertEquals(ME, replaced.getOwner());
    }
  }

  @Test
  void setAttributeRejectsWhatItCannotDo() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/f", 1);
      assertFails(
          Status.Code.NOT_FOUND,
          "/missing/x",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/missing/x").setMode(0644)));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "give at least one of mode, owner, group, access or modification time",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/f")));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "010000",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/f").setMode(010000)));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "/f",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/f").setMode(-1)));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Empty owner for /f",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/f").setOwner("")));
      assertEquals(0644, m.stat("/f").getMode(), "a refused change changes nothing");
    }
  }

  @Test
  void setAttributeOnAReadOnlyMountIsDenied() throws Exception {
    Path ro = home.resolve("ro-store");
    Files.createDirectories(ro);
    Files.write(ro.resolve("f"), new byte[3]);
    try (TestMaster m = TestMaster.start(home)) {
      m.fs.mount(
          MountRequest.newBuilder()
              .setPath("/ro")
              .setUfsUri("file://" + ro)
              .setReadOnly(true)
              .build());
      assertFails(
          Status.Code.PERMISSION_DENIED,
          "read-only",
          () -> set(m, SetAttributeRequest.newBuilder().setPath("/ro/f").setMode(0600)));
    }
  }

  @Test
  void createdInodesAndTheirNewParentsGetTheCallersOwnerAndGroup() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/existing");
      FileInfo dir =
          m.fs
              .createDirectory(
                  CreateDirectoryRequest.newBuilder()
                      .setPath("/existing/a/b")
                      .setRecursive(true)
                      .setOwner("bob")
                      .setGroup("ml")
                      .build())
              .getDirectory();
      assertEquals("bob", dir.getOwner());
      assertEquals("ml", dir.getGroup());
      assertEquals("bob", m.stat("/existing/a").getOwner());
      assertEquals("ml", m.stat("/existing/a").getGroup());
      assertEquals(ME, m.stat("/existing").getOwner(), "an existing parent is left as it is");

      FileInfo file =
          m.fs
              .createFile(
                  CreateFileRequest.newBuilder()
                      .setPath("/x/y/f")
                      .setRecursive(true)
                      .setOwner("carol")
                      .build())
              .getFile();
      assertEquals("carol", file.getOwner());
      assertEquals("carol", m.stat("/x").getOwner());
      assertEquals("carol", m.stat("/x/y").getOwner());
      // An empty group is the master's default, as before.
      String defaultGroup = m.mkdirs("/plain").getGroup();
      assertEquals(defaultGroup, file.getGroup());
      assertEquals(defaultGroup, m.stat("/x/y").getGroup());
      assertEquals(ME, m.mkdirs("/plain").getOwner());

      // Owners are journaled with the inodes.
      m.crash();
      try (TestMaster again = m.restart()) {
        assertEquals("bob", again.stat("/existing/a/b").getOwner());
        assertEquals("carol", again.stat("/x/y/f").getOwner());
      }
    }
  }
}
