package io.strata.underfs.hdfs;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import io.strata.underfs.UnderStores;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.SafeModeAction;
import org.apache.hadoop.fs.StreamCapabilities;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

/** The HDFS under store against a real MiniDFSCluster, through the public store contract. */
class HdfsUnderFileSystemTest {
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

  /** Each test works in a folder of its own. */
  @BeforeEach
  void makeDir(TestInfo info) throws IOException {
    dir = "/" + info.getTestMethod().orElseThrow().getName();
    hdfs.fs().mkdirs(new Path(dir));
  }

  String uri(String rel) {
    return hdfs.uri(dir + "/" + rel);
  }

  /** The HDFS path of a test-relative name, built so odd names stay verbatim. */
  Path hpath(String rel) {
    return new Path("hdfs", hdfs.namenode(), dir + "/" + rel);
  }

  static byte[] bytes(int n, long seed) {
    byte[] data = new byte[n];
    new Random(seed).nextBytes(data);
    return data;
  }

  void writeOutside(String rel, byte[] data) throws IOException {
    try (FSDataOutputStream out = hdfs.fs().create(hpath(rel), true)) {
      out.write(data);
    }
  }

  byte[] readOutside(String rel) throws IOException {
    DistributedFileSystem fs = hdfs.fs();
    byte[] data = new byte[(int) fs.getFileStatus(hpath(rel)).getLen()];
    try (var in = fs.open(hpath(rel))) {
      in.readFully(0, data);
    }
    return data;
  }

  Map<String, UfsStatus> list(String rel) throws IOException {
    Map<String, UfsStatus> byName = new TreeMap<>();
    try (CloseableIterator<UfsStatus> it = ufs.list(rel.isEmpty() ? hdfs.uri(dir) : uri(rel))) {
      while (it.hasNext()) {
        UfsStatus s = it.next();
        assertEquals(null, byName.put(s.name(), s), "listed twice: " + s.name());
      }
    }
    return byName;
  }

  /**
   * The store refuses a write half-way: the folder's space quota (3 MB) lets the new version's
   * first blocks (1 MB each) in and refuses the next. The write fails naming the quota, the file
   * keeps its previous content, and the folder shows no temporary file.
   */
  @Test
  void aWriteRefusedHalfWayByTheFoldersQuotaLeavesThePreviousFileAndNoTemporaryFile()
      throws Exception {
    try (HdfsUnderFileSystem smallBlocks =
        HdfsUnderFileSystem.open(
            hdfs.uri("/"),
            HdfsOptions.parse(
                Map.of("hdfs.conf.dfs.replication", "1", "hdfs.conf.dfs.blocksize", "1048576")))) {
      byte[] previous = bytes(1 << 20, 50);
      hdfs.fs().mkdirs(hpath("quota"));
      try (UfsOutputStream out = smallBlocks.create(uri("quota/f"), true, 0644)) {
        out.write(previous);
      }
      hdfs.fs()
          .setQuota(
              hpath("quota"),
              org.apache.hadoop.hdfs.protocol.HdfsConstants.QUOTA_DONT_SET,
              3L << 20);
      UfsOutputStream out = smallBlocks.create(uri("quota/f"), true, 0644);
      IOException failed =
          assertThrows(
              IOException.class,
              () -> {
                out.write(bytes(5 << 20, 51));
                out.close();
              });
      // What a writer does after a failed write; after a failed close it changes nothing.
      out.abort();
      assertTrue(
          String.valueOf(failed.getMessage()).toLowerCase(java.util.Locale.ROOT).contains("quota"),
          "the error names the quota: " + failed);
      assertArrayEquals(previous, readOutside("quota/f"));
      List<String> names = new ArrayList<>();
      for (FileStatus st : hdfs.fs().listStatus(hpath("quota"))) {
        names.add(st.getPath().getName());
      }
      assertEquals(List.of("f"), names, "no temporary file is left in the folder");
    }
  }

