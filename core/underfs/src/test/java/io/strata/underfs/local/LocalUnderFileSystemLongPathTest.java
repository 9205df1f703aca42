package io.strata.underfs.local;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local store holds entries whose absolute paths are past Linux's PATH_MAX (4096 bytes), as a
 * FUSE mount may (a process working deep in the mount makes a path of up to 4095 bytes relative to
 * its folder). On real files: the deep tree is made through the store, and checked apart from it
 * with the JDK's secure directory streams, which go down one folder at a time.
 */
class LocalUnderFileSystemLongPathTest {
  @TempDir Path dir;
  final LocalUnderFileSystem ufs = new LocalUnderFileSystem();

  /** The folders from {@link #dir} down to {@link #deep}, 200 bytes a name. */
  final List<String> chain = new ArrayList<>();

  /** A folder whose absolute path is about 5,800 bytes long. */
  Path deep;

  @BeforeEach
  void makeTheChain() throws IOException {
    Path p = dir;
    for (int i = 0; bytes(p) < 5_800; i++) {
      String name = String.format("level-%02d-", i) + "x".repeat(191);
      assertEquals(200, name.length());
      chain.add(name);
      p = p.resolve(name);
    }
    deep = p;
    ufs.mkdirs(uri(deep), true);
  }

  /** JUnit cannot delete a tree past PATH_MAX from a temporary folder; the store can. */
  @AfterEach
  void deleteTheChain() throws IOException {
    Path top = dir.resolve(chain.get(0));
    if (ufs.exists(uri(top))) {
      ufs.delete(uri(top), true);
    }
  }

  static int bytes(Path p) {
    return p.toString().getBytes(UTF_8).length;
  }

  static String uri(Path p) {
    return "file://" + p;
  }

  /** A name of 150 bytes in the deep folder: its path is about 6,000 bytes. */
  Path deep(String name) {
    return deep.resolve(name + "-" + "n".repeat(149 - name.length()));
  }

  /**
   * The deep folder, opened by the JDK one folder at a time relative to the one before (openat(2)):
   * what the store made, seen without the store.
   */
  SecureDirectoryStream<Path> openDeep() throws IOException {
    SecureDirectoryStream<Path> folder;
    try (DirectoryStream<Path> top = Files.newDirectoryStream(dir)) {
      folder =
          ((SecureDirectoryStream<Path>) top)
              .newDirectoryStream(Path.of(chain.get(0)), LinkOption.NOFOLLOW_LINKS);
    }
    for (String name : chain.subList(1, chain.size())) {
      SecureDirectoryStream<Path> next =
          folder.newDirectoryStream(Path.of(name), LinkOption.NOFOLLOW_LINKS);
      folder.close();
      folder = next;
    }
    return folder;
  }

  /** The names in the deep folder, hidden temporary ones too, read without the store. */
  List<String> namesInDeep() throws IOException {
    List<String> names = new ArrayList<>();
    try (SecureDirectoryStream<Path> folder = openDeep()) {
      folder.forEach(p -> names.add(p.getFileName().toString()));
    }
    names.sort(null);
    return names;
  }

