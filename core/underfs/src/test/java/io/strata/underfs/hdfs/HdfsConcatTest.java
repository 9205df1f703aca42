package io.strata.underfs.hdfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/**
 * Concatenation in HDFS against a real MiniDFSCluster: the namenode moves the sources' blocks when
 * its rules allow, and the store copies the bytes when they do not.
 */
class HdfsConcatTest {
  static final int MB = 1 << 20;
  @TempDir static java.nio.file.Path base;
  static MiniHdfs hdfs;
  static HdfsUnderFileSystem ufs;

  String dir;

  @BeforeAll
  static void startHdfs() throws IOException {
    hdfs = new MiniHdfs(base);
    ufs =
        HdfsUnderFileSystem.open(
            hdfs.uri("/"), HdfsOptions.parse(Map.of("hdfs.conf.dfs.replication", "1")));
  }

  @AfterAll
  static void stopHdfs() throws IOException {
    if (ufs != null) {
      ufs.close();
    }
    if (hdfs != null) {
      hdfs.close();
    }
  }

  /** Each test works in a folder of its own, with the sources in parts/ and targets in out/. */
  @BeforeEach
  void makeDir(TestInfo info) throws IOException {
    dir = "/" + info.getTestMethod().orElseThrow().getName();
    hdfs.fs().mkdirs(new Path(dir + "/parts"));
    hdfs.fs().mkdirs(new Path(dir + "/out"));
  }

  String uri(String rel) {
    return hdfs.uri(dir + "/" + rel);
  }

  Path hpath(String rel) {
    return new Path(dir + "/" + rel);
  }

  /** Writes a file as an outside writer would, with the block size given. */
  byte[] write(String rel, int length, long blockSize, long seed) throws IOException {
    byte[] data = new byte[length];
    new Random(seed).nextBytes(data);
    try (FSDataOutputStream out = hdfs.fs().create(hpath(rel), true, 4096, (short) 1, blockSize)) {
      out.write(data);
    }
    return data;
  }

  byte[] read(String rel) throws IOException {
    byte[] data = new byte[(int) hdfs.fs().getFileStatus(hpath(rel)).getLen()];
    try (var in = hdfs.fs().open(hpath(rel))) {
      in.readFully(0, data);
    }
    return data;
  }

  List<Long> blockIds(String rel) throws IOException {
    List<Long> ids = new ArrayList<>();
    for (LocatedBlock b :
        hdfs.fs().getClient().getLocatedBlocks(dir + "/" + rel, 0).getLocatedBlocks()) {
      ids.add(b.getBlock().getBlockId());
    }
    return ids;
  }

  /** Every name in a folder of HDFS, hidden temporary files too. */
  List<String> names(String rel) throws IOException {
    List<String> names = new ArrayList<>();
    for (FileStatus s : hdfs.fs().listStatus(hpath(rel))) {
      names.add(s.getPath().getName());
    }
    names.sort(null);
    return names;
  }

  static byte[] joined(byte[]... parts) {
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      all.writeBytes(p);
    }
    return all.toByteArray();
  }

  @Test
  void theNamenodeMovesTheSourcesBlocksOntoTheTargetWithoutCopyingThem() throws Exception {
    // Blocks of 1 MiB, the last of each source part-full: joined in the middle of the target.
    byte[] a = write("parts/00001", 2 * MB + MB / 2, MB, 1);
    byte[] empty = write("parts/00002", 0, MB, 2);
    byte[] c = write("parts/00003", MB + 7, MB, 3);
    byte[] d = write("parts/00004", 100, MB, 4);
    List<Long> before = new ArrayList<>(blockIds("parts/00001"));
    before.addAll(blockIds("parts/00003"));
    before.addAll(blockIds("parts/00004"));

    UfsStatus s =
        ufs.concat(
            List.of(uri("parts/00001"), uri("parts/00002"), uri("parts/00003"), uri("parts/00004")),
            uri("out/object #1"),
            false,
            0640);

    assertArrayEquals(joined(a, empty, c, d), read("out/object #1"));
    assertEquals(before, blockIds("out/object #1"), "the blocks were copied, not moved");
    assertEquals(ufs.getStatus(uri("out/object #1")), s);
    assertEquals(a.length + c.length + d.length, s.length());
    assertEquals(0640, s.mode());
    assertEquals(List.of("object #1"), names("out"), "a temporary file was left beside it");
    assertEquals(
        List.of("00002"),
        names("parts"),
        "the joined sources are consumed; the empty one, not joined, is left");
  }

  @Test
  void oneSourceIsRenamedOntoTheTarget() throws Exception {
    byte[] a = write("parts/00001", 3000, MB, 5);
    List<Long> before = blockIds("parts/00001");
    UfsStatus s = ufs.concat(List.of(uri("parts/00001")), uri("out/one"), false, 0);
    assertArrayEquals(a, read("out/one"));
    assertEquals(before, blockIds("out/one"));
    assertEquals(0644, s.mode(), "the default mode of a new file, as a write gets it");
    assertEquals(List.of(), names("parts"));
  }

  @Test
  void aConcatTheNamenodeRefusesIsCopiedAndTheSourcesStayInPlace() throws Exception {
    // A source whose blocks are larger than the target's (the first source) is refused.
    byte[] a = write("parts/00001", MB + 1, MB, 6);
    byte[] b = write("parts/00002", 3 * MB, 2 * MB, 7);
    List<Long> before = new ArrayList<>(blockIds("parts/00001"));
    before.addAll(blockIds("parts/00002"));

    UfsStatus s =
        ufs.concat(List.of(uri("parts/00001"), uri("parts/00002")), uri("out/x"), false, 0600);

    assertArrayEquals(joined(a, b), read("out/x"));
    assertEquals(a.length + b.length, s.length());
    assertEquals(0600, s.mode());
    assertNotEquals(before, blockIds("out/x"));
    assertEquals(List.of("00001", "00002"), names("parts"));
    assertArrayEquals(a, read("parts/00001"));
    assertArrayEquals(b, read("parts/00002"));
    assertEquals(List.of("x"), names("out"), "a temporary file was left beside it");
  }

  @Test
  void anExistingTargetIsReplacedOnlyWithOverwriteAndAMissingSourceChangesNothing()
      throws Exception {
    byte[] a = write("parts/00001", 5000, MB, 8);
    byte[] b = write("parts/00002", 6000, MB, 9);
    byte[] old = write("out/t", 10, MB, 10);
    List<String> both = List.of(uri("parts/00001"), uri("parts/00002"));
    assertThrows(FileAlreadyExistsException.class, () -> ufs.concat(both, uri("out/t"), false, 0));
    NoSuchFileException missing =
        assertThrows(
            NoSuchFileException.class,
            () ->
                ufs.concat(List.of(uri("parts/00001"), uri("parts/gone")), uri("out/t"), true, 0));
    assertEquals(uri("parts/gone"), missing.getFile());
    assertThrows(
        NoSuchFileException.class, () -> ufs.concat(both, uri("no such folder/t"), true, 0));
    assertArrayEquals(old, read("out/t"));
    assertEquals(List.of("00001", "00002"), names("parts"));

    ufs.concat(both, uri("out/t"), true, 0);
    assertArrayEquals(joined(a, b), read("out/t"));
    assertEquals(List.of("t"), names("out"));
    assertFalse(Arrays.equals(old, read("out/t")));
    assertTrue(names("parts").isEmpty());
  }
}
