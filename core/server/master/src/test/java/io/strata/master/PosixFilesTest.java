package io.strata.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.strata.proto.CheckpointRequest;
import io.strata.proto.CompleteFileRequest;
import io.strata.proto.CreateFileRequest;
import io.strata.proto.CreateHardLinkRequest;
import io.strata.proto.CreateSpecialFileRequest;
import io.strata.proto.DeleteRequest;
import io.strata.proto.FileInfo;
import io.strata.proto.FileType;
import io.strata.proto.RenameRequest;
import io.strata.proto.SetAttributeRequest;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a POSIX file system holds beyond files and folders, on a real master over a local folder:
 * symbolic links and special files made in the namespace and the store, hard links sharing one
 * inode in both, new versions of a file's content that keep its inode and names, rename over
 * existing entries with rename(2)'s errors, folders' link counts and the times POSIX moves. Each
 * survives a restart (journal replay) and a checkpoint.
 */
class PosixFilesTest {
  private static final Metadata.Key<String> POSIX_ERROR =
      Metadata.Key.of("strata-posix-error", Metadata.ASCII_STRING_MARSHALLER);

  @TempDir Path home;

  private static FileInfo special(
      TestMaster m, String path, FileType type, int mode, String target, long rdev) {
    return m.fs
        .createSpecialFile(
            CreateSpecialFileRequest.newBuilder()
                .setPath(path)
                .setFileType(type)
                .setMode(mode)
                .setSymlinkTarget(target)
                .setRdev(rdev)
                .build())
        .getFile();
  }

  private static FileInfo link(TestMaster m, String existing, String path) {
    return m.fs
        .createHardLink(
            CreateHardLinkRequest.newBuilder().setExistingPath(existing).setPath(path).build())
        .getFile();
  }

  private static void rename(TestMaster m, String from, String to) {
    m.fs.rename(
        RenameRequest.newBuilder().setSrcPath(from).setDstPath(to).setReplace(true).build());
  }

  /** The POSIX error a failed call carries, or null. */
  private static String posixError(Executable call) {
    StatusRuntimeException e = assertThrows(StatusRuntimeException.class, call);
    Metadata trailers = Status.trailersFromThrowable(e);
    return trailers == null ? null : trailers.get(POSIX_ERROR);
  }

  private static Object inode(Path p) throws Exception {
    return Files.getAttribute(p, "unix:ino", LinkOption.NOFOLLOW_LINKS);
  }

  @Test
  void symbolicLinksAndSpecialFilesLiveInTheNamespaceAndTheStore() throws Exception {
    boolean root = "root".equals(System.getProperty("user.name"));
    try (TestMaster m = TestMaster.start(home)) {
      m.mkdirs("/d");
      FileInfo link = special(m, "/d/l", FileType.FILE_TYPE_SYMLINK, 0, "../target/x", 0);
      assertEquals(FileType.FILE_TYPE_SYMLINK, link.getFileType());
      assertEquals("../target/x", link.getSymlinkTarget());
      assertEquals(11, link.getLength());
      assertEquals(0777, link.getMode());
      assertFalse(link.getNamespaceOnly());
      assertTrue(Files.isSymbolicLink(m.ufs.resolve("d/l")));
      assertEquals("../target/x", Files.readSymbolicLink(m.ufs.resolve("d/l")).toString());

      special(m, "/d/p", FileType.FILE_TYPE_FIFO, 0640, "", 0);
      special(m, "/d/s", FileType.FILE_TYPE_SOCKET, 0600, "", 0);
      assertEquals(
          0010000,
          (int) Files.getAttribute(m.ufs.resolve("d/p"), "unix:mode") & 0170000,
          "a FIFO in the store");
      long devNull = 0x103;
      FileInfo dev = special(m, "/d/null", FileType.FILE_TYPE_CHAR_DEVICE, 0666, "", devNull);
      assertEquals(devNull, dev.getRdev());
      assertEquals(!root, dev.getNamespaceOnly(), "a device node needs the master to be root");
      if (root) {
        assertEquals(
            devNull,
            ((Number) Files.getAttribute(m.ufs.resolve("d/null"), "unix:rdev")).longValue());
      }
      assertEquals(
          Status.Code.ALREADY_EXISTS,
          assertThrows(
                  StatusRuntimeException.class,
                  () -> special(m, "/d/l", FileType.FILE_TYPE_FIFO, 0, "", 0))
              .getStatus()
              .getCode());
      assertEquals(
          Status.Code.INVALID_ARGUMENT,
          assertThrows(
                  StatusRuntimeException.class,
                  () -> special(m, "/d/x", FileType.FILE_TYPE_PLAIN, 0, "", 0))
              .getStatus()
              .getCode());

      m.fs.checkpoint(CheckpointRequest.getDefaultInstance());
      try (TestMaster again = m.restartAfterClose()) {
        assertEquals(link, again.stat("/d/l"));
        assertEquals(FileType.FILE_TYPE_FIFO, again.stat("/d/p").getFileType());
        assertEquals(FileType.FILE_TYPE_SOCKET, again.stat("/d/s").getFileType());
        assertEquals(java.util.List.of("l", "null", "p", "s"), again.names("/d"));
        again.fs.delete(DeleteRequest.newBuilder().setPath("/d/l").build());
        assertFalse(Files.exists(again.ufs.resolve("d/l"), LinkOption.NOFOLLOW_LINKS));
      }
    }
  }