  /** lstat of an entry of the deep folder, without the store. */
  BasicFileAttributes inDeep(Path entry) throws IOException {
    try (SecureDirectoryStream<Path> folder = openDeep()) {
      return folder
          .getFileAttributeView(
              entry.getFileName(), BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
          .readAttributes();
    }
  }

  /** The content of a file of the deep folder, without the store. */
  String contentInDeep(Path entry) throws IOException {
    try (SecureDirectoryStream<Path> folder = openDeep();
        SeekableByteChannel ch =
            folder.newByteChannel(entry.getFileName(), Set.of(StandardOpenOption.READ))) {
      ByteBuffer b = ByteBuffer.allocate((int) ch.size());
      while (b.hasRemaining() && ch.read(b) >= 0) {
        // Until full.
      }
      return new String(b.array(), 0, b.position(), UTF_8);
    }
  }

  void write(Path p, String content) throws IOException {
    try (UfsOutputStream out = ufs.create(uri(p), true, 0644)) {
      out.write(content.getBytes(UTF_8));
    }
  }

  Map<String, UfsStatus> list(Path folder) throws IOException {
    Map<String, UfsStatus> byName = new TreeMap<>();
    try (CloseableIterator<UfsStatus> it = ufs.list(uri(folder))) {
      it.forEachRemaining(s -> assertEquals(null, byName.put(s.name(), s), s.name()));
    }
    return byName;
  }

  /** An exception names what the caller gave, never the /proc path the store went through. */
  static <E extends Exception> E namesNoProcPath(E e) {
    assertFalse(String.valueOf(e.getMessage()).contains("/proc/self/fd"), e.getMessage());
    return e;
  }

  @Test
  void aShortPathIsUsedAsItIsAndALongOneThroughAFolderDescriptor() throws Exception {
    Path shortPath = dir.resolve("short");
    try (LongPath lp = LongPath.open(shortPath)) {
      assertSame(shortPath, lp.path(), "no /proc path, no descriptor");
    }
    String folders = "/" + "a/".repeat(LongPath.THRESHOLD / 2 - 2);
    Path justUnder = Path.of(folders + "b".repeat(LongPath.THRESHOLD - 1 - folders.length()));
    assertEquals(LongPath.THRESHOLD - 1, bytes(justUnder));
    try (LongPath lp = LongPath.open(justUnder)) {
      assertSame(justUnder, lp.path(), "a path under the threshold is never opened");
    }
    Path file = deep("f");
    assertTrue(bytes(file) > 5_900);
    try (LongPath lp = LongPath.open(file)) {
      String resolved = lp.path().toString();
      assertTrue(resolved.startsWith("/proc/self/fd/"), resolved);
      assertTrue(bytes(lp.path()) < LongPath.THRESHOLD + 30, resolved);
      assertTrue(resolved.endsWith("/" + file.getFileName()), resolved);
      assertTrue(Files.isDirectory(lp.path().getParent()), "the kernel takes it");
      IOException named =
          lp.named(new NoSuchFileException(resolved, resolved + "-other", "reason"));
      assertEquals(NoSuchFileException.class, named.getClass());
      assertEquals(file.toString(), ((FileSystemException) named).getFile());
      assertEquals(file + "-other", ((FileSystemException) named).getOtherFile());
      assertEquals("reason", ((FileSystemException) named).getReason());
    }

    assertFalse(ufs.pathTooLong(uri(file)));
    assertFalse(ufs.pathTooLong(uri(Path.of("/" + "d/".repeat(8 * 1024)))), "16 KiB");
    assertTrue(
        ufs.pathTooLong(uri(Path.of("/" + "d/".repeat(33 * 1024)))),
        "past the store's bound of 64 KiB");
    FileSystemException tooLong =
        assertThrows(
            FileSystemException.class,
            () -> ufs.getStatus(uri(Path.of("/" + "d/".repeat(33 * 1024) + "f"))));
    assertTrue(tooLong.getMessage().contains("File name too long"), tooLong.getMessage());
  }

  @Test
  void mkdirsMakesFoldersPastPathMax() throws Exception {
    assertTrue(bytes(deep) > 4_096 + 1_500);
    assertTrue(ufs.exists(uri(deep)));
    UfsStatus s = ufs.getStatus(uri(deep));
    assertTrue(s.directory());
    assertEquals(chain.get(chain.size() - 1), s.name());
    assertEquals(List.of(), namesInDeep(), "there, and empty, seen without the store");

    Path one = deep.resolve("one");
    ufs.mkdirs(uri(one), false);
    assertTrue(inDeep(one).isDirectory());
    assertEquals(
        uri(one),
        namesNoProcPath(
                assertThrows(FileAlreadyExistsException.class, () -> ufs.mkdirs(uri(one), false)))
            .getFile());
    ufs.mkdirs(uri(one), true);
    NoSuchFileException noParent =
        assertThrows(
            NoSuchFileException.class, () -> ufs.mkdirs(uri(deep.resolve("none/sub")), false));
    assertEquals(uri(deep.resolve("none")), namesNoProcPath(noParent).getFile());

    // Past two cuts, and below a missing folder of the first cut: each folder made in turn.
    Path sixteenKib = deep.resolve("m".repeat(200) + "/" + "n".repeat(200));
    while (bytes(sixteenKib) < 16 * 1024) {
      sixteenKib = sixteenKib.resolve("z".repeat(250));
    }
    ufs.mkdirs(uri(sixteenKib), true);
    assertTrue(ufs.getStatus(uri(sixteenKib)).directory());
    write(sixteenKib.resolve("f"), "at 16 KiB");
    byte[] buffer = new byte[20];
    assertEquals(9, ufs.read(uri(sixteenKib.resolve("f")), 0, buffer, 0, 20));
    assertEquals("at 16 KiB", new String(buffer, 0, 9, UTF_8));
    ufs.delete(uri(deep.resolve("m".repeat(200))), true);
    assertFalse(ufs.exists(uri(sixteenKib)));

    // Names of characters of two bytes each: cut by bytes, named back by characters.
    Path accented = dir.resolve("é".repeat(100));
    while (bytes(accented) < 5_000) {
      accented = accented.resolve("ü".repeat(100));
    }
    ufs.mkdirs(uri(accented), true);
    write(accented.resolve("ñame"), "ñ");
    assertEquals(List.of("ñame"), List.copyOf(list(accented).keySet()));
    assertEquals(2, ufs.getStatus(uri(accented.resolve("ñame"))).length());
    ufs.delete(uri(dir.resolve("é".repeat(100))), true);

    Files.writeString(dir.resolve("file"), "a file, not a folder");
    assertEquals(
        dir.resolve("file").toString(),
        namesNoProcPath(
                assertThrows(
                    FileAlreadyExistsException.class,
                    () -> ufs.mkdirs(uri(dir.resolve("file")), true)))
            .getFile());
    Path underAFile = deep.resolve("plain");
    write(underAFile, "x");
    namesNoProcPath(
        assertThrows(
            FileSystemException.class, () -> ufs.mkdirs(uri(underAFile.resolve("sub")), true)));
  }

  @Test
  void aFilePastPathMaxIsWrittenReadDescribedAndListed() throws Exception {
    Path file = deep("file");
    assertTrue(bytes(file) > 5_900 && bytes(file) < 6_100, "about 6,000 bytes");
    UfsOutputStream out = ufs.create(uri(file), false, 0640);
    out.write("hello, deep world".getBytes(UTF_8));
    assertFalse(ufs.exists(uri(file)), "not there before close");
    assertEquals(1, namesInDeep().size(), "the temporary file beside it");
    out.close();
    assertEquals(
        List.of(file.getFileName().toString()),
        namesInDeep(),
        "moved into place, no temporary file left");
    assertEquals("hello, deep world", contentInDeep(file));

    byte[] buffer = new byte[5];
    assertEquals(5, ufs.read(uri(file), 7, buffer, 0, 5));
    assertEquals("deep ", new String(buffer, UTF_8));
    ByteBuffer direct = ByteBuffer.allocateDirect(64);
    assertEquals(17, ufs.read(uri(file), 0, direct));
    assertEquals(-1, ufs.read(uri(file), 17, direct.clear()));

    UfsStatus s = ufs.getStatus(uri(file));
    assertEquals(file.getFileName().toString(), s.name());
    assertEquals(UfsFileType.REGULAR, s.type());
    assertEquals(17, s.length());
    assertEquals(0640, s.mode());
    assertEquals(out.fingerprint(), s.fingerprint());
    assertEquals(s.fingerprint(), ufs.fingerprint(uri(file)));
    assertEquals(17, ufs.getTargetStatus(uri(file)).length());
    assertTrue(ufs.exists(uri(file)));
    assertFalse(ufs.exists(uri(deep("missing"))));

    ufs.mkdirs(uri(deep.resolve("sub")), false);
    Map<String, UfsStatus> listed = list(deep);
    assertEquals(
        List.of(file.getFileName().toString(), "sub"),
        List.copyOf(listed.keySet()),
        "names only, no temporary file");
    assertEquals(17, listed.get(file.getFileName().toString()).length());
    assertTrue(listed.get("sub").directory());

    assertEquals(
        uri(file),
        namesNoProcPath(
                assertThrows(
                    FileAlreadyExistsException.class, () -> ufs.create(uri(file), false, 0)))
            .getFile());
    write(file, "rewritten");
    assertEquals("rewritten", contentInDeep(file));
    assertNotEquals(s.fingerprint(), ufs.fingerprint(uri(file)));

    Path joined = deep("joined");
    UfsStatus j = ufs.concat(List.of(uri(file), uri(file)), uri(joined), false, 0600);
    assertEquals(18, j.length());
    assertEquals("rewrittenrewritten", contentInDeep(joined));
    assertEquals(3, namesInDeep().size(), "no temporary file left");
  }

  @Test
  void missingEntriesPastPathMaxFailNamingTheirUris() throws Exception {
    Path missing = deep("missing");
    for (NoSuchFileException e :
        List.of(
            assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri(missing))),
            assertThrows(NoSuchFileException.class, () -> ufs.getTargetStatus(uri(missing))),
            assertThrows(NoSuchFileException.class, () -> ufs.fingerprint(uri(missing))),
            assertThrows(
                NoSuchFileException.class, () -> ufs.read(uri(missing), 0, new byte[1], 0, 1)),
            assertThrows(
                NoSuchFileException.class, () -> ufs.read(uri(missing), 0, ByteBuffer.allocate(1))),
            assertThrows(NoSuchFileException.class, () -> ufs.list(uri(missing))),
            assertThrows(NoSuchFileException.class, () -> ufs.delete(uri(missing), true)),
            assertThrows(
                NoSuchFileException.class, () -> ufs.rename(uri(missing), uri(deep("to")))))) {
      assertEquals(uri(missing), namesNoProcPath(e).getFile());
    }
    // Below a folder missing from the first piece, which the store cannot even open.
    Path below = dir.resolve(chain.get(0) + "-gone").resolve(dir.relativize(deep("f")));
    assertTrue(bytes(below) > 6_000);
    assertEquals(
        uri(below),
        namesNoProcPath(assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri(below))))
            .getFile());
    assertFalse(ufs.exists(uri(below)));
    assertEquals(
        uri(below.getParent()),
        namesNoProcPath(
                assertThrows(NoSuchFileException.class, () -> ufs.create(uri(below), false, 0)))
            .getFile());
    assertEquals(
        uri(below.getParent()),
        namesNoProcPath(
                assertThrows(NoSuchFileException.class, () -> ufs.mkdirs(uri(below), false)))
            .getFile());
    assertEquals(
        uri(below.getParent()),
        namesNoProcPath(
                assertThrows(
                    NoSuchFileException.class,
                    () -> ufs.createSpecialFile(uri(below), UfsFileType.FIFO, 0600, 0)))
            .getFile());
    assertEquals(
        uri(below.getParent()),
        namesNoProcPath(
                assertThrows(NoSuchFileException.class, () -> ufs.createSymlink(uri(below), "x")))
            .getFile());
  }

  @Test
  void renamesPastPathMaxWithAndWithoutReplace() throws Exception {
    Path a = deep("a");
    Path b = deep("b");
    write(a, "content of a");
    ufs.rename(uri(a), uri(b));
    assertFalse(ufs.exists(uri(a)));
    assertEquals("content of a", contentInDeep(b));
    write(a, "new a");
    assertEquals(
        uri(b),
        namesNoProcPath(
                assertThrows(FileAlreadyExistsException.class, () -> ufs.rename(uri(a), uri(b))))
            .getFile());

    ufs.rename(uri(a), uri(b), true);
    assertEquals("new a", contentInDeep(b), "replaced in one rename");
    assertEquals(List.of(b.getFileName().toString()), namesInDeep());

    // Between a short path and a long one, both ways.
    Path shallow = dir.resolve("shallow");
    ufs.rename(uri(b), uri(shallow));
    assertEquals("new a", Files.readString(shallow));
    ufs.rename(uri(shallow), uri(a), true);
    assertEquals("new a", contentInDeep(a));

    ufs.mkdirs(uri(deep.resolve("d1/inner")), true);
    ufs.mkdirs(uri(deep.resolve("d2")), false);
    ufs.rename(uri(deep.resolve("d1")), uri(deep.resolve("d2")), true);
    assertTrue(
        ufs.getStatus(uri(deep.resolve("d2/inner"))).directory(), "a folder over an empty folder");
    ufs.mkdirs(uri(deep.resolve("d3")), false);
    DirectoryNotEmptyException notEmpty =
        assertThrows(
            DirectoryNotEmptyException.class,
            () -> ufs.rename(uri(deep.resolve("d3")), uri(deep.resolve("d2")), true));
    assertEquals(uri(deep.resolve("d2")), namesNoProcPath(notEmpty).getFile());
    FileSystemException fileOverDir =
        assertThrows(
            FileSystemException.class, () -> ufs.rename(uri(a), uri(deep.resolve("d3")), true));
    assertTrue(
        namesNoProcPath(fileOverDir)
            .getMessage()
            .contains("only a directory can replace a directory"),
        fileOverDir.getMessage());
    assertEquals(
        uri(deep.resolve("none")),
        namesNoProcPath(
                assertThrows(
                    NoSuchFileException.class,
                    () -> ufs.rename(uri(a), uri(deep.resolve("none/a")), true)))
            .getFile());
  }

  @Test
  void linksAndSpecialFilesPastPathMax() throws Exception {
    Path target = deep("target");
    write(target, "the target");
    Path link = deep("link");
    ufs.createSymlink(uri(link), target.getFileName().toString());
    UfsStatus s = ufs.getStatus(uri(link));
    assertEquals(UfsFileType.SYMLINK, s.type());
    assertEquals(target.getFileName().toString(), s.symlinkTarget());
    assertEquals("link:" + s.symlinkTarget(), ufs.fingerprint(uri(link)));
    assertTrue(inDeep(link).isSymbolicLink(), "seen without the store");
    assertEquals(
        UfsFileType.REGULAR,
        ufs.getTargetStatus(uri(link)).type(),
        "followed from the deep folder");
    assertEquals(10, ufs.getTargetStatus(uri(link)).length());
    assertEquals(UfsFileType.SYMLINK, list(deep).get(link.getFileName().toString()).type());
    assertEquals(
        uri(link),
        namesNoProcPath(
                assertThrows(
                    FileAlreadyExistsException.class,
                    () -> ufs.createSymlink(uri(link), "elsewhere")))
            .getFile());

    Path fifo = deep("fifo");
    ufs.createSpecialFile(uri(fifo), UfsFileType.FIFO, 0604, 0);
    assertEquals(UfsFileType.FIFO, ufs.getStatus(uri(fifo)).type());
    assertEquals(0604, ufs.getStatus(uri(fifo)).mode(), "not narrowed by the umask");
    assertTrue(inDeep(fifo).isOther());
    assertEquals(
        uri(fifo),
        namesNoProcPath(
                assertThrows(
                    FileAlreadyExistsException.class,
                    () -> ufs.createSpecialFile(uri(fifo), UfsFileType.FIFO, 0600, 0)))
            .getFile());

    Path second = deep("second");
    ufs.createHardLink(uri(target), uri(second));
    assertEquals(inDeep(target).fileKey(), inDeep(second).fileKey(), "one inode, two names");
    assertEquals(
        uri(second),
        namesNoProcPath(
                assertThrows(
                    FileAlreadyExistsException.class,
                    () -> ufs.createHardLink(uri(target), uri(second))))
            .getFile());
    // A rewrite makes a new file under the first name; relink brings the second to it.
    write(target, "rewritten target");
    assertNotEquals(inDeep(target).fileKey(), inDeep(second).fileKey());
    ufs.relink(uri(target), uri(second));
    assertEquals(inDeep(target).fileKey(), inDeep(second).fileKey());
    assertEquals("rewritten target", contentInDeep(second));
    // And from a short name to a long one.
    Path shallow = dir.resolve("shallow");
    ufs.createHardLink(uri(second), uri(shallow));
    ufs.relink(uri(shallow), uri(deep("third")));
    assertEquals(inDeep(target).fileKey(), inDeep(deep("third")).fileKey());
    assertEquals(
        List.of(fifo, link, second, target, deep("third")).stream()
            .map(p -> p.getFileName().toString())
            .sorted()
            .toList(),
        namesInDeep(),
        "no temporary name left");
  }

  /** How many descriptors this process has open. */
  static long openDescriptors() throws IOException {
    try (var fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    }
  }

  @Test
  void noDescriptorOutlivesItsOperation() throws Exception {
    long before = openDescriptors();
    Path file = deep("file");
    write(file, "content");
    ufs.getStatus(uri(file));
    ufs.read(uri(file), 0, new byte[3], 0, 3);
    list(deep);
    ufs.rename(uri(file), uri(deep("renamed")), true);
    ufs.createSymlink(uri(deep("link")), "renamed");
    ufs.createHardLink(uri(deep("renamed")), uri(deep("hard")));
    assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri(file)));
    ufs.delete(uri(deep), true);
    assertEquals(before, openDescriptors());
  }

  @Test
  void deletesPastPathMaxOneByOneAndWholeTrees() throws Exception {
    Path file = deep("file");
    write(file, "x");
    ufs.delete(uri(file), false);
    assertFalse(ufs.exists(uri(file)));

    Path empty = deep.resolve("empty");
    ufs.mkdirs(uri(empty), false);
    ufs.delete(uri(empty), false);
    assertEquals(List.of(), namesInDeep());

    Path full = deep.resolve("full");
    ufs.mkdirs(uri(full.resolve("a/b")), true);
    write(full.resolve("a/b/f"), "y");
    DirectoryNotEmptyException notEmpty =
        assertThrows(DirectoryNotEmptyException.class, () -> ufs.delete(uri(full), false));
    assertEquals(full.toString(), namesNoProcPath(notEmpty).getFile());

    // A tree from a short folder down past PATH_MAX, with every kind in it; a link out of it
    // is deleted, not what it leads to.
    Path outside = dir.resolve("outside");
    Files.writeString(outside, "kept");
    write(deep("f"), "deep file");
    ufs.createSymlink(uri(deep("toOutside")), outside.toString());
    ufs.createSymlink(uri(deep("toTop")), dir.toString());
    ufs.createSpecialFile(uri(deep("fifo")), UfsFileType.FIFO, 0600, 0);
    ufs.createHardLink(uri(outside), uri(deep("hard")));
    Path top = dir.resolve(chain.get(0));
    ufs.delete(uri(top), true);
    assertFalse(ufs.exists(uri(top)));
    assertEquals("kept", Files.readString(outside));
    try (var left = Files.list(dir)) {
      assertEquals(List.of(outside), left.toList());
    }
  }
}
