package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateDirectoryRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.GetFileBlocksRequest;
import io.strata.proto.GetFileBlocksResponse;
import io.strata.proto.GetMasterInfoRequest;
import io.strata.proto.GetMasterInfoResponse;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.MountRequest;
import io.strata.proto.RenameRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NamespaceOperationsTest {
  @TempDir Path home;
  TestMaster m;

  @BeforeEach
  void start() throws Exception {
    m = TestMaster.start(home);
  }

  @AfterEach
  void stop() throws Exception {
    m.close();
  }

  @Test
  void createdDirectoriesAndFilesRoundTripThroughTheStore() throws Exception {
    FileInfo dir = m.mkdirs("/data/train");
    assertTrue(dir.getDirectory());
    assertEquals("/data/train", dir.getPath());
    assertEquals("train", dir.getName());
    assertEquals(0755, dir.getMode());
    assertEquals(System.getProperty("user.name"), dir.getOwner());
    assertTrue(Files.isDirectory(m.ufs.resolve("data/train")));

    FileInfo created =
        m.fs
            .createFile(
                CreateFileRequest.newBuilder()
                    .setPath("/data/train/part-0")
                    .setBlockSize(1 << 20)
                    .build())
            .getFile();
    assertFalse(created.getComplete());
    assertEquals(0, created.getLength());
    assertEquals(0644, created.getMode());
    assertEquals("file://" + m.ufs.resolve("data/train/part-0"), created.getUfsPath());
    assertEquals(1, created.getMountId());
    // An incomplete file is visible to GetStatus and ListStatus.
    assertFalse(m.stat("/data/train/part-0").getComplete());
    assertEquals(List.of("part-0"), m.names("/data/train"));

    FileInfo done =
        m.fs
            .completeFile(
                CompleteFileRequest.newBuilder()
                    .setPath("/data/train/part-0")
                    .setLength(2_500_000)
                    .setUfsFingerprint("x")
                    .build())
            .getFile();
    assertTrue(done.getComplete());
    assertEquals(created.getFileId(), done.getFileId());
    assertEquals(3, done.getBlockCount());
    assertEquals("x", m.stat("/data/train/part-0").getUfsFingerprint());

    GetFileBlocksResponse blocks =
        m.fs.getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/data/train/part-0").build());
    assertEquals(3, blocks.getBlocksCount());
    assertEquals((created.getFileId() << 20) | 2, blocks.getBlocks(2).getBlockId());
    assertEquals(2L << 20, blocks.getBlocks(2).getOffset());
    assertEquals(2_500_000 - (2L << 20), blocks.getBlocks(2).getLength());

    m.fs.delete(DeleteRequest.newBuilder().setPath("/data").setRecursive(true).build());
    assertFalse(Files.exists(m.ufs.resolve("data")));
    assertFails(
        Status.Code.NOT_FOUND,
        "Path does not exist: /data/train/part-0",
        () -> m.stat("/data/train/part-0"));
    assertEquals(List.of(), m.names("/"));
  }

  @Test
  void errorsNameThePathAndTheRemedy() throws Exception {
    assertFails(Status.Code.NOT_FOUND, "Path does not exist: /nope", () -> m.stat("/nope"));
    assertFails(Status.Code.NOT_FOUND, "Path does not exist: /nope", () -> m.list("/nope"));
    m.file("/d/f", 10);
    assertFails(
        Status.Code.FAILED_PRECONDITION,
        "Directory is not empty: /d (delete it with everything below it: `strata fs rm -R`)",
        () -> m.fs.delete(DeleteRequest.newBuilder().setPath("/d").build()));
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "Path already exists: /d",
        () -> m.fs.createDirectory(CreateDirectoryRequest.newBuilder().setPath("/d").build()));
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "A file already exists at /d/f",
        () ->
            m.fs.createDirectory(
                CreateDirectoryRequest.newBuilder().setPath("/d/f").setAllowExists(true).build()));
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "Path already exists: /d/f",
        () -> m.fs.createFile(CreateFileRequest.newBuilder().setPath("/d/f").build()));
    assertFails(
        Status.Code.NOT_FOUND,
        "Parent directory does not exist: /x/y",
        () -> m.fs.createFile(CreateFileRequest.newBuilder().setPath("/x/y/z").build()));
    assertFails(
        Status.Code.INVALID_ARGUMENT,
        "Cannot delete the root directory /",
        () -> m.fs.delete(DeleteRequest.newBuilder().setPath("/").setRecursive(true).build()));
    assertFails(Status.Code.INVALID_ARGUMENT, "Path is not absolute: rel", () -> m.stat("rel"));
    assertFails(
        Status.Code.INVALID_ARGUMENT,
        "Path is a directory: /d",
        () -> m.fs.getFileBlocks(GetFileBlocksRequest.newBuilder().setPath("/d").build()));
    // The failures changed nothing.
    assertEquals(List.of("f"), m.names("/d"));
    assertTrue(Files.exists(m.ufs.resolve("d")));
  }

  @Test
  void aNameRenamedOntoItselfStaysWhenReplacingAndIsRefusedOtherwise() throws Exception {
    FileInfo f = m.file("/same", 5);
    m.fs.rename(
        RenameRequest.newBuilder()
            .setSrcPath("/same")
            .setDstPath("/same")
            .setReplace(true)
            .build());
    assertEquals(f.getFileId(), m.stat("/same").getFileId(), "rename(2) onto itself does nothing");
    assertFails(
        Status.Code.INVALID_ARGUMENT,
        "Cannot rename /same to itself",
        () ->
            m.fs.rename(
                RenameRequest.newBuilder().setSrcPath("/same").setDstPath("/same").build()));
    assertFails(
        Status.Code.NOT_FOUND,
        "/gone",
        () ->
            m.fs.rename(
                RenameRequest.newBuilder()
                    .setSrcPath("/gone")
                    .setDstPath("/gone")
                    .setReplace(true)
                    .build()));
  }

  @Test
  void deletingAnEmptyDirectoryNeedsNoRecursiveAndListingAFileGivesTheFile() throws Exception {
    m.mkdirs("/empty");
    m.fs.delete(DeleteRequest.newBuilder().setPath("/empty").build());
    assertFalse(Files.exists(m.ufs.resolve("empty")));
    m.file("/one", 5);
    List<FileInfo> listed = m.list("/one");
    assertEquals(1, listed.size());
    assertEquals("/one", listed.get(0).getPath());
  }

  @Test
  void aWriterWhoseFileWasReplacedCanNeitherCompleteNorDeleteTheNewOne() throws Exception {
    FileInfo first =
        m.fs.createFile(CreateFileRequest.newBuilder().setPath("/w").build()).getFile();
    FileInfo second =
        m.fs
            .createFile(CreateFileRequest.newBuilder().setPath("/w").setOverwrite(true).build())
            .getFile();
    assertFails(
        Status.Code.ABORTED,
        "/w is another file now",
        () ->
            m.fs.completeFile(
                CompleteFileRequest.newBuilder()
                    .setPath("/w")
                    .setFileId(first.getFileId())
                    .setLength(10)
                    .build()));
    assertFails(
        Status.Code.ABORTED,
        "nothing was deleted",
        () ->
            m.fs.delete(
                DeleteRequest.newBuilder().setPath("/w").setFileId(first.getFileId()).build()));
    FileInfo still = m.stat("/w");
    assertEquals(second.getFileId(), still.getFileId());
    assertFalse(still.getComplete());
    // The second writer completes its own file; a request without an id (an older client)
    // is taken for whatever file is there, as before.
    assertEquals(
        5,
        m.fs
            .completeFile(
                CompleteFileRequest.newBuilder()
                    .setPath("/w")
                    .setFileId(second.getFileId())
                    .setLength(5)
                    .build())
            .getFile()
            .getLength());
    m.fs.delete(DeleteRequest.newBuilder().setPath("/w").setFileId(second.getFileId()).build());
    FileInfo third =
        m.fs.createFile(CreateFileRequest.newBuilder().setPath("/w").build()).getFile();
    assertEquals(
        7,
        m.fs
            .completeFile(CompleteFileRequest.newBuilder().setPath("/w").setLength(7).build())
            .getFile()
            .getLength());
    assertEquals(third.getFileId(), m.stat("/w").getFileId());
  }

  @Test
  void overwriteReplacesAFileWithANewId() throws Exception {
    FileInfo first = m.file("/f", 100);
    FileInfo second =
        m.fs
            .createFile(CreateFileRequest.newBuilder().setPath("/f").setOverwrite(true).build())
            .getFile();
    assertNotEquals(first.getFileId(), second.getFileId());
    assertFalse(second.getComplete());
    assertEquals(second.getFileId(), m.stat("/f").getFileId());
    m.mkdirs("/d");
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "A directory already exists at /d",
        () ->
            m.fs.createFile(
                CreateFileRequest.newBuilder().setPath("/d").setOverwrite(true).build()));
  }

  @Test
  void renameKeepsIdsAndFollowsTheRules() throws Exception {
    FileInfo dir = m.mkdirs("/a/b");
    FileInfo f = m.file("/a/b/f", 7);
    m.mkdirs("/c");

    m.fs.rename(RenameRequest.newBuilder().setSrcPath("/a/b").setDstPath("/c/b2").build());
    assertEquals(dir.getFileId(), m.stat("/c/b2").getFileId());
    FileInfo moved = m.stat("/c/b2/f");
    assertEquals(f.getFileId(), moved.getFileId());
    assertEquals("/c/b2/f", moved.getPath());
    assertEquals("file://" + m.ufs.resolve("c/b2/f"), moved.getUfsPath());
    assertTrue(Files.isDirectory(m.ufs.resolve("c/b2")));
    assertFalse(Files.exists(m.ufs.resolve("a/b")));
    assertFails(Status.Code.NOT_FOUND, "Path does not exist: /a/b", () -> m.stat("/a/b"));

    m.file("/c/other", 1);
    assertFails(
        Status.Code.ALREADY_EXISTS,
        "Path already exists: /c/other",
        () -> rename("/c/b2/f", "/c/other"));
    assertFails(
        Status.Code.NOT_FOUND,
        "Parent directory does not exist: /nope",
        () -> rename("/c/b2/f", "/nope/f"));
    assertFails(
        Status.Code.INVALID_ARGUMENT,
        "Cannot move /c under itself: /c/b2/x",
        () -> rename("/c", "/c/b2/x"));
    assertFails(
        Status.Code.NOT_FOUND, "Path does not exist: /missing", () -> rename("/missing", "/x"));
    assertFails(
        Status.Code.INVALID_ARGUMENT, "Cannot rename the root directory", () -> rename("/", "/x"));
    m.fs.createFile(CreateFileRequest.newBuilder().setPath("/c/open").build());
    assertFails(
        Status.Code.FAILED_PRECONDITION,
        "File is still being written: /c/open",
        () -> rename("/c/open", "/c/open2"));
  }

  /**
   * An object store's rename is a copy, which can give the same bytes another ETag: the namespace
   * follows the store's new fingerprint, so readers do not take the file for changed; but never
   * when the file had changed in the store before the rename.
   */
  @Test
  void aRenameThatChangesTheStoresFingerprintKeepsTheFileReadable() throws Exception {
    Path folder = Files.createDirectories(home.resolve("objects"));
    Files.write(folder.resolve("a"), new byte[10]);
    Files.write(folder.resolve("b"), new byte[20]);
    CountingUnderFileSystem.reset();
    m.fs.mount(MountRequest.newBuilder().setPath("/obj").setUfsUri("counting://" + folder).build());
    FileInfo a = m.stat("/obj/a");
    FileInfo b = m.stat("/obj/b");
    CountingUnderFileSystem.afterRename =
        p -> {
          try {
            Files.setLastModifiedTime(p, FileTime.fromMillis(1_000_000_000_000L));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        };
    try {
      rename("/obj/a", "/obj/a2");
      FileInfo moved = m.stat("/obj/a2");
      assertEquals(a.getFileId(), moved.getFileId());
      assertEquals("10:1000000000000", moved.getUfsFingerprint());
      assertEquals("/obj/a2", moved.getPath());
      assertEquals(List.of("a2", "b"), m.names("/obj"));

      // Changed behind Strata's back first: the change stays visible to readers and syncs.
      Files.setLastModifiedTime(folder.resolve("b"), FileTime.fromMillis(2_000_000_000_000L));
      rename("/obj/b", "/obj/b2");
      assertEquals(b.getUfsFingerprint(), m.stat("/obj/b2").getUfsFingerprint());
    } finally {
      CountingUnderFileSystem.reset();
    }
  }

  private void rename(String src, String dst) {
    m.fs.rename(RenameRequest.newBuilder().setSrcPath(src).setDstPath(dst).build());
  }

  @Test
  void masterInfoAndMetricsAreServed() throws Exception {
    m.file("/x", 1);
    m.stat("/x");
    GetMasterInfoResponse info = m.fs.getMasterInfo(GetMasterInfoRequest.getDefaultInstance());
    assertEquals(io.strata.common.Version.LAYOUT_VERSION, info.getJournalFormatVersion());
    assertEquals(2, info.getInodeCount());
    assertTrue(info.getJournalSequence() >= 3, "root, create and complete are journaled");
    HttpResponse<String> metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + m.server.webPort() + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, metrics.statusCode());
    for (String name :
        List.of(
            "strata_master_metastore_inodes 2.0",
            "strata_master_journal_entries_total",
            "strata_master_metastore_cache_hits_total",
            "strata_master_metastore_cache_misses_total",
            "strata_master_workers{state=\"live\"}",
            "strata_master_rpc_latency_seconds_count{method=\"GetStatus\"}")) {
      assertTrue(metrics.body().contains(name), name + " missing from\n" + metrics.body());
    }
  }

  @Test
  void listingStartsAfterAName() throws Exception {
    for (String n : List.of("b", "a", "d", "c")) {
      m.file("/dir/" + n, 1);
    }
    assertEquals(List.of("a", "b", "c", "d"), m.names("/dir"));
    List<String> rest = new ArrayList<>();
    m.fs
        .listStatus(ListStatusRequest.newBuilder().setPath("/dir").setStartAfter("b").build())
        .forEachRemaining(r -> r.getFilesList().forEach(f -> rest.add(f.getName())));
    assertEquals(List.of("c", "d"), rest);
  }
}