  @Test
  void statusAndListingShowNestedFilesAndOddNamesVerbatim() throws Exception {
    List<String> odd = List.of("with space.bin", "hash#tag", "per%20cent", "ünïcödé-日本.txt");
    for (String name : odd) {
      writeOutside("nested/" + name, name.getBytes(UTF_8));
    }
    hdfs.fs().mkdirs(hpath("nested/sub dir#1/deeper"));
    writeOutside("nested/sub dir#1/deeper/leaf", new byte[7]);
    hdfs.fs().setPermission(hpath("nested/hash#tag"), new FsPermission((short) 0640));

    Map<String, UfsStatus> children = list("nested");
    List<String> expected = new ArrayList<>(odd);
    expected.add("sub dir#1");
    expected.sort(null);
    assertEquals(expected, new ArrayList<>(children.keySet()));
    assertTrue(children.get("sub dir#1").directory());
    assertTrue(list("nested/sub dir#1").get("deeper").directory());
    assertEquals(7, list("nested/sub dir#1/deeper").get("leaf").length());

    for (String name : odd) {
      UfsStatus s = ufs.getStatus(uri("nested/" + name));
      assertEquals(name, s.name());
      assertFalse(s.directory());
      assertEquals(name.getBytes(UTF_8).length, s.length());
      var real = hdfs.fs().getFileStatus(hpath("nested/" + name));
      assertEquals(real.getModificationTime(), s.modificationTimeMs());
      assertEquals(s.length() + ":" + s.modificationTimeMs(), s.fingerprint());
      assertEquals(real.getOwner(), s.owner());
      assertEquals(real.getGroup(), s.group());
      assertArrayEquals(name.getBytes(UTF_8), readAll(uri("nested/" + name), (int) s.length()));
    }
    assertEquals(0640, ufs.getStatus(uri("nested/hash#tag")).mode());
    UfsStatus sub = ufs.getStatus(uri("nested/sub dir#1"));
    assertTrue(sub.directory());
    assertEquals(0, sub.length());
    assertEquals("", sub.fingerprint());
    assertTrue(ufs.exists(uri("nested/per%20cent")));
    assertFalse(ufs.exists(uri("nested/per cent")), "'%20' is a name, not an escape");
    assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri("nested/missing")));
    assertThrows(NoSuchFileException.class, () -> ufs.list(uri("missing")));
    assertThrows(IOException.class, () -> ufs.list(uri("nested/hash#tag")), "not a directory");
    assertEquals("", ufs.getStatus(hdfs.uri("")).name(), "the root has no name");
  }

  byte[] readAll(String uri, int length) throws IOException {
    byte[] data = new byte[length];
    int done = 0;
    for (int i = 0; i < length + 1 && done < length; i++) {
      int n = ufs.read(uri, done, data, done, length - done);
      if (n < 0) {
        break;
      }
      done += n;
    }
    assertEquals(length, done);
    return data;
  }

  @Test
  void listingThreeThousandFilesReturnsEachOnce() throws Exception {
    DistributedFileSystem fs = hdfs.fs();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> created = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int first = t;
        created.add(
            pool.submit(
                () -> {
                  for (int i = first; i < 3000; i += 4) {
                    fs.create(hpath("many/f" + i)).close();
                  }
                  return null;
                }));
      }
      for (Future<?> f : created) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    Map<String, UfsStatus> listed = list("many");
    assertEquals(3000, listed.size());
    for (int i = 0; i < 3000; i++) {
      assertTrue(listed.containsKey("f" + i), "f" + i);
    }
  }

  @Test
  void positionedReadsReturnExactRangesAndEndOfFile() throws Exception {
    byte[] data = bytes(10_000, 1);
    writeOutside("f", data);
    byte[] buf = new byte[200];
    assertEquals(100, ufs.read(uri("f"), 5000, buf, 50, 100));
    assertArrayEquals(Arrays.copyOfRange(data, 5000, 5100), Arrays.copyOfRange(buf, 50, 150));
    assertEquals(0, buf[0], "bytes outside the asked range are untouched");
    assertEquals(10, ufs.read(uri("f"), 9990, buf, 0, 100), "short read at the end");
    assertArrayEquals(Arrays.copyOfRange(data, 9990, 10_000), Arrays.copyOf(buf, 10));
    assertEquals(-1, ufs.read(uri("f"), 10_000, buf, 0, 100));
    assertEquals(-1, ufs.read(uri("f"), 20_000, buf, 0, 100));
    assertEquals(0, ufs.read(uri("f"), 0, buf, 0, 0));
    assertThrows(NoSuchFileException.class, () -> ufs.read(uri("missing"), 0, buf, 0, 1));
    assertThrows(IOException.class, () -> ufs.read(hdfs.uri(dir), 0, buf, 0, 1));
  }

  @Test
  void bufferReadGivesTheBytesOfTheArrayReadAcrossBlocksAndUpToTheEnd() throws Exception {
    // 2.5 blocks of 64 KiB, so that a buffer spans block boundaries.
    int blockSize = 64 * 1024;
    byte[] data = bytes(blockSize * 5 / 2, 7);
    try (FSDataOutputStream out = hdfs.fs().create(hpath("f"), true, 4096, (short) 1, blockSize)) {
      out.write(data);
    }
    String uri = uri("f");
    for (ByteBuffer dst :
        new ByteBuffer[] {
          ByteBuffer.allocateDirect(2 * blockSize), ByteBuffer.allocate(2 * blockSize)
        }) {
      String kind = dst.isDirect() ? "direct" : "heap";
      dst.position(100);
      int wanted = 2 * blockSize - 100;
      assertEquals(wanted, ufs.read(uri, 1000, dst), kind);
      assertEquals(2 * blockSize, dst.position(), kind);
      byte[] viaArray = new byte[wanted];
      assertEquals(wanted, ufs.read(uri, 1000, viaArray, 0, wanted));
      assertArrayEquals(viaArray, bytes(dst, 100, wanted), kind);

      dst.clear();
      assertEquals(
          blockSize / 2 + 10, ufs.read(uri, 2 * blockSize - 10, dst), kind + ": crosses the end");
      assertArrayEquals(
          Arrays.copyOfRange(data, 2 * blockSize - 10, data.length),
          bytes(dst, 0, blockSize / 2 + 10),
          kind);
      dst.clear();
      assertEquals(-1, ufs.read(uri, data.length, dst), kind + ": at the end");
      assertEquals(0, dst.position(), kind);
    }
    Path path = ufs.toPath(uri);
    assertTrue(
        ufs.streams()
            .open(path, hdfs.fs().getFileStatus(path))
            .in
            .hasCapability(StreamCapabilities.PREADBYTEBUFFER),
        "HDFS streams read into buffers");
    NoSuchFileException missing =
        assertThrows(
            NoSuchFileException.class,
            () -> ufs.read(uri("missing"), 0, ByteBuffer.allocateDirect(10)));
    assertEquals(uri("missing"), missing.getFile());
  }

  /** A stream over an array with positioned reads only: no ByteBuffer read capability. */
  static final class ArrayStream extends FSInputStream {
    final byte[] data;
    int pos;
    int positionedReads;

    ArrayStream(byte[] data) {
      this.data = data;
    }

    @Override
    public void seek(long position) {
      pos = (int) position;
    }

    @Override
    public long getPos() {
      return pos;
    }

    @Override
    public boolean seekToNewSource(long target) {
      return false;
    }

    @Override
    public int read() {
      return pos < data.length ? data[pos++] & 0xff : -1;
    }

    @Override
    public int read(long position, byte[] buffer, int offset, int length) {
      positionedReads++;
      if (position >= data.length) {
        return -1;
      }
      int n = (int) Math.min(length, data.length - position);
      System.arraycopy(data, (int) position, buffer, offset, n);
      return n;
    }
  }

  @Test
  void streamWithoutBufferReadsIsReadWithOnePositionedArrayRead() throws Exception {
    byte[] data = bytes(50_000, 8);
    ArrayStream raw = new ArrayStream(data);
    try (FSDataInputStream in = new FSDataInputStream(raw)) {
      assertFalse(in.hasCapability(StreamCapabilities.PREADBYTEBUFFER));
      ByteBuffer direct = ByteBuffer.allocateDirect(30_000);
      assertEquals(30_000, HdfsUnderFileSystem.readRange(in, 10_000, direct));
      assertEquals(1, raw.positionedReads, "one read into a heap array of the range");
      assertArrayEquals(Arrays.copyOfRange(data, 10_000, 40_000), bytes(direct, 0, 30_000));
      ByteBuffer heap = ByteBuffer.allocate(30_000);
      heap.position(5).limit(10_005);
      assertEquals(10_000, HdfsUnderFileSystem.readRange(in, 40_000, heap));
      assertEquals(10_005, heap.position());
      assertArrayEquals(Arrays.copyOfRange(data, 40_000, 50_000), bytes(heap, 5, 10_000));
    }
  }

  private static byte[] bytes(ByteBuffer buffer, int from, int length) {
    byte[] b = new byte[length];
    buffer.get(from, b);
    return b;
  }

  @Test
  void manyThreadsReadExactRangesOfOneFileAtOnce() throws Exception {
    // 3.5 blocks of 64 KiB, so that ranges cross block boundaries.
    int blockSize = 64 * 1024;
    byte[] data = bytes(blockSize * 7 / 2, 2);
    try (FSDataOutputStream out =
        hdfs.fs().create(hpath("shared"), true, 4096, (short) 1, blockSize)) {
      out.write(data);
    }
    String uri = uri("shared");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long seed = t;
        results.add(
            pool.submit(
                () -> {
                  Random random = new Random(seed);
                  int checked = 0;
                  for (int i = 0; i < 40; i++) {
                    int pos = random.nextInt(data.length);
                    int len = 1 + random.nextInt(3 * blockSize / 2);
                    byte[] buf = new byte[len];
                    int n = ufs.read(uri, pos, buf, 0, len);
                    int expected = Math.min(len, data.length - pos);
                    assertEquals(expected, n, "read of " + len + " at " + pos);
                    assertArrayEquals(
                        Arrays.copyOfRange(data, pos, pos + n), Arrays.copyOf(buf, n));
                    checked++;
                  }
                  return checked;
                }));
      }
      for (Future<Integer> f : results) {
        assertEquals(40, f.get());
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aWrittenFileAppearsUnderItsNameOnlyWhenClosed() throws Exception {
    byte[] data = bytes(300_000, 3);
    UfsOutputStream out = ufs.create(uri("new file #1"), false, 0640);
    out.write(data, 0, 100_000);
    out.write(data[100_000]);
    out.write(data, 100_001, data.length - 100_001);
    assertFalse(ufs.exists(uri("new file #1")));
    assertEquals(Map.of(), list(""), "in-progress writes are hidden from listings");
    assertEquals(1, hdfs.fs().listStatus(new Path(dir)).length, "the temporary file is there");
    out.close();

    assertArrayEquals(data, readOutside("new file #1"));
    UfsStatus s = ufs.getStatus(uri("new file #1"));
    assertEquals(data.length, s.length());
    assertEquals(0640, s.mode());
    assertEquals(s.fingerprint(), out.fingerprint());
    assertEquals(List.of("new file #1"), new ArrayList<>(list("").keySet()));
    assertEquals(1, hdfs.fs().listStatus(new Path(dir)).length, "no temporary file is left");
    assertEquals(
        1,
        hdfs.fs().getFileStatus(hpath("new file #1")).getReplication(),
        "hdfs.conf.dfs.replication reached the client");
    assertThrows(IOException.class, () -> out.write(1), "closed");

    try (UfsOutputStream wide = ufs.create(uri("wide"), false, 0777)) {
      wide.write(1);
    }
    assertEquals(0777, ufs.getStatus(uri("wide")).mode(), "the umask does not narrow a mode");
  }

  @Test
  void anAbortedWriteLeavesNothing() throws Exception {
    UfsOutputStream out = ufs.create(uri("aborted"), false, 0);
    out.write(bytes(5000, 4));
    out.abort();
    assertEquals(0, hdfs.fs().listStatus(new Path(dir)).length, "no file, no temporary file");
    assertFalse(ufs.exists(uri("aborted")));
  }

  @Test
  void createRefusesAnExistingFileUnlessOverwriting() throws Exception {
    writeOutside("x", "old".getBytes(UTF_8));
    String before = ufs.getStatus(uri("x")).fingerprint();
    assertThrows(FileAlreadyExistsException.class, () -> ufs.create(uri("x"), false, 0));
    try (UfsOutputStream out = ufs.create(uri("x"), true, 0)) {
      out.write("newer".getBytes(UTF_8));
    }
    assertEquals("newer", new String(readOutside("x"), UTF_8));
    assertNotEquals(before, ufs.getStatus(uri("x")).fingerprint());
    assertEquals(1, hdfs.fs().listStatus(new Path(dir)).length);

    // A file that appears while a non-overwriting write is in progress is not replaced.
    UfsOutputStream late = ufs.create(uri("raced"), false, 0);
    late.write(1);
    writeOutside("raced", "first".getBytes(UTF_8));
    assertThrows(FileAlreadyExistsException.class, late::close);
    assertEquals("first", new String(readOutside("raced"), UTF_8));
    assertEquals(2, hdfs.fs().listStatus(new Path(dir)).length, "temporary file removed");

    assertThrows(NoSuchFileException.class, () -> ufs.create(uri("no/parent"), false, 0));
    hdfs.fs().mkdirs(hpath("adir"));
    assertThrows(FileAlreadyExistsException.class, () -> ufs.create(uri("adir"), true, 0));
  }

  @Test
  void mkdirsDeleteAndRenameFollowTheContract() throws Exception {
    ufs.mkdirs(uri("a/b/c"), true);
    assertTrue(ufs.getStatus(uri("a/b/c")).directory());
    ufs.mkdirs(uri("a/b/c"), true);
    assertThrows(FileAlreadyExistsException.class, () -> ufs.mkdirs(uri("a/b/c"), false));
    assertThrows(NoSuchFileException.class, () -> ufs.mkdirs(uri("x/y"), false));
    ufs.mkdirs(uri("a/single"), false);
    assertTrue(ufs.getStatus(uri("a/single")).directory());
    writeOutside("a/file", new byte[3]);
    assertThrows(FileAlreadyExistsException.class, () -> ufs.mkdirs(uri("a/file"), true));

    assertThrows(DirectoryNotEmptyException.class, () -> ufs.delete(uri("a"), false));
    ufs.delete(uri("a/single"), false);
    ufs.delete(uri("a/file"), false);
    assertFalse(ufs.exists(uri("a/file")));
    assertThrows(NoSuchFileException.class, () -> ufs.delete(uri("a/file"), false));
    ufs.delete(uri("a"), true);
    assertFalse(ufs.exists(uri("a")));

    writeOutside("src #1", "content".getBytes(UTF_8));
    writeOutside("taken", new byte[1]);
    assertThrows(FileAlreadyExistsException.class, () -> ufs.rename(uri("src #1"), uri("taken")));
    hdfs.fs().mkdirs(hpath("dir"));
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.rename(uri("src #1"), uri("dir")),
        "an existing directory is not a place to move into");
    assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("missing"), uri("other")));
    assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("src #1"), uri("no/dst")));
    ufs.rename(uri("src #1"), uri("dir/moved 100%"));
    assertFalse(ufs.exists(uri("src #1")));
    assertEquals("content", new String(readOutside("dir/moved 100%"), UTF_8));
    ufs.rename(uri("dir"), uri("renamed dir"));
    assertTrue(ufs.getStatus(uri("renamed dir/moved 100%")).length() > 0);
  }

  @Test
  void aFileReplacedBehindTheStoresBackIsReadFresh() throws Exception {
    byte[] v1 = new byte[4096];
    Arrays.fill(v1, (byte) 'a');
    writeOutside("data", v1);
    byte[] buf = new byte[4096];
    assertEquals(4096, ufs.read(uri("data"), 0, buf, 0, 4096));
    assertArrayEquals(v1, buf);

    // Same length, replaced by a rename over it: only the inode id and mtime change.
    byte[] v2 = new byte[4096];
    Arrays.fill(v2, (byte) 'b');
    writeOutside("staging", v2);
    hdfs.fs().rename(hpath("staging"), hpath("data"), Options.Rename.OVERWRITE);
    assertEquals(4096, ufs.read(uri("data"), 0, buf, 0, 4096));
    assertArrayEquals(v2, buf);

    // Appended in place: same inode, longer.
    try (FSDataOutputStream out = hdfs.fs().append(hpath("data"))) {
      out.write("tail".getBytes(UTF_8));
    }
    byte[] tail = new byte[10];
    assertEquals(4, ufs.read(uri("data"), 4096, tail, 0, 10));
    assertEquals("tail", new String(tail, 0, 4, UTF_8));

    // Deleted and written again with the same bytes.
    hdfs.fs().delete(hpath("data"), false);
    assertThrows(NoSuchFileException.class, () -> ufs.read(uri("data"), 0, buf, 0, 1));
    byte[] v3 = new byte[4096];
    Arrays.fill(v3, (byte) 'c');
    writeOutside("data", v3);
    assertEquals(4096, ufs.read(uri("data"), 0, buf, 0, 4096));
    assertArrayEquals(v3, buf);
  }

  @Test
  void readsShareOneCachedStreamUntilTheFileChanges() throws Exception {
    writeOutside("cached", bytes(1000, 5));
    Path path = ufs.toPath(uri("cached"));
    FileStatus before = hdfs.fs().getFileStatus(path);
    InputStreamCache.OpenFile first = ufs.streams().open(path, before);
    assertSame(first, ufs.streams().open(path, before));
    assertEquals(10, ufs.read(uri("cached"), 0, new byte[10], 0, 10));
    assertSame(first, ufs.streams().open(path, before), "a read reuses the cached stream");

    writeOutside("cached", bytes(1000, 6));
    FileStatus after = hdfs.fs().getFileStatus(path);
    InputStreamCache.OpenFile second = ufs.streams().open(path, after);
    assertNotSame(first, second, "a new version of the file gets a new stream");
    assertSame(second, ufs.streams().open(path, after));
    ufs.streams().discard(path, second);
    assertNotSame(second, ufs.streams().open(path, after), "a discarded stream is not reused");
  }

  @Test
  void safeModeFailsWritesWithUnavailableAndTheFix() throws Exception {
    writeOutside("readable", new byte[] {9});
    DistributedFileSystem admin = hdfs.fs();
    admin.setSafeMode(SafeModeAction.ENTER);
    try {
      StrataException e =
          assertThrows(StrataException.class, () -> ufs.mkdirs(uri("blocked"), true));
      assertEquals(ErrorCode.UNAVAILABLE, e.code());
      assertTrue(
          e.getMessage()
              .startsWith(
                  "HDFS namenode "
                      + hdfs.namenode()
                      + " is in safe mode: wait for it to leave, or run `hdfs dfsadmin -safemode leave`"),
          e.getMessage());
      assertTrue(e.getMessage().contains(uri("blocked")), e.getMessage());
      assertEquals(
          ErrorCode.UNAVAILABLE,
          assertThrows(StrataException.class, () -> ufs.create(uri("new"), false, 0)).code());
      assertEquals(
          ErrorCode.UNAVAILABLE,
          assertThrows(StrataException.class, () -> ufs.delete(uri("readable"), false)).code());
      byte[] one = new byte[1];
      assertEquals(1, ufs.read(uri("readable"), 0, one, 0, 1), "reads go on in safe mode");
    } finally {
      admin.setSafeMode(SafeModeAction.LEAVE);
    }
    ufs.mkdirs(uri("blocked"), true);
  }

  @Test
  void permissionDeniedNamesTheUserAndThePath() throws Exception {
    writeOutside("private/secret", new byte[] {1});
    hdfs.fs().setPermission(hpath("private"), new FsPermission((short) 0700));
    try (UnderStores stores = new UnderStores()) {
      UnderFileSystem other =
          stores.get(hdfs.uri("/"), Map.of(HdfsOptions.USER, MiniHdfs.OTHER_USER));
      StrataException e =
          assertThrows(
              StrataException.class, () -> other.read(uri("private/secret"), 0, new byte[1], 0, 1));
      assertEquals(ErrorCode.PERMISSION_DENIED, e.code());
      assertTrue(e.getMessage().contains("'" + MiniHdfs.OTHER_USER + "'"), e.getMessage());
      assertTrue(e.getMessage().contains(uri("private/secret")), e.getMessage());
      assertEquals(
          ErrorCode.PERMISSION_DENIED,
          assertThrows(StrataException.class, () -> other.create(uri("private/mine"), false, 0))
              .code());
      // The store acting as the process user, the superuser here, reads it.
      assertEquals(1, ufs.read(uri("private/secret"), 0, new byte[1], 0, 1));
    }
  }

  /**
   * Runs {@code body} with Hadoop's symbolic links enabled or not in this JVM, client and namenode
   * alike (one static flag, which MiniDFSCluster turns on as it starts; outside tests Hadoop keeps
   * it off), and puts the flag back afterwards. Hadoop can only enable them, so the flag is set
   * directly.
   */
  static void withSymlinks(boolean enable, ThrowingBody body) throws Exception {
    java.lang.reflect.Field enabled = FileSystem.class.getDeclaredField("symlinksEnabled");
    enabled.setAccessible(true);
    boolean before = FileSystem.areSymlinksEnabled();
    if (enable) {
      FileSystem.enableSymlinks();
    } else {
      enabled.setBoolean(null, false);
    }
    try {
      body.run();
    } finally {
      enabled.setBoolean(null, before);
    }
  }

  interface ThrowingBody {
    void run() throws Exception;
  }

  @Test
  void aSymlinkIsRefusedWhereTheClusterDoesNotAllowThem() throws Exception {
    writeOutside("f", new byte[3]);
    UnsupportedOperationException[] thrown = new UnsupportedOperationException[1];
    withSymlinks(
        false,
        () ->
            thrown[0] =
                assertThrows(
                    UnsupportedOperationException.class,
                    () -> ufs.createSymlink(uri("link"), "f")));
    UnsupportedOperationException refused = thrown[0];
    assertTrue(refused.getMessage().contains("does not allow them"), refused.getMessage());
    assertTrue(refused.getMessage().contains("in its namespace only"), refused.getMessage());
    assertTrue(refused.getMessage().contains(uri("link")), refused.getMessage());
    assertFalse(ufs.exists(uri("link")));
    assertEquals(List.of("f"), new ArrayList<>(list("").keySet()));
  }

  @Test
  void withSymlinksAllowedLinksRoundTripAsLinksWithTheirTargetText() throws Exception {
    writeOutside("dir/f", "content".getBytes(UTF_8));
    withSymlinks(
        true,
        () -> {
          ufs.createSymlink(uri("relative"), "dir/f");
          ufs.createSymlink(uri("absolute"), dir + "/dir");
          ufs.createSymlink(uri("dangling"), "../nowhere/ünïcödé");

          Map<String, UfsStatus> listed = list("");
          assertEquals(
              List.of("absolute", "dangling", "dir", "relative"),
              new ArrayList<>(listed.keySet()),
              "a dangling link is listed");
          for (String[] link :
              new String[][] {
                {"relative", "dir/f"},
                {"absolute", dir + "/dir"},
                {"dangling", "../nowhere/ünïcödé"}
              }) {
            for (UfsStatus s : List.of(ufs.getStatus(uri(link[0])), listed.get(link[0]))) {
              assertEquals(link[0], s.name());
              assertEquals(UfsFileType.SYMLINK, s.type(), link[0]);
              assertFalse(s.directory());
              assertEquals(link[1], s.symlinkTarget(), "the target as given, not qualified");
              assertEquals(link[1].getBytes(UTF_8).length, s.length());
              assertEquals("link:" + link[1], s.fingerprint());
            }
          }
          assertTrue(ufs.exists(uri("dangling")), "a dangling link exists");
          assertEquals(UfsFileType.DIRECTORY, listed.get("dir").type());

          UfsStatus followed = ufs.getTargetStatus(uri("relative"));
          assertEquals("relative", followed.name());
          assertEquals(UfsFileType.REGULAR, followed.type());
          assertEquals(7, followed.length());
          assertTrue(ufs.getTargetStatus(uri("absolute")).directory());
          assertThrows(NoSuchFileException.class, () -> ufs.getTargetStatus(uri("dangling")));

          assertEquals(
              uri("dangling"),
              assertThrows(
                      FileAlreadyExistsException.class,
                      () -> ufs.createSymlink(uri("dangling"), "elsewhere"))
                  .getFile());
          assertEquals(
              hdfs.uri(dir + "/missing"),
              assertThrows(
                      NoSuchFileException.class, () -> ufs.createSymlink(uri("missing/link"), "x"))
                  .getFile());

          ufs.delete(uri("absolute"), true);
          assertFalse(ufs.exists(uri("absolute")));
          assertEquals(
              "content",
              new String(readOutside("dir/f"), UTF_8),
              "deleting a link leaves what it leads to");
        });
  }

  @Test
  void renameWithReplaceOverwritesAFileOrAnEmptyDirectoryOnly() throws Exception {
    writeOutside("new", "new".getBytes(UTF_8));
    writeOutside("old", "old".getBytes(UTF_8));
    ufs.rename(uri("new"), uri("old"), true);
    assertEquals("new", new String(readOutside("old"), UTF_8));
    assertFalse(ufs.exists(uri("new")));

    writeOutside("src/inner", new byte[1]);
    hdfs.fs().mkdirs(hpath("empty"));
    ufs.rename(uri("src"), uri("empty"), true);
    assertEquals(1, readOutside("empty/inner").length, "a directory over an empty one");

    hdfs.fs().mkdirs(hpath("other"));
    assertEquals(
        uri("empty"),
        assertThrows(
                DirectoryNotEmptyException.class,
                () -> ufs.rename(uri("other"), uri("empty"), true))
            .getFile());
    FileSystemException fileOverDir =
        assertThrows(FileSystemException.class, () -> ufs.rename(uri("old"), uri("other"), true));
    assertTrue(
        fileOverDir.getMessage().contains("only a directory can replace a directory"),
        fileOverDir.getMessage());
    FileSystemException dirOverFile =
        assertThrows(FileSystemException.class, () -> ufs.rename(uri("other"), uri("old"), true));
    assertTrue(
        dirOverFile.getMessage().contains("a directory cannot replace"), dirOverFile.getMessage());
    assertEquals("new", new String(readOutside("old"), UTF_8), "nothing changed");

    ufs.rename(uri("old"), uri("fresh"), true);
    assertEquals(
        uri("gone"),
        assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("gone"), uri("fresh"), true))
            .getFile());
    assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("fresh"), uri("missing/x"), true));
    assertThrows(
        FileAlreadyExistsException.class,
        () -> ufs.rename(uri("fresh"), uri("empty/inner"), false),
        "without replace");
    assertEquals(List.of("empty", "fresh", "other"), new ArrayList<>(list("").keySet()));
  }

  @Test
  void hardLinksAndSpecialFilesAreNotHeld() throws Exception {
    writeOutside("f", new byte[1]);
    assertEquals(
        "hdfs stores cannot hold hard links",
        assertThrows(
                UnsupportedOperationException.class, () -> ufs.createHardLink(uri("f"), uri("g")))
            .getMessage());
    assertThrows(UnsupportedOperationException.class, () -> ufs.relink(uri("f"), uri("g")));
    assertEquals(
        "hdfs stores cannot hold FIFOs",
        assertThrows(
                UnsupportedOperationException.class,
                () -> ufs.createSpecialFile(uri("p"), UfsFileType.FIFO, 0600, 0))
            .getMessage());
    assertEquals(
        "hdfs stores cannot hold character devices",
        assertThrows(
                UnsupportedOperationException.class,
                () -> ufs.createSpecialFile(uri("p"), UfsFileType.CHAR_DEVICE, 0600, 0x103))
            .getMessage());
    assertEquals(List.of("f"), new ArrayList<>(list("").keySet()));
  }
}
