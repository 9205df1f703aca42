package io.strata.master;

import static io.strata.master.TestMaster.assertFails;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.strata.common.PathNames;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.ListStatusRequest;
import io.strata.proto.ListStatusResponse;
import io.strata.proto.LoadJobStatus;
import io.strata.proto.RenameRequest;
import io.strata.proto.SetAttributeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Extended attributes kept with inodes (the S3 proxy's object metadata), the hidden uploads folder
 * that listings leave out, and the delete that refuses a directory with visible children.
 */
class ExtendedAttributesTest {
  private static final ByteString ETAG = ByteString.copyFromUtf8("0123456789abcdef");

  @TempDir Path home;

  @Test
  void attributesGivenAtCompletionAreJournaledAndSurviveRestartAndRename() throws Exception {
    TestMaster m = TestMaster.start(home);
    try {
      FileInfo created =
          m.fs
              .createFile(CreateFileRequest.newBuilder().setPath("/b/k").setRecursive(true).build())
              .getFile();
      Files.write(Path.of(java.net.URI.create(created.getUfsPath())), new byte[3]);
      FileInfo done =
          m.fs
              .completeFile(
                  CompleteFileRequest.newBuilder()
                      .setPath("/b/k")
                      .setFileId(created.getFileId())
                      .setLength(3)
                      .setUfsFingerprint("fp")
                      .putXattrs("strata.s3.etag", ETAG)
                      .putXattrs("user.colour", ByteString.copyFromUtf8("blue"))
                      .build())
              .getFile();
      assertEquals(ETAG, done.getXattrsMap().get("strata.s3.etag"));
      assertEquals(2, m.stat("/b/k").getXattrsCount());
      // Listings carry them too, as S3 listings need each key's ETag.
      assertEquals(ETAG, m.list("/b").get(0).getXattrsMap().get("strata.s3.etag"));

      m.fs.rename(RenameRequest.newBuilder().setSrcPath("/b/k").setDstPath("/b/k2").build());
      m.crash();
      m = m.restart();
      FileInfo after = m.stat("/b/k2");
      assertEquals(
          Map.of("strata.s3.etag", ETAG, "user.colour", ByteString.copyFromUtf8("blue")),
          after.getXattrsMap());
    } finally {
      m.close();
    }
  }

  @Test
  void setAttributeAddsReplacesAndRemovesAttributesOnly() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo before = m.file("/d/f", 10);
      FileInfo set =
          m.fs
              .setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/d/f")
                      .putSetXattrs("user.a", ByteString.copyFromUtf8("1"))
                      .putSetXattrs("user.b", ByteString.copyFromUtf8("2"))
                      .build())
              .getFile();
      assertEquals(2, set.getXattrsCount());
      assertEquals(before.getFileId(), set.getFileId());
      assertEquals(before.getModificationTimeMs(), set.getModificationTimeMs());

      FileInfo changed =
          m.fs
              .setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/d/f")
                      .putSetXattrs("user.a", ByteString.copyFromUtf8("one"))
                      .addRemoveXattrs("user.b")
                      .addRemoveXattrs("user.absent")
                      .build())
              .getFile();
      assertEquals(Map.of("user.a", ByteString.copyFromUtf8("one")), changed.getXattrsMap());
      // Directories hold them too (S3 folder markers).
      FileInfo dir =
          m.fs
              .setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/d")
                      .putSetXattrs("strata.s3.marker", ByteString.EMPTY)
                      .build())
              .getFile();
      assertTrue(dir.getXattrsMap().containsKey("strata.s3.marker"));
    }
  }

  @Test
  void badNamesAndOversizedAttributesAreRefusedWithTheirLimit() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/f", 1);
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "Bad extended attribute name",
          () ->
              m.fs.setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/f")
                      .putSetXattrs("", ByteString.EMPTY)
                      .build()));
      assertFails(
          Status.Code.INVALID_ARGUMENT,
          "over the 65536",
          () ->
              m.fs.setAttribute(
                  SetAttributeRequest.newBuilder()
                      .setPath("/f")
                      .putSetXattrs("user.big", ByteString.copyFrom(new byte[70_000]))
                      .build()));
      assertEquals(0, m.stat("/f").getXattrsCount());
    }
  }

  @Test
  void listingsAndLoadJobsLeaveOutTheHiddenUploadsFolderUnlessAsked() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/b/" + PathNames.UPLOADS_FOLDER + "/u1/1", 5);
      // Enough visible names around it that the hidden one falls inside and at the end of pages.
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 7; i++) {
        String name = (i < 3 ? "." : "z") + i;
        m.file("/b/" + name, 1);
        expected.add(name);
      }
      expected.sort(null);
      for (int pageSize : new int[] {1, 2, 3, 100}) {
        assertEquals(expected, names(m, "/b", pageSize, false), "page size " + pageSize);
      }
      List<String> all = names(m, "/b", 2, true);
      assertTrue(all.contains(PathNames.UPLOADS_FOLDER));
      assertEquals(expected.size() + 1, all.size());
      m.fs.delete(DeleteRequest.newBuilder().setPath("/b/.0").build());

      // A load job counts the visible files only: a staged part is not a file to load yet.
      LoadMasterCalls.submit(m, "/b");
      LoadJobStatus job =
          await("the load job to list /b")
              .atMost(Duration.ofSeconds(30))
              .pollInterval(Duration.ofMillis(20))
              .until(() -> LoadMasterCalls.status(m, "/b", 0), LoadJobStatus::getListingDone);
      assertTrue(job.getListingDone(), job.toString());
      assertEquals(expected.size() - 1, job.getFilesTotal());
    }
  }

  @Test
  void deleteUnlessVisibleChildrenRemovesAFolderWithOnlyHiddenEntries() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/b/" + PathNames.UPLOADS_FOLDER + "/u1/1", 5);
      m.file("/b/key", 1);
      assertFails(
          Status.Code.FAILED_PRECONDITION,
          "not empty",
          () ->
              m.fs.delete(
                  DeleteRequest.newBuilder()
                      .setPath("/b")
                      .setRecursive(true)
                      .setUnlessVisibleChildren(true)
                      .build()));
      assertTrue(m.stat("/b/key").getComplete());

      m.fs.delete(DeleteRequest.newBuilder().setPath("/b/key").build());
      m.fs.delete(
          DeleteRequest.newBuilder()
              .setPath("/b")
              .setRecursive(true)
              .setUnlessVisibleChildren(true)
              .build());
      assertFalse(Files.exists(m.ufs.resolve("b")));
      assertEquals(List.of(), m.names("/"));
    }
  }

  private static List<String> names(
      TestMaster m, String path, int pageSize, boolean includeHidden) {
    List<String> names = new ArrayList<>();
    Iterator<ListStatusResponse> it =
        m.fs.listStatus(
            ListStatusRequest.newBuilder()
                .setPath(path)
                .setPageSize(pageSize)
                .setIncludeHidden(includeHidden)
                .build());
    while (it.hasNext()) {
      for (FileInfo f : it.next().getFilesList()) {
        names.add(f.getName());
      }
    }
    return names;
  }
}
