package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.strata.proto.CommitNewFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.FileInfo;
import io.strata.underfs.local.LocalUnderFileSystem;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A new file made complete in one call, from content already in its store (CommitNewFile). */
class CommitNewFileTest {
  @TempDir Path home;
  TestMaster m;

  @BeforeEach
  void start() throws Exception {
    m = TestMaster.start(home);
    m.mkdirs("/d");
  }

  @AfterEach
  void stop() throws Exception {
    m.close();
  }

  /** Writes a store file as a worker would, and the request that commits it. */
  private CommitNewFileRequest.Builder written(String path, String content) throws Exception {
    Path local = m.ufs.resolve(path.substring(1));
    Files.writeString(local, content);
    String uri = "file://" + local;
    String fingerprint = new LocalUnderFileSystem().fingerprint(uri);
    return CommitNewFileRequest.newBuilder()
        .setPath(path)
        .setUfsPath(uri)
        .setMountId(1)
        .setLength(content.length())
        .setUfsFingerprint(fingerprint);
  }

  @Test
  void oneCallMakesTheFileCompleteWithItsAttributes() throws Exception {
    FileInfo f =
        m.fs
            .commitNewFile(
                written("/d/a", "hello")
                    .setMode(0600)
                    .setOwner("alice")
                    .setGroup("staff")
                    .setModificationTimeNs(1_000_000_123L)
                    .putXattrs("user.k", ByteString.copyFromUtf8("v"))
                    .build())
            .getFile();
    assertTrue(f.getComplete());
    assertEquals(5, f.getLength());
    assertEquals(0600, f.getMode());
    assertEquals("alice", f.getOwner());
    assertEquals("staff", f.getGroup());
    assertEquals(1_000_000_123L, f.getModificationTimeNs());
    assertEquals(1, f.getBlockCount());
    FileInfo stat = m.stat("/d/a");
    assertTrue(stat.getComplete());
    assertEquals(f.getFileId(), stat.getFileId());
    assertEquals("v", stat.getXattrsOrThrow("user.k").toStringUtf8());
    assertEquals(List.of("a"), m.names("/d"));
  }

  @Test
  void aTakenNameIsRefusedAndTheContentWrittenForItRemovedUnlessTheNameOwnsIt() throws Exception {
    m.file("/d/taken", 3);
    Path takenFile = m.ufs.resolve("d/taken");
    byte[] before = Files.readAllBytes(takenFile);
    // A complete file at the name: its store file is its own and stays.
    CommitNewFileRequest overTaken =
        CommitNewFileRequest.newBuilder()
            .setPath("/d/taken")
            .setUfsPath("file://" + takenFile)
            .setMountId(1)
            .setLength(before.length)
            .setUfsFingerprint(new LocalUnderFileSystem().fingerprint("file://" + takenFile))
            .build();
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "Path already exists: /d/taken",
        () -> m.fs.commitNewFile(overTaken));
    assertTrue(Files.exists(takenFile));

    // A file another writer is still writing has no store file yet: the one written at its
    // name goes, so that the other writer can publish its own.
    m.fs.createFile(CreateFileRequest.newBuilder().setPath("/d/writing").build());
    CommitNewFileRequest overWriting = written("/d/writing", "orphan").build();
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "Path already exists: /d/writing",
        () -> m.fs.commitNewFile(overWriting));
    assertFalse(Files.exists(m.ufs.resolve("d/writing")));
    assertFalse(m.stat("/d/writing").getComplete());
  }

  @Test
  void aPlacementTheMountsNoLongerGiveIsRefused() throws Exception {
    CommitNewFileRequest elsewhere = written("/d/b", "x").setMountId(7).build();
    assertFails(
        Status.Code.FAILED_PRECONDITION,
        "The mounts changed while /d/b was written",
        () -> m.fs.commitNewFile(elsewhere));
    assertFails(
        Status.Code.NOT_FOUND,
        "Parent directory does not exist: /none",
        () -> m.fs.commitNewFile(written("/d/c", "x").setPath("/none/c").build()));
    assertFails(Status.Code.NOT_FOUND, "Path does not exist: /d/b", () -> m.stat("/d/b"));
  }
}
