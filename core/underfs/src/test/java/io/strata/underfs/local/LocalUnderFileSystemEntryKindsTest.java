package io.strata.underfs.local;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local store holds what a POSIX file system holds besides files and directories: symbolic
 * links, FIFOs, sockets, device nodes and hard links, made through the store and read back through
 * its status and listing, on real files.
 */
class LocalUnderFileSystemEntryKindsTest {
  @TempDir Path dir;
  final LocalUnderFileSystem ufs = new LocalUnderFileSystem();

  String uri(String rel) {
    return "file://" + dir.resolve(rel);
  }

  Path path(String rel) {
    return dir.resolve(rel);
  }

  /** The device number glibc's makedev(3) makes, which stat reports as st_rdev. */
  static long makedev(long major, long minor) {
    return ((major & 0xfffL) << 8)
        | ((major & 0xfffff000L) << 32)
        | (minor & 0xffL)
        | ((minor & 0xffffff00L) << 12);
  }

  /**
   * Whether mknod(2) of device nodes is allowed: CAP_MKNOD, in the initial user namespace (a user
   * namespace's root has the capability but may not make device nodes).
   */
  static boolean canMakeDeviceNodes() throws IOException {
    long capEff = 0;
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("CapEff:")) {
        capEff = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
      }
    }
    boolean capMknod = (capEff & (1L << 27)) != 0;
    List<String> uidMap = Files.readAllLines(Path.of("/proc/self/uid_map"));
    boolean initialNamespace =
        uidMap.size() == 1 && uidMap.get(0).trim().split("\\s+")[2].equals("4294967295");
    return capMknod && initialNamespace;
  }

  Map<String, UfsStatus> list(String rel) throws IOException {
    Map<String, UfsStatus> byName = new TreeMap<>();
    try (CloseableIterator<UfsStatus> it = ufs.list(rel.isEmpty() ? "file://" + dir : uri(rel))) {
      it.forEachRemaining(s -> assertEquals(null, byName.put(s.name(), s), s.name()));
    }
    return byName;
  }

  /** Every name in a folder, hidden temporary ones too (listings leave those out). */
  List<String> allNames(String rel) throws IOException {
    try (var s = Files.list(rel.isEmpty() ? dir : path(rel))) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  int mode(String rel) throws IOException {
    return (Integer) Files.getAttribute(path(rel), "unix:mode", LinkOption.NOFOLLOW_LINKS) & 07777;
  }

  long attribute(String rel, String name) throws IOException {
    return ((Number) Files.getAttribute(path(rel), "unix:" + name, LinkOption.NOFOLLOW_LINKS))
        .longValue();
  }

  void assertLink(UfsStatus s, String name, String target) {
    assertEquals(name, s.name());
    assertEquals(UfsFileType.SYMLINK, s.type());
    assertFalse(s.directory());
    assertFalse(s.regularFile());
    assertEquals(target, s.symlinkTarget());
    assertEquals(target.getBytes(UTF_8).length, s.length(), "lstat's size: the target's bytes");
    assertEquals(0777, s.mode());
    assertEquals("link:" + target, s.fingerprint());
    assertEquals(0, s.rdev());
  }

  @Test
  void symlinksRoundTripAsLinksWithTheirTargetTextRelativeAbsoluteOrDangling() throws Exception {
    Files.createDirectories(path("a/sub"));
    Files.writeString(path("a/f"), "twelve bytes");
    Files.createDirectories(path("links"));
    String absolute = path("a/sub").toString();
    ufs.createSymlink(uri("links/relative"), "../a/f");
    ufs.createSymlink(uri("links/absolute"), absolute);
    ufs.createSymlink(uri("links/dangling"), "../nowhere/ünïcödé");

    assertEquals(Path.of("../a/f"), Files.readSymbolicLink(path("links/relative")));
    assertLink(ufs.getStatus(uri("links/relative")), "relative", "../a/f");
    assertLink(ufs.getStatus(uri("links/absolute")), "absolute", absolute);
    assertLink(ufs.getStatus(uri("links/dangling")), "dangling", "../nowhere/ünïcödé");
    assertEquals("link:../a/f", ufs.fingerprint(uri("links/relative")));

    Map<String, UfsStatus> listed = list("links");
    assertEquals(
        List.of("absolute", "dangling", "relative"),
        List.copyOf(listed.keySet()),
        "a dangling link is listed");
    assertLink(listed.get("relative"), "relative", "../a/f");
    assertLink(listed.get("absolute"), "absolute", absolute);
    assertLink(listed.get("dangling"), "dangling", "../nowhere/ünïcödé");
    assertTrue(ufs.exists(uri("links/dangling")), "a dangling link exists");

    UfsStatus file = ufs.getTargetStatus(uri("links/relative"));
    assertEquals("relative", file.name(), "the link's own name");
    assertEquals(UfsFileType.REGULAR, file.type());
    assertTrue(file.regularFile());
    assertEquals(12, file.length());
    assertEquals("", file.symlinkTarget());
    UfsStatus directory = ufs.getTargetStatus(uri("links/absolute"));
    assertEquals(UfsFileType.DIRECTORY, directory.type());
    assertTrue(directory.directory());
    assertEquals(UfsFileType.REGULAR, ufs.getTargetStatus(uri("a/f")).type());
    NoSuchFileException dangling =
        assertThrows(NoSuchFileException.class, () -> ufs.getTargetStatus(uri("links/dangling")));
    assertEquals(uri("links/dangling"), dangling.getFile());
    Files.writeString(path("a/sub/inside"), "x");
    assertEquals(
        List.of("inside"),
        List.copyOf(list("links/absolute").keySet()),
        "listing a link to a directory lists the directory");

    FileAlreadyExistsException taken =
        assertThrows(
            FileAlreadyExistsException.class,
            () -> ufs.createSymlink(uri("links/dangling"), "elsewhere"));
    assertEquals(uri("links/dangling"), taken.getFile());
    assertThrows(FileAlreadyExistsException.class, () -> ufs.createSymlink(uri("a/f"), "x"));
    NoSuchFileException noParent =
        assertThrows(NoSuchFileException.class, () -> ufs.createSymlink(uri("missing/link"), "x"));
    assertEquals("file://" + path("missing"), noParent.getFile());
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.create(uri("links/dangling"), false, 0),
        "a write does not replace a link");
  }

  @Test
  void fifosAndSocketsAreMadeWithTheirExactModes() throws Exception {
    ufs.createSpecialFile(uri("fifo"), UfsFileType.FIFO, 0666, 0);
    // The set-group-id and sticky bits are set as given too; rdev is ignored for a socket.
    ufs.createSpecialFile(uri("socket"), UfsFileType.SOCKET, 03777, 1234);

    assertEquals(0666, mode("fifo"), "not narrowed by the umask");
    assertEquals(03777, mode("socket"));
    assertEquals(Mknod.S_IFIFO, attribute("fifo", "mode") & Mknod.S_IFMT);
    assertEquals(Mknod.S_IFSOCK, attribute("socket", "mode") & Mknod.S_IFMT);
    Map<String, UfsStatus> listed = list("");
    for (UfsStatus s : List.of(ufs.getStatus(uri("fifo")), listed.get("fifo"))) {
      assertEquals(UfsFileType.FIFO, s.type());
      assertEquals("fifo", s.name());
      assertEquals(0666, s.mode());
      assertEquals(0, s.length());
      assertEquals("", s.fingerprint());
      assertEquals(0, s.rdev());
      assertFalse(s.directory());
    }
    for (UfsStatus s : List.of(ufs.getStatus(uri("socket")), listed.get("socket"))) {
      assertEquals(UfsFileType.SOCKET, s.type());
      assertEquals(0777, s.mode(), "the status carries the permission bits");
      assertEquals(0, s.rdev());
    }
    assertEquals("", ufs.fingerprint(uri("fifo")));

    assertEquals(
        uri("fifo"),
        assertThrows(
                FileAlreadyExistsException.class,
                () -> ufs.createSpecialFile(uri("fifo"), UfsFileType.FIFO, 0600, 0))
            .getFile());
    ufs.createSymlink(uri("dangling"), "nowhere");
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.createSpecialFile(uri("dangling"), UfsFileType.SOCKET, 0600, 0));
    assertEquals(
        "file://" + path("missing"),
        assertThrows(
                NoSuchFileException.class,
                () -> ufs.createSpecialFile(uri("missing/fifo"), UfsFileType.FIFO, 0600, 0))
            .getFile());
    for (UfsFileType notSpecial :
        List.of(UfsFileType.REGULAR, UfsFileType.DIRECTORY, UfsFileType.SYMLINK)) {
      assertThrows(
          IllegalArgumentException.class,
          () -> ufs.createSpecialFile(uri("bad"), notSpecial, 0600, 0));
    }
    assertEquals(List.of("dangling", "fifo", "socket"), allNames(""));
  }

  @Test
  void deviceNodesKeepTheirWholeDeviceNumbersOrAreRefusedWithoutCapMknod() throws Exception {
    long devNull = makedev(1, 3);
    assertEquals(0x103, devNull);
    long loop0 = makedev(7, 0);
    // The largest Linux holds: all 32 bits set, the top one too (no sign is lost on the way).
    long wide = makedev(4095, 0xfffff);
    assertEquals(0xffffffffL, wide);
    long tooWide = makedev(4096, 0);
    if (!canMakeDeviceNodes()) {
      AccessDeniedException denied =
          assertThrows(
              AccessDeniedException.class,
              () -> ufs.createSpecialFile(uri("null"), UfsFileType.CHAR_DEVICE, 0666, devNull));
      assertTrue(denied.getMessage().contains("CAP_MKNOD"), denied.getMessage());
      assertThrows(
          AccessDeniedException.class,
          () -> ufs.createSpecialFile(uri("loop"), UfsFileType.BLOCK_DEVICE, 0660, loop0));
      assertEquals(List.of(), allNames(""));
      return;
    }
    ufs.createSpecialFile(uri("null"), UfsFileType.CHAR_DEVICE, 0666, devNull);
    ufs.createSpecialFile(uri("loop"), UfsFileType.BLOCK_DEVICE, 0660, loop0);
    ufs.createSpecialFile(uri("wide"), UfsFileType.CHAR_DEVICE, 0600, wide);

    assertEquals(devNull, attribute("null", "rdev"), "what stat reads back");
    assertEquals(
        attribute("null", "rdev"), (long) Files.getAttribute(Path.of("/dev/null"), "unix:rdev"));
    assertEquals(loop0, attribute("loop", "rdev"));
    assertEquals(wide, attribute("wide", "rdev"), "all 32 bits reach the kernel");
    FileSystemException beyond =
        assertThrows(
            FileSystemException.class,
            () -> ufs.createSpecialFile(uri("beyond"), UfsFileType.CHAR_DEVICE, 0600, tooWide));
    assertTrue(beyond.getMessage().contains("major up to 4095"), beyond.getMessage());
    assertFalse(Files.exists(path("beyond"), LinkOption.NOFOLLOW_LINKS));
    assertEquals(Mknod.S_IFCHR, attribute("null", "mode") & Mknod.S_IFMT);
    assertEquals(Mknod.S_IFBLK, attribute("loop", "mode") & Mknod.S_IFMT);
    assertEquals(0666, mode("null"));
    assertEquals(0660, mode("loop"));

    Map<String, UfsStatus> listed = list("");
    for (UfsStatus s : List.of(ufs.getStatus(uri("null")), listed.get("null"))) {
      assertEquals(UfsFileType.CHAR_DEVICE, s.type());
      assertEquals(devNull, s.rdev());
      assertEquals(0666, s.mode());
      assertEquals(0, s.length());
      assertEquals("", s.fingerprint());
    }
    for (UfsStatus s : List.of(ufs.getStatus(uri("loop")), listed.get("loop"))) {
      assertEquals(UfsFileType.BLOCK_DEVICE, s.type());
      assertEquals(loop0, s.rdev());
    }
    assertEquals(wide, listed.get("wide").rdev());
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.createSpecialFile(uri("null"), UfsFileType.CHAR_DEVICE, 0666, devNull));
  }

  @Test
  void glibcsOlderEntryPointMakesTheSameNodes() throws Exception {
    // What the store calls where glibc (before 2.33) exports __xmknod but not mknod.
    Mknod.LibC libc = Mknod.libc(UfsFileType.FIFO);
    assertEquals(0, Mknod.xmknod(libc, path("fifo").toString(), Mknod.S_IFIFO | 0640, 0));
    assertEquals(Mknod.S_IFIFO, attribute("fifo", "mode") & Mknod.S_IFMT);
    assertEquals(
        -1,
        Mknod.xmknod(libc, path("fifo").toString(), Mknod.S_IFIFO | 0640, 0),
        "an existing name is refused");
    if (canMakeDeviceNodes()) {
      long wide = makedev(4095, 0xfffff);
      assertEquals(0, Mknod.xmknod(libc, path("wide").toString(), Mknod.S_IFCHR | 0600, wide));
      assertEquals(wide, attribute("wide", "rdev"));
    }
  }

  @Test
  void aHardLinkIsASecondNameOfTheSameFile() throws Exception {
    Files.createDirectories(path("d"));
    Files.writeString(path("first"), "shared");
    ufs.createHardLink(uri("first"), uri("d/second"));

    assertEquals(attribute("first", "ino"), attribute("d/second", "ino"));
    assertEquals(2, attribute("first", "nlink"));
    assertEquals(2, attribute("d/second", "nlink"));
    Files.writeString(path("d/second"), "changed through the second name");
    assertEquals("changed through the second name", Files.readString(path("first")));
    UfsStatus second = ufs.getStatus(uri("d/second"));
    assertEquals(UfsFileType.REGULAR, second.type());
    assertEquals(ufs.getStatus(uri("first")).fingerprint(), second.fingerprint());

    assertEquals(
        uri("d/second"),
        assertThrows(
                FileAlreadyExistsException.class,
                () -> ufs.createHardLink(uri("first"), uri("d/second")))
            .getFile());
    assertEquals(
        uri("gone"),
        assertThrows(NoSuchFileException.class, () -> ufs.createHardLink(uri("gone"), uri("third")))
            .getFile());
    assertEquals(
        "file://" + path("missing"),
        assertThrows(
                NoSuchFileException.class,
                () -> ufs.createHardLink(uri("first"), uri("missing/third")))
            .getFile());
    FileSystemException directory =
        assertThrows(FileSystemException.class, () -> ufs.createHardLink(uri("d"), uri("d2")));
    assertTrue(
        directory.getMessage().contains("a directory cannot have a second name"),
        directory.getMessage());
  }

  @Test
  void relinkBringsASecondNameToTheFileRewrittenUnderTheFirst() throws Exception {
    Files.createDirectories(path("d"));
    Files.writeString(path("a"), "old");
    ufs.createHardLink(uri("a"), uri("d/b"));
    // The store's create writes a temporary file and moves it over the name: a new inode.
    try (UfsOutputStream out = ufs.create(uri("a"), true, 0644)) {
      out.write("new content".getBytes(UTF_8));
    }
    assertEquals("old", Files.readString(path("d/b")), "the other name keeps the old file");

    ufs.relink(uri("a"), uri("d/b"));
    assertEquals("new content", Files.readString(path("d/b")));
    assertEquals(attribute("a", "ino"), attribute("d/b", "ino"));
    assertEquals(2, attribute("a", "nlink"));
    assertEquals(List.of("b"), allNames("d"), "no temporary name is left");

    // Already names of one file: rename(2) does nothing, and the temporary name goes too.
    ufs.relink(uri("a"), uri("d/b"));
    assertEquals(List.of("b"), allNames("d"));
    assertEquals(2, attribute("a", "nlink"));
    ufs.relink(uri("a"), uri("d/c"));
    assertEquals(3, attribute("a", "nlink"), "a name not there yet is made");

    assertEquals(
        uri("gone"),
        assertThrows(NoSuchFileException.class, () -> ufs.relink(uri("gone"), uri("d/b")))
            .getFile());
    assertEquals(
        "file://" + path("missing"),
        assertThrows(NoSuchFileException.class, () -> ufs.relink(uri("a"), uri("missing/b")))
            .getFile());
    Files.createDirectories(path("d/sub"));
    assertThrows(FileSystemException.class, () -> ufs.relink(uri("a"), uri("d/sub")));
    assertTrue(Files.isDirectory(path("d/sub")));
    assertEquals(List.of("b", "c", "sub"), allNames("d"), "no temporary name is left");
    assertEquals(List.of("b", "c", "sub"), List.copyOf(list("d").keySet()));
  }

  @Test
  void aReaderOfTheRelinkedNameNeverFindsItMissing() throws Exception {
    Files.writeString(path("one"), "1");
    Files.writeString(path("two"), "2");
    ufs.createHardLink(uri("one"), uri("name"));
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger misses = new AtomicInteger();
    AtomicInteger looks = new AtomicInteger();
    Thread reader =
        new Thread(
            () -> {
              while (!done.get()) {
                if (!Files.exists(path("name"), LinkOption.NOFOLLOW_LINKS)) {
                  misses.incrementAndGet();
                }
                looks.incrementAndGet();
              }
            });
    reader.start();
    try {
      for (int i = 0; i < 500; i++) {
        ufs.relink(uri(i % 2 == 0 ? "two" : "one"), uri("name"));
      }
    } finally {
      done.set(true);
      reader.join();
    }
    assertEquals(0, misses.get(), "of " + looks.get() + " looks");
    assertEquals("1", Files.readString(path("name")));
    assertEquals(List.of("name", "one", "two"), allNames(""));
  }

  @Test
  void renameWithReplaceSwapsInOneStepOrFailsLikeRename2() throws Exception {
    Files.writeString(path("f1"), "new");
    Files.writeString(path("f2"), "old");
    ufs.rename(uri("f1"), uri("f2"), true);
    assertEquals("new", Files.readString(path("f2")));
    assertFalse(Files.exists(path("f1")));

    Files.createDirectories(path("src/inner"));
    Files.writeString(path("src/inner/x"), "x");
    Files.createDirectories(path("emptyDst"));
    ufs.rename(uri("src"), uri("emptyDst"), true);
    assertEquals("x", Files.readString(path("emptyDst/inner/x")), "dir over an empty dir");

    Files.createDirectories(path("dir2"));
    DirectoryNotEmptyException notEmpty =
        assertThrows(
            DirectoryNotEmptyException.class, () -> ufs.rename(uri("dir2"), uri("emptyDst"), true));
    assertEquals(uri("emptyDst"), notEmpty.getFile());
    assertTrue(Files.isDirectory(path("dir2")));
    assertEquals("x", Files.readString(path("emptyDst/inner/x")), "nothing changed");

    FileSystemException fileOverDir =
        assertThrows(FileSystemException.class, () -> ufs.rename(uri("f2"), uri("dir2"), true));
    assertFalse(fileOverDir instanceof DirectoryNotEmptyException);
    assertTrue(
        fileOverDir.getMessage().contains("only a directory can replace a directory"),
        fileOverDir.getMessage());
    FileSystemException dirOverFile =
        assertThrows(FileSystemException.class, () -> ufs.rename(uri("dir2"), uri("f2"), true));
    assertTrue(
        dirOverFile.getMessage().contains("a directory cannot replace"), dirOverFile.getMessage());
    assertEquals("new", Files.readString(path("f2")));

    ufs.createSymlink(uri("link"), "f2");
    Files.writeString(path("f3"), "three");
    ufs.rename(uri("f3"), uri("link"), true);
    assertEquals(UfsFileType.REGULAR, ufs.getStatus(uri("link")).type(), "the link replaced");
    assertEquals("new", Files.readString(path("f2")), "not what it pointed to");
    ufs.rename(uri("link"), uri("fresh"), true);
    assertEquals("three", Files.readString(path("fresh")), "to a name not there yet");

    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.rename(uri("fresh"), uri("f2"), false),
        "without replace, as before");
    assertEquals(
        uri("gone"),
        assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("gone"), uri("f2"), true))
            .getFile());
    assertEquals(
        "file://" + path("missing"),
        assertThrows(
                NoSuchFileException.class, () -> ufs.rename(uri("fresh"), uri("missing/f"), true))
            .getFile());
    assertEquals(
        List.of("dir2", "emptyDst", "f2", "fresh"), allNames(""), "no temporary name anywhere");
    assertEquals(List.of("dir2", "emptyDst", "f2", "fresh"), List.copyOf(list("").keySet()));
  }

  @Test
  void deletingRemovesLinksNeverWhatTheyLeadTo() throws Exception {
    Files.createDirectories(path("outside/deep"));
    Files.writeString(path("outside/deep/keep"), "kept");
    Files.writeString(path("outside/file"), "kept too");
    Files.createDirectories(path("tree/sub"));
    ufs.createSymlink(uri("tree/toDir"), path("outside").toString());
    ufs.createSymlink(uri("tree/sub/toFile"), "../../outside/file");
    ufs.createSpecialFile(uri("tree/sub/fifo"), UfsFileType.FIFO, 0600, 0);
    ufs.createSymlink(uri("topLink"), "outside");

    ufs.delete(uri("topLink"), true);
    assertFalse(Files.exists(path("topLink"), LinkOption.NOFOLLOW_LINKS));
    assertEquals("kept", Files.readString(path("outside/deep/keep")));
    ufs.delete(uri("tree"), true);
    assertFalse(Files.exists(path("tree"), LinkOption.NOFOLLOW_LINKS));
    assertEquals("kept", Files.readString(path("outside/deep/keep")));
    assertEquals("kept too", Files.readString(path("outside/file")));
    assertEquals(List.of("outside"), allNames(""));

    ufs.createSymlink(uri("dangling"), "nowhere");
    ufs.delete(uri("dangling"), false);
    assertFalse(ufs.exists(uri("dangling")));
  }
}
