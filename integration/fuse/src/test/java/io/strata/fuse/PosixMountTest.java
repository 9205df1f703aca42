package io.strata.fuse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.strata.client.FileSystem;
import io.strata.common.conf.StrataConfig;
import io.strata.tests.MultiProcessCluster;
import io.strata.tests.TestTree;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real FUSE mount (through /dev/fuse, mounted as a mount process mounts, over a cluster of a
 * master and a worker process) held to what a local ext4 folder does: every step of the POSIX
 * scenarios in {@code src/test/resources/posix} (system calls as root and as two other users, with
 * their results and errnos) answers the same in both; the tools data preparation runs (tar with
 * links, git, Python's zipfile appending, ln, mkfifo, truncate, touch, chmod) leave the same files
 * in both, as root and as another user; random writes into a 100 MiB file read back as the same
 * writes on a local file; and everything lands in the under store.
 */
class PosixMountTest {
  static final String NOBODY = "65534";
  @TempDir static Path dir;
  static MultiProcessCluster cluster;
  static FileSystem fs;
  static Path ufs;
  static FuseMount mount;
  static Path local;

  @BeforeAll
  static void mount() throws Exception {
    cluster =
        MultiProcessCluster.builder(dir.resolve("cluster"))
            .workers(1)
            .property("strata.master.file.block.size", Long.toString(4 << 20))
            .start();
    ufs = cluster.underStoreRoot();
    fs = FileSystem.connect(cluster.clientConfig());
    StrataConfig conf =
        StrataConfig.load(
            Map.of("strata.fuse.write.staging.dir", dir.resolve("staging").toString()));
    Path point = Files.createDirectories(dir.resolve("mnt"));
    local = Files.createDirectories(dir.resolve("local"));
    // Other users of the tests must reach both.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.setPosixFilePermissions(local, PosixFilePermissions.fromString("rwxr-xr-x"));
    mount =
        FuseMount.mount(
            StrataFuseFileSystem.create(
                fs, "/", conf, new io.micrometer.core.instrument.simple.SimpleMeterRegistry()),
            point,
            MountOptions.withDefaults(List.of(), conf),
            Duration.ofSeconds(30));
    Files.setPosixFilePermissions(point, PosixFilePermissions.fromString("rwxr-xr-x"));
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

  /** A folder of the same name made on the local disk and in the mount, both 0755. */
  static Path[] pair(String name) throws Exception {
    Path l = Files.createDirectories(local.resolve(name));
    Path m = Files.createDirectories(mnt(name));
    for (Path p : new Path[] {l, m}) {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    return new Path[] {l, m};
  }

  static Path resource(String name) throws URISyntaxException {
    return Path.of(PosixMountTest.class.getResource("/posix/" + name).toURI());
  }

  /** Fails naming every line that differs, with the scenario and its line number. */
  static void assertSameLines(String what, String expected, String actual) {
    if (expected.equals(actual)) {
      return;
    }
    String[] e = expected.split("\n", -1);
    String[] a = actual.split("\n", -1);
    StringBuilder diff = new StringBuilder(what + " differs from the local disk:\n");
    for (int i = 0; i < Math.max(e.length, a.length); i++) {
      String x = i < e.length ? e[i] : "<none>";
      String y = i < a.length ? a[i] : "<none>";
      if (!x.equals(y)) {
        diff.append("  local: ").append(x).append("\n  mount: ").append(y).append('\n');
      }
    }
    fail(diff.toString());
  }

  /**
   * One test per scenario: the driver runs it as root in an empty folder of the local disk and in
   * one of the mount, and both outputs must be the same, line for line.
   */
  @TestFactory
  Stream<DynamicTest> everyScenarioAnswersAsTheLocalDiskDoes() throws Exception {
    Path driver = resource("fsops.py");
    List<Path> scenarios = new ArrayList<>();
    try (Stream<Path> files = Files.list(driver.getParent())) {
      files.filter(p -> p.toString().endsWith(".scn")).sorted().forEach(scenarios::add);
    }
    assertTrue(scenarios.size() >= 12, "scenarios found: " + scenarios);
    return scenarios.stream()
        .map(
            scn ->
                DynamicTest.dynamicTest(
                    scn.getFileName().toString(),
                    () -> {
                      String name = scn.getFileName().toString().replace(".scn", "");
                      Path[] both = pair("scenario-" + name);
                      Commands.Run onDisk =
                          run(
                              "timeout",
                              "300",
                              "python3",
                              driver.toString(),
                              scn.toString(),
                              both[0].toString());
                      assertEquals(0, onDisk.exit(), "on the local disk: " + onDisk.err());
                      Commands.Run onMount =
                          run(
                              "timeout",
                              "300",
                              "python3",
                              driver.toString(),
                              scn.toString(),
                              both[1].toString());
                      assertEquals(0, onMount.exit(), "on the mount: " + onMount.err());
                      assertSameLines(scn.getFileName().toString(), onDisk.out(), onMount.out());
                    }));
  }

  /**
   * What a tree looks like to {@code find}: kind, mode, link count, size, modification time, link
   * target and path of every entry, and the digest of every regular file, sorted.
   */
  static String describeTree(Path root) throws Exception {
    Commands.Run find =
        run(
            "sh",
            "-c",
            "cd '"
                + root
                + "' && find . -mindepth 1 -printf"
                + " '%y %m %n %s %T@ %u %g %l %p\\n' | sort && find . -type f -exec md5sum {} + | sort");
    assertEquals(0, find.exit(), find.err());
    return find.out();
  }

  @Test
  void tarWithLinksAndSpecialFilesExtractsAsOnTheLocalDisk() throws Exception {
    Path src = Files.createDirectories(dir.resolve("tar-source"));
    TestTree.generate(src.resolve("data"), 40, 1 << 20, 3, 5);
    Files.writeString(src.resolve("data/readme.txt"), "a dataset\n");
    Commands.Run make =
        run(
            "sh",
            "-c",
            "cd '"
                + src
                + "' && ln -s data/readme.txt latest"
                + " && ln -s /etc/hostname absolute && ln data/readme.txt hard && mkfifo pipe"
                + " && chmod 0750 data && chmod 1777 data/readme.txt"
                + " && touch -h -d '2020-02-03 04:05:06.123456789' latest data/readme.txt"
                + " && tar --format=posix -cf ../links.tar .");
    assertEquals(0, make.exit(), make.err());
    Path[] both = pair("untar");
    for (Path target : both) {
      Commands.Run tar =
          run("tar", "-xpf", dir.resolve("links.tar").toString(), "-C", target.toString());
      assertEquals(0, tar.exit(), target + ": " + tar.err());
    }
    String onDisk = describeTree(both[0]);
    assertTrue(onDisk.contains("l 777 1 15") && onDisk.contains("p 644"), onDisk);
    assertSameLines("tar -xpf", onDisk, describeTree(both[1]));
    // In the under store: links are links, hard links share an inode.
    assertEquals("data/readme.txt", Files.readSymbolicLink(ufs.resolve("untar/latest")).toString());
    assertEquals(
        Files.getAttribute(ufs.resolve("untar/hard"), "unix:ino"),
        Files.getAttribute(ufs.resolve("untar/data/readme.txt"), "unix:ino"));
  }

  @Test
  void gitInitAndCommitInsideTheMount() throws Exception {
    Path repo = mnt("git/repo");
    Files.createDirectories(repo);
    TestTree.generate(repo.resolve("src"), 30, 64 << 10, 2, 9);
    Files.writeString(repo.resolve("run.sh"), "#!/bin/sh\necho hi\n");
    String git =
        "git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main"
            + " -c core.fsync=all";
    Commands.Run r =
        run(
            "sh",
            "-c",
            "cd '"
                + repo
                + "' && "
                + git
                + " init -q && chmod +x"
                + " run.sh && "
                + git
                + " add -A && "
                + git
                + " commit -q -m first && echo more >>"
                + " run.sh && "
                + git
                + " commit -q -am second && "
                + git
                + " gc -q && "
                + git
                + " fsck --strict && "
                + git
                + " status --porcelain && "
                + git
                + " log --format=%s");
    assertEquals(0, r.exit(), r.err());
    assertEquals("second\nfirst\n", r.out(), "status is clean and both commits are there");
    // A clone of it from the under store reads the same history.
    Commands.Run clone =
        run(
            "git",
            "clone",
            "-q",
            ufs.resolve("git/repo").toString(),
            dir.resolve("git-clone").toString());
    assertEquals(0, clone.exit(), clone.err());
    assertEquals("#!/bin/sh\necho hi\nmore\n", Files.readString(dir.resolve("git-clone/run.sh")));
  }

  @Test
  void pythonZipfileAppendsAsOnTheLocalDisk() throws Exception {
    String py =
        "import sys, zipfile\n"
            + "p = sys.argv[1]\n"
            + "def add(z, name, data):\n"
            + "    z.writestr(zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6)), data)\n"
            + "with zipfile.ZipFile(p, 'w') as z:\n"
            + "    add(z, 'a.txt', b'first' * 1000)\n"
            + "with zipfile.ZipFile(p, 'a') as z:\n"
            + "    add(z, 'b/c.txt', b'second' * 3000)\n"
            + "with zipfile.ZipFile(p, 'a', zipfile.ZIP_DEFLATED) as z:\n"
            + "    add(z, 'd.bin', bytes(range(256)) * 500)\n"
            + "z = zipfile.ZipFile(p)\n"
            + "print(z.testzip(), sorted(z.namelist()))\n";
    Path[] both = pair("zip");
    List<byte[]> made = new ArrayList<>();
    for (Path target : both) {
      Commands.Run r = run("python3", "-c", py, target.resolve("archive.zip").toString());
      assertEquals(0, r.exit(), r.err());
      assertEquals("None ['a.txt', 'b/c.txt', 'd.bin']", r.out().trim());
      made.add(Files.readAllBytes(target.resolve("archive.zip")));
    }
    assertArrayEquals(made.get(0), made.get(1), "the same bytes as on the local disk");
    assertArrayEquals(made.get(0), Files.readAllBytes(ufs.resolve("zip/archive.zip")));
  }

  /** The same shell steps in both folders, as root and as user 65534, with stat of each. */
  @Test
  void shellToolsLeaveTheSameFilesAsRootAndAsAnotherUser() throws Exception {
    String steps =
        "set -e; echo data > f; ln f hard; ln -s f soft; ln -s missing dangling;"
            + " mkfifo fifo; truncate -s 10000 f; truncate -s 3 hard; touch -d '2021-05-06"
            + " 07:08:09.5' f; touch -h -d '2019-01-01 00:00:01' soft; mkdir sticky; chmod +t"
            + " sticky; chmod g+s sticky; mkdir sticky/sub; echo x > sticky/sub/y;"
            + " stat -c '%n %F %a %h %s %N' f hard soft dangling fifo sticky sticky/sub"
            + " sticky/sub/y; stat -c '%n %y' f soft; cat hard; readlink soft";
    Path[] both = pair("tools");
    String[] outs = new String[2];
    for (int i = 0; i < 2; i++) {
      Commands.Run r = run("sh", "-c", "cd '" + both[i] + "' && " + steps);
      assertEquals(0, r.exit(), both[i] + ": " + r.err());
      outs[i] = r.out();
    }
    assertSameLines("shell tools as root", outs[0], outs[1]);
    Path[] shared = pair("tools-nobody");
    String[] asNobody = new String[2];
    for (int i = 0; i < 2; i++) {
      Files.setPosixFilePermissions(shared[i], PosixFilePermissions.fromString("rwxrwxrwx"));
      Commands.Run r =
          run(
              "setpriv",
              "--reuid=" + NOBODY,
              "--regid=" + NOBODY,
              "--clear-groups",
              "sh",
              "-c",
              "cd '"
                  + shared[i]
                  + "' && "
                  + steps
                  + "; stat -c '%U %G' f; chown 0 f 2>&1 | sed 's/.*: //'; echo \"$?\"");
      assertEquals(0, r.exit(), shared[i] + ": " + r.err());
      asNobody[i] = r.out();
    }
    assertTrue(
        asNobody[0].contains("nobody nogroup") || asNobody[0].contains("nobody nobody"),
        asNobody[0]);
    assertTrue(asNobody[0].contains("Operation not permitted"), asNobody[0]);
    assertSameLines("shell tools as user 65534", asNobody[0], asNobody[1]);
    assertEquals("dat", Files.readString(ufs.resolve("tools/f")));
  }

  /**
   * Random writes of random lengths into a 100 MiB file, some past its end, read back through
   * another descriptor before the close and after it: the same bytes as the same writes on a local
   * file, in the mount and in the under store.
   */
  @Test
  void randomWritesIntoALargeFileMatchALocalFile() throws Exception {
    long size = 100L << 20;
    Path[] both = pair("pwrite");
    Path onDisk = both[0].resolve("big.bin");
    Path onMount = both[1].resolve("big.bin");
    TestTree.writeRandom(onDisk, size, 21);
    Files.copy(onDisk, onMount);
    Random random = new Random(22);
    try (FileChannel d = FileChannel.open(onDisk, StandardOpenOption.WRITE);
        FileChannel m =
            FileChannel.open(onMount, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileChannel reader = FileChannel.open(onMount, StandardOpenOption.READ)) {
      for (int i = 0; i < 2000; i++) {
        byte[] chunk = new byte[1 + random.nextInt(64 << 10)];
        random.nextBytes(chunk);
        long at = (long) (random.nextDouble() * (size + (1 << 20)));
        d.write(ByteBuffer.wrap(chunk), at);
        m.write(ByteBuffer.wrap(chunk), at);
        if (i % 200 == 0) {
          ByteBuffer back = ByteBuffer.allocate(chunk.length);
          reader.read(back, at);
          assertArrayEquals(chunk, back.array(), "read back before the close, write " + i);
        }
      }
      m.truncate(size + 12345);
      d.truncate(size + 12345);
    }
    String expected = digest(onDisk);
    assertEquals(expected, digest(onMount));
    assertEquals(expected, digest(ufs.resolve("pwrite/big.bin")));
    assertEquals(size + 12345, fs.getStatus("/pwrite/big.bin").getLength());
  }

  static String digest(Path p) throws Exception {
    MessageDigest md = MessageDigest.getInstance("SHA-256");
    try (FileChannel c = FileChannel.open(p, StandardOpenOption.READ)) {
      ByteBuffer buf = ByteBuffer.allocate(1 << 20);
      while (c.read(buf) > 0) {
        buf.flip();
        md.update(buf);
        buf.clear();
      }
    }
    return HexFormat.of().formatHex(md.digest());
  }
}