  @Test
  void aSymbolicLinkFoundInTheStoreLoadsAsOne() throws Exception {
    Files.createDirectories(home.resolve("ufs/data"));
    Files.createSymbolicLink(home.resolve("ufs/data/latest"), Path.of("v2"));
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo l = m.stat("/data/latest");
      assertEquals(FileType.FILE_TYPE_SYMLINK, l.getFileType());
      assertEquals("v2", l.getSymlinkTarget());
      assertEquals(0, l.getBlockCount(), "a link has no blocks to cache");
    }
  }

  @Test
  void hardLinksShareOneInodeInTheNamespaceAndTheStore() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo a = m.file("/a", 5);
      m.mkdirs("/d");
      FileInfo b = link(m, "/a", "/d/b");
      assertEquals(a.getInodeNumber(), b.getInodeNumber());
      assertEquals(a.getFileId(), b.getFileId(), "one content, so one set of blocks");
      assertEquals(2, b.getLinkCount());
      assertEquals("/d/b", b.getPath());
      assertEquals("b", b.getName());
      assertEquals(inode(m.ufs.resolve("a")), inode(m.ufs.resolve("d/b")));
      assertTrue(b.getChangeTimeNs() >= a.getChangeTimeNs(), "a link moves the change time");

      m.fs.setAttribute(SetAttributeRequest.newBuilder().setPath("/d/b").setMode(0600).build());
      assertEquals(0600, m.stat("/a").getMode(), "attributes are the inode's");

      assertEquals("EPERM", posixError(() -> link(m, "/d", "/dlink")));
      assertEquals(
          Status.Code.ALREADY_EXISTS,
          assertThrows(StatusRuntimeException.class, () -> link(m, "/a", "/d/b"))
              .getStatus()
              .getCode());

      link(m, "/a", "/c");
      // Removing the first name moves the file to another; the rest stay.
      m.fs.delete(DeleteRequest.newBuilder().setPath("/a").build());
      assertEquals(2, m.stat("/c").getLinkCount());
      assertEquals(2, m.stat("/d/b").getLinkCount());
      assertFalse(Files.exists(m.ufs.resolve("a")));
      assertEquals(inode(m.ufs.resolve("c")), inode(m.ufs.resolve("d/b")));

      // A folder holding one name goes; the file lives on by its other name, with its blocks.
      m.fs.delete(DeleteRequest.newBuilder().setPath("/d").setRecursive(true).build());
      FileInfo c = m.stat("/c");
      assertEquals(1, c.getLinkCount());
      assertEquals(a.getInodeNumber(), c.getInodeNumber());
      assertEquals(5, c.getLength());

      link(m, "/c", "/e");
      m.fs.checkpoint(CheckpointRequest.getDefaultInstance());
      try (TestMaster again = m.restartAfterClose()) {
        assertEquals(2, again.stat("/e").getLinkCount());
        assertEquals(again.stat("/c").getInodeNumber(), again.stat("/e").getInodeNumber());
        // Renaming one name of the file moves that name only.
        rename(again, "/e", "/f");
        assertEquals(java.util.List.of("c", "f"), again.names("/"));
        assertEquals(2, again.stat("/f").getLinkCount());
        // Two names of one file: rename(2) leaves both.
        rename(again, "/c", "/f");
        assertEquals(java.util.List.of("c", "f"), again.names("/"));
      }
    }
  }

  @Test
  void aNewVersionKeepsTheInodeItsNamesAndAttributes() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo a = m.file("/a", 5);
      link(m, "/a", "/b");
      m.fs.setAttribute(
          SetAttributeRequest.newBuilder()
              .setPath("/a")
              .setMode(0640)
              .putSetXattrs("user.k", com.google.protobuf.ByteString.copyFromUtf8("v"))
              .build());
      FileInfo version =
          m.fs
              .createFile(CreateFileRequest.newBuilder().setPath("/b").setNewVersion(true).build())
              .getFile();
      assertNotEquals(a.getFileId(), version.getFileId());
      assertFalse(version.getComplete());
      assertEquals(5, m.stat("/a").getLength(), "readers see the old content meanwhile");
      assertEquals(a.getFileId(), m.stat("/a").getFileId());

      // The writer replaces the name it wrote through; the master brings the other along.
      Path b = Path.of(URI.create(version.getUfsPath()));
      Path temp = b.resolveSibling(".b.new");
      Files.write(temp, new byte[9]);
      Files.move(
          temp,
          b,
          java.nio.file.StandardCopyOption.REPLACE_EXISTING,
          java.nio.file.StandardCopyOption.ATOMIC_MOVE);
      FileInfo done =
          m.fs
              .completeFile(
                  CompleteFileRequest.newBuilder()
                      .setPath("/b")
                      .setFileId(version.getFileId())
                      .setLength(9)
                      .setUfsFingerprint("fp-9")
                      .setModificationTimeNs(1_700_000_000_123_456_789L)
                      .build())
              .getFile();
      assertEquals(version.getFileId(), done.getFileId());
      assertEquals(a.getInodeNumber(), done.getInodeNumber());
      assertEquals(1_700_000_000_123_456_789L, done.getModificationTimeNs());
      FileInfo viaA = m.stat("/a");
      assertEquals(9, viaA.getLength());
      assertEquals(0640, viaA.getMode());
      assertEquals("v", viaA.getXattrsMap().get("user.k").toStringUtf8());
      assertEquals(2, viaA.getLinkCount());
      assertEquals(9, Files.size(m.ufs.resolve("a")), "the other name has the new content");
      assertEquals(inode(m.ufs.resolve("a")), inode(m.ufs.resolve("b")));

      // A newer begin wins: the older version's completion is refused and changes nothing.
      FileInfo first =
          m.fs
              .createFile(CreateFileRequest.newBuilder().setPath("/a").setNewVersion(true).build())
              .getFile();
      FileInfo second =
          m.fs
              .createFile(CreateFileRequest.newBuilder().setPath("/a").setNewVersion(true).build())
              .getFile();
      assertNotEquals(first.getFileId(), second.getFileId());
      assertEquals(
          Status.Code.ABORTED,
          assertThrows(
                  StatusRuntimeException.class,
                  () ->
                      m.fs.completeFile(
                          CompleteFileRequest.newBuilder()
                              .setPath("/a")
                              .setFileId(first.getFileId())
                              .setLength(1)
                              .build()))
              .getStatus()
              .getCode());
      assertEquals(9, m.stat("/a").getLength());

      try (TestMaster again = m.restartAfterClose()) {
        assertEquals(viaA.getFileId(), again.stat("/b").getFileId());
        assertEquals(9, again.stat("/b").getLength());
      }
    }
  }

  @Test
  void renameReplacesAsRename2DoesAndSaysWhyItCannot() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      m.file("/f", 1);
      FileInfo g = m.file("/g", 2);
      rename(m, "/f", "/g");
      assertEquals(1, m.stat("/g").getLength());
      assertEquals(java.util.List.of("g"), m.names("/"));
      assertNotEquals(g.getFileId(), m.stat("/g").getFileId());

      m.mkdirs("/empty");
      m.mkdirs("/full/x");
      m.mkdirs("/dir");
      assertEquals("ENOTEMPTY", posixError(() -> rename(m, "/dir", "/full")));
      assertEquals("EISDIR", posixError(() -> rename(m, "/g", "/empty")));
      assertEquals("ENOTDIR", posixError(() -> rename(m, "/dir", "/g")));
      assertEquals("EINVAL", posixError(() -> rename(m, "/full", "/full/x/y")));
      rename(m, "/dir", "/empty");
      assertEquals(java.util.List.of("empty", "full", "g"), m.names("/"));
      assertTrue(Files.isDirectory(m.ufs.resolve("empty")));
      assertFalse(Files.exists(m.ufs.resolve("dir")));
    }
  }

  @Test
  void foldersCountTheirSubfoldersAndTimesMoveAsPosixSays() throws Exception {
    try (TestMaster m = TestMaster.start(home)) {
      FileInfo d = m.mkdirs("/d");
      assertEquals(2, d.getLinkCount());
      m.mkdirs("/d/a");
      m.mkdirs("/d/b");
      m.file("/d/file", 1);
      assertEquals(4, m.stat("/d").getLinkCount());
      m.mkdirs("/e");
      m.fs.rename(RenameRequest.newBuilder().setSrcPath("/d/a").setDstPath("/e/a").build());
      assertEquals(3, m.stat("/d").getLinkCount());
      assertEquals(3, m.stat("/e").getLinkCount());
      m.fs.delete(DeleteRequest.newBuilder().setPath("/d/b").build());
      assertEquals(2, m.stat("/d").getLinkCount());

      FileInfo before = m.stat("/d");
      FileInfo file = m.stat("/d/file");
      // Pacing, not a wait: spaces the rename from the times read above so the moved ones differ.
      Thread.sleep(5);
      m.fs.rename(RenameRequest.newBuilder().setSrcPath("/d/file").setDstPath("/d/moved").build());
      FileInfo after = m.stat("/d");
      FileInfo moved = m.stat("/d/moved");
      assertTrue(
          after.getModificationTimeNs() > before.getModificationTimeNs(),
          "a rename in a folder moves its modification time");
      assertTrue(after.getChangeTimeNs() > before.getChangeTimeNs());
      assertEquals(
          file.getModificationTimeNs(),
          moved.getModificationTimeNs(),
          "the file renamed keeps its modification time");
      assertTrue(moved.getChangeTimeNs() > file.getChangeTimeNs(), "and its change time moves");

      try (TestMaster again = m.restartAfterClose()) {
        assertEquals(2, again.stat("/d").getLinkCount());
        assertEquals(3, again.stat("/e").getLinkCount());
        assertEquals(4, again.stat("/").getLinkCount(), "2 + the root's /d and /e");
      }
    }
  }
}
