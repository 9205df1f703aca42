package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.FileSystem;
import io.strata.common.PathNames;
import io.strata.common.conf.StrataConfig;
import io.strata.proto.FileInfo;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Changes through a real FUSE mount (through /dev/fuse) of a cluster of a master and a worker
 * process, mounted as a mount process would be ({@link MountOptions#withDefaults}: kernel
 * permission checks, other users allowed): new files are written through to the under store, the
 * namespace operations reach the master, unsupported operations answer their precise errno, and
 * another user is denied what the modes deny. Checked with java.nio, shell tools, dd and Python.
 */
class MountWritesTest {
  static final long BLOCK = 1 << 20;
  static final String NOBODY = "65534";
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem fs;
  static Path ufs;
  static FuseMount mount;
  static StrataFuseFileSystem mounted;

  @BeforeAll
  static void mount() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(BLOCK))
            .start();
    ufs = cluster.underStoreRoot();
    TestTree.writeRandom(ufs.resolve("existing.bin"), 3 * BLOCK + 5, 3);
    fs = FileSystem.connect(cluster.clientConfig());
    StrataConfig conf = StrataConfig.load(Map.of("strata.fuse.metadata.cache.ttl", "10s"));
    Path point = Files.createDirectories(dir.resolve("mnt"));
    // The mount point must be reachable by the other user of the permission tests.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    mounted =
        StrataFuseFileSystem.create(
            fs, "/", conf, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    mount =
        FuseMount.mount(
            mounted, point, MountOptions.withDefaults(List.of(), conf), Duration.ofSeconds(30));
  }

  @AfterAll
  static void unmount() {
    if (mount != null) {
      mount.close();
      if (FuseMount.isMounted(mount.mountPoint())) {
        FuseMount.lazyUnmount(mount.mountPoint());
      }
    }
    if (fs != null) {
      fs.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  static Path mnt(String rel) {
    return mount.mountPoint().resolve(rel);
  }

  static Commands.Run run(String... cmd) throws Exception {
    return Commands.run(dir, cmd);
  }

  /** Runs {@code cmd} as user and group 65534 (nobody), with no supplementary groups. */
  static Commands.Run runAsNobody(String... cmd) throws Exception {
    String[] full = new String[cmd.length + 4];
    full[0] = "setpriv";
    full[1] = "--reuid=" + NOBODY;
    full[2] = "--regid=" + NOBODY;
    full[3] = "--clear-groups";
    System.arraycopy(cmd, 0, full, 4, cmd.length);
    return run(full);
  }

  static void assertFails(Commands.Run r, String message, String... cmd) {
    assertNotEquals(0, r.exit(), String.join(" ", cmd));
    assertTrue(r.err().contains(message), String.join(" ", cmd) + ": " + r.err());
  }

  @Test
  void aCopiedTreeIsWrittenThroughToTheUnderStoreAndReadsBack() throws Exception {
    Path root = dir.resolve("source");
    TestTree source = TestTree.generate(root, 60, BLOCK, 2, 17);
    Commands.Run cp = run("cp", "-r", root.toString(), mnt("copied").toString());
    assertEquals(0, cp.exit(), cp.err());
    for (Map.Entry<String, TestTree.FileFacts> f : source.files().entrySet()) {
      byte[] expected = Files.readAllBytes(root.resolve(f.getKey()));
      assertArrayEquals(expected, Files.readAllBytes(mnt("copied/" + f.getKey())), f.getKey());
      assertArrayEquals(
          expected,
          Files.readAllBytes(ufs.resolve("copied/" + f.getKey())),
          "under store copy of " + f.getKey());
      FileInfo info = fs.getStatus("/copied/" + f.getKey());
      assertTrue(info.getComplete(), f.getKey());
      assertEquals(expected.length, info.getLength(), f.getKey());
    }
  }

  @Test
  void ddAndPythonWriteFilesThatReadBack() throws Exception {
    Path source = dir.resolve("dd-source.bin");
    TestTree.writeRandom(source, 5 * BLOCK + 123, 5);
    Commands.Run dd = run("dd", "if=" + source, "of=" + mnt("dd.bin"), "bs=64k", "status=none");
    assertEquals(0, dd.exit(), dd.err());
    assertArrayEquals(Files.readAllBytes(source), Files.readAllBytes(ufs.resolve("dd.bin")));
    Commands.Run md5 = run("md5sum", mnt("dd.bin").toString(), source.toString());
    String[] lines = md5.out().split("\n");
    assertEquals(lines[0].split(" ")[0], lines[1].split(" ")[0], md5.out());

    String py =
        "import hashlib,sys\n"
            + "p=sys.argv[1]\n"
            + "data=bytes(range(256))*4099\n"
            + "open(p,'wb').write(data)\n"
            + "back=open(p,'rb').read()\n"
            + "print(len(back), hashlib.sha256(back).hexdigest()==hashlib.sha256(data).hexdigest())\n";
    Commands.Run python = run("python3", "-c", py, mnt("py.bin").toString());
    assertEquals(0, python.exit(), python.err());
    assertEquals((256 * 4099) + " True", python.out().trim());
    assertEquals(256 * 4099, Files.size(ufs.resolve("py.bin")));
  }

  @Test
  void anotherNameOfAFileShowsItsNewLinkCountAsSoonAsARenameInItsFolderReturns() throws Exception {
    Files.createDirectories(mnt("links"));
    Files.writeString(mnt("links/a"), "old");
    Files.createLink(mnt("links/b"), mnt("links/a"));
    Files.writeString(mnt("links/new"), "new");
    // A name the kernel learns from a lookup (made elsewhere): its node is learnt from the answer,
    // so the mount can drop its attributes while the kernel holds its folder locked.
    // The change notice of the create drops the name from the kernel when it arrives, and the next
    // lookup learns it again: polled for less than the kernel's 10 s attr_timeout, after which a
    // getattr would name the node without a lookup.
    fs.createFile("/links/elsewhere").close();
    boolean known = false;
    for (long end = System.nanoTime() + 5_000_000_000L; !known && System.nanoTime() < end; ) {
      assertTrue(Files.exists(mnt("links/elsewhere")));
      known = mounted.kernelEntries().knowsNode("/links/elsewhere");
      if (!known) {
        Thread.sleep(50);
      }
    }
    assertTrue(known, "the node of a name looked up is learnt from the lookup's answer");
    assertEquals(2, Files.getAttribute(mnt("links/b"), "unix:nlink"));
    assertTrue(mounted.kernelEntries().knowsNode("/links/b"));
    // The rename replaces a name of the file in the same folder, which the kernel locks meanwhile.
    Files.move(mnt("links/new"), mnt("links/a"), StandardCopyOption.REPLACE_EXISTING);
    assertEquals(1, Files.getAttribute(mnt("links/b"), "unix:nlink"));
    assertEquals("old", Files.readString(mnt("links/b")));
    assertEquals("new", Files.readString(mnt("links/a")));
  }

  @Test
  void timesSetWhileTheFileIsOpenForWritingShowAtOnceAndAfterClose() throws Exception {
    Files.createDirectories(mnt("times"));
    Path f = mnt("times/open.txt");
    Files.writeString(f, "x");
    FileTime when = FileTime.fromMillis(915_148_800_000L);
    try (FileChannel c = FileChannel.open(f, StandardOpenOption.WRITE)) {
      Files.setLastModifiedTime(f, when);
      assertEquals(when, Files.getLastModifiedTime(f), "while open");
    }
    assertEquals(when, Files.getLastModifiedTime(f), "after close");
    assertEquals(when.toMillis(), fs.getStatus("/times/open.txt").getModificationTimeMs());
    // touch -d opens the file for writing, sets its times through the handle, and closes it.
    Commands.Run touch = run("touch", "-d", "2001-02-03 04:05:06 UTC", f.toString());
    assertEquals(0, touch.exit(), touch.err());
    assertEquals(
        java.time.Instant.parse("2001-02-03T04:05:06Z"), Files.getLastModifiedTime(f).toInstant());
    assertEquals("x", Files.readString(f));
  }

  @Test
  void namespaceOperationsReachTheMaster() throws Exception {
    Files.createDirectories(mnt("ops/a/b"));
    assertTrue(fs.getStatus("/ops/a/b").getDirectory());
    Files.writeString(mnt("ops/a/b/f.txt"), "first");
    Files.writeString(mnt("ops/a/g.txt"), "second");

    Files.move(mnt("ops/a/b/f.txt"), mnt("ops/a/f.txt"));
    assertEquals("first", Files.readString(mnt("ops/a/f.txt")));
    assertFalse(Files.exists(mnt("ops/a/b/f.txt")));
    // POSIX rename replaces an existing file.
    Commands.Run mv = run("mv", "-f", mnt("ops/a/f.txt").toString(), mnt("ops/a/g.txt").toString());
    assertEquals(0, mv.exit(), mv.err());
    assertEquals("first", Files.readString(mnt("ops/a/g.txt")));
    Files.move(mnt("ops/a"), mnt("ops/renamed"));
    assertEquals("first", Files.readString(mnt("ops/renamed/g.txt")));
    assertEquals(5, fs.getStatus("/ops/renamed/g.txt").getLength());

    Commands.Run rmdir = run("rmdir", mnt("ops/renamed").toString());
    assertFails(rmdir, "Directory not empty", "rmdir");
    Files.delete(mnt("ops/renamed/g.txt"));
    Files.delete(mnt("ops/renamed/b"));
    Files.delete(mnt("ops/renamed"));
    assertFalse(Files.exists(mnt("ops/renamed")));
    assertThrows(io.strata.common.error.StrataException.class, () -> fs.getStatus("/ops/renamed"));

    // A bucket folder's hidden uploads folder (never listed) goes with the folder: rm -rf of a
    // bucket through the mount works. The bucket is made through the mount, which then knows it at
    // once; a folder made by another client reaches the mount with the change stream's delay.
    Files.createDirectories(mnt("ops/bucket"));
    fs.createDirectory("/ops/bucket/" + PathNames.UPLOADS_FOLDER + "/upload-1", true, false);
    Files.writeString(mnt("ops/bucket/key"), "k");
    Commands.Run rmRf = run("rm", "-rf", mnt("ops/bucket").toString());
    assertEquals(0, rmRf.exit(), rmRf.err());
    assertThrows(io.strata.common.error.StrataException.class, () -> fs.getStatus("/ops/bucket"));

    Files.writeString(mnt("ops/mode.txt"), "x");
    Files.setPosixFilePermissions(
        mnt("ops/mode.txt"), PosixFilePermissions.fromString("rw-r-----"));
    assertEquals(0640, fs.getStatus("/ops/mode.txt").getMode() & 07777);
    assertEquals(
        "rw-r-----",
        PosixFilePermissions.toString(Files.getPosixFilePermissions(mnt("ops/mode.txt"))));
    Commands.Run chown = run("chown", "65534:65534", mnt("ops/mode.txt").toString());
    assertEquals(0, chown.exit(), chown.err());
    assertEquals("nobody", fs.getStatus("/ops/mode.txt").getOwner());
    assertEquals(NOBODY, run("stat", "-c", "%u", mnt("ops/mode.txt").toString()).out().trim());

    FileTime when = FileTime.fromMillis(1_600_000_000_000L);
    Files.setLastModifiedTime(mnt("ops/mode.txt"), when);
    assertEquals(1_600_000_000_000L, fs.getStatus("/ops/mode.txt").getModificationTimeMs());

    Files.writeString(mnt("ops/trunc.txt"), "some bytes");
    Commands.Run truncate = run("truncate", "-s", "0", mnt("ops/trunc.txt").toString());
    assertEquals(0, truncate.exit(), truncate.err());
    assertEquals(0, Files.size(mnt("ops/trunc.txt")));
    assertEquals(0, fs.getStatus("/ops/trunc.txt").getLength());
    // Overwriting (open with O_TRUNC) writes the file anew.
    Files.writeString(mnt("ops/trunc.txt"), "new");
    assertEquals("new", Files.readString(ufs.resolve("ops/trunc.txt")));

    Commands.Run df = run("df", "-k", mount.mountPoint().toString());
    assertEquals(0, df.exit(), df.err());
  }

  /**
   * Writes anywhere in existing files (an append, a write in the middle, a seek back while writing
   * a new file, a truncation that grows the file) reach the under store when the file is closed, as
   * a new version of the same inode; what a mount cannot do answers its errno.
   */
  @Test
  void writesIntoExistingFilesReachTheUnderStoreAndTheRestAnswersItsErrno() throws Exception {
    Path existing = mnt("existing.bin");
    byte[] expected = Files.readAllBytes(existing);
    long inode = (long) Files.getAttribute(existing, "unix:ino");
    Files.write(existing, new byte[] {1, 2, 3}, StandardOpenOption.APPEND);
    try (FileChannel c = FileChannel.open(existing, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(new byte[] {9, 9}), 10);
    }
    expected = java.util.Arrays.copyOf(expected, expected.length + 3);
    expected[expected.length - 3] = 1;
    expected[expected.length - 2] = 2;
    expected[expected.length - 1] = 3;
    expected[10] = 9;
    expected[11] = 9;
    assertArrayEquals(expected, Files.readAllBytes(existing));
    assertArrayEquals(expected, Files.readAllBytes(ufs.resolve("existing.bin")));
    assertEquals(
        inode,
        (long) Files.getAttribute(existing, "unix:ino"),
        "a new version keeps the inode number");

    try (FileChannel c =
        FileChannel.open(
            mnt("seek.bin"), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      c.write(ByteBuffer.wrap(new byte[8192]));
      c.write(ByteBuffer.wrap(new byte[] {7}), 0);
    }
    byte[] seek = Files.readAllBytes(ufs.resolve("seek.bin"));
    assertEquals(8192, seek.length);
    assertEquals(7, seek[0]);
    Commands.Run grow = run("truncate", "-s", "7", mnt("seek.bin").toString());
    assertEquals(0, grow.exit(), grow.err());
    assertEquals(7, Files.size(ufs.resolve("seek.bin")));

    assertFails(
        run("fallocate", "--punch-hole", "-o", "0", "-l", "4096", mnt("seek.bin").toString()),
        "unsupported",
        "fallocate --punch-hole (EOPNOTSUPP)");
    Commands.Run xattr =
        run(
            "python3",
            "-c",
            "import os,sys\ntry:\n  os.setxattr(sys.argv[1], 'trusted.k', b'v')\nexcept OSError"
                + " as e:\n  print(e.errno)\n",
            existing.toString());
    assertEquals("95", xattr.out().trim(), xattr.err());
    Commands.Run userXattr =
        run(
            "python3",
            "-c",
            "import os,sys\nos.setxattr(sys.argv[1], 'user.k', b'v')\n"
                + "print(os.getxattr(sys.argv[1], 'user.k'))\n",
            existing.toString());
    assertEquals("b'v'", userXattr.out().trim(), userXattr.err());
    assertEquals(
        "v",
        fs.getStatus("/existing.bin").getXattrsMap().get("user.k").toStringUtf8(),
        "kept in the namespace, where the S3 proxy keeps object metadata");
  }

  /**
   * What the mount just made is found by the next call, while the master's notices of the same
   * changes arrive meanwhile (once about one round in ten answered ENOENT).
   */
  @Test
  void whatWasJustMadeIsFoundWhileItsNoticesArrive() throws Exception {
    for (int i = 0; i < 25; i++) {
      Path round = mnt("fresh/r" + i);
      Files.createDirectories(round.resolve("a"));
      Files.writeString(round.resolve("x.txt"), "x");
      Files.createDirectories(round.resolve("shared"));
      Files.setPosixFilePermissions(
          round.resolve("shared"), PosixFilePermissions.fromString("rwxrwxrwx"));
      Files.writeString(round.resolve("mode.txt"), "x");
      Files.setPosixFilePermissions(
          round.resolve("mode.txt"), PosixFilePermissions.fromString("rw-r-----"));
      assertEquals(0640, fs.getStatus("/fresh/r" + i + "/mode.txt").getMode() & 07777);
    }
  }

  @Test
  void anotherUserIsDeniedWhatTheModesDeny() throws Exception {
    Files.createDirectories(mnt("perm/private"));
    Files.writeString(mnt("perm/private/secret.txt"), "secret");
    Files.setPosixFilePermissions(
        mnt("perm/private"), PosixFilePermissions.fromString("rwx------"));
    Files.writeString(mnt("perm/public.txt"), "public");
    Files.createDirectories(mnt("perm/shared"));
    Files.setPosixFilePermissions(mnt("perm/shared"), PosixFilePermissions.fromString("rwxrwxrwx"));

    Commands.Run ok = runAsNobody("cat", mnt("perm/public.txt").toString());
    assertEquals(0, ok.exit(), ok.err());
    assertEquals("public", ok.out());
    assertFails(
        runAsNobody("cat", mnt("perm/private/secret.txt").toString()),
        "Permission denied",
        "cat private/secret.txt as nobody");
    assertFails(
        runAsNobody("ls", mnt("perm/private").toString()),
        "Permission denied",
        "ls private as nobody");
    assertFails(
        runAsNobody("touch", mnt("perm/new.txt").toString()),
        "Permission denied",
        "touch in a 0755 directory of root as nobody");
    assertFails(
        runAsNobody("rm", "-f", mnt("perm/public.txt").toString()),
        "Permission denied",
        "rm as nobody");
    assertTrue(Files.exists(mnt("perm/public.txt")));

    Commands.Run mine = runAsNobody("sh", "-c", "echo mine > " + mnt("perm/shared/mine.txt"));
    assertEquals(0, mine.exit(), mine.err());
    assertEquals("nobody", fs.getStatus("/perm/shared/mine.txt").getOwner());
    assertEquals(
        NOBODY, run("stat", "-c", "%u", mnt("perm/shared/mine.txt").toString()).out().trim());
    assertEquals("mine\n", Files.readString(ufs.resolve("perm/shared/mine.txt")));
  }
}
