package io.strata.underfs.s3;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.underfs.UfsFileType;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem.CloseableIterator;
import io.strata.underfs.UnderStores;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.S3Object;

class S3UnderFileSystemTest {
  static final String BUCKET = "meta";

  @TempDir static Path data;
  static S3TestServer server;
  static S3UnderFileSystem ufs;

  @BeforeAll
  static void start() throws Exception {
    server = new S3TestServer(data);
    server.createBucket(BUCKET);
    ufs =
        (S3UnderFileSystem)
            new S3UnderFileSystemProvider().open("s3://" + BUCKET, server.options());
  }

  @AfterAll
  static void stop() throws Exception {
    ufs.close();
    server.close();
  }

  static String uri(String key) {
    return "s3://" + BUCKET + "/" + key;
  }

  static void put(String key, String content) {
    server.raw().putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromString(content));
  }

  /** Every key in the bucket under a prefix, as S3 itself has them. */
  static List<String> keysUnder(String prefix) {
    List<String> keys = new ArrayList<>();
    server
        .raw()
        .listObjectsV2Paginator(b -> b.bucket(BUCKET).prefix(prefix))
        .contents()
        .forEach((S3Object o) -> keys.add(o.key()));
    return keys;
  }

  static Map<String, Boolean> children(String uri) throws Exception {
    Map<String, Boolean> names = new TreeMap<>();
    try (CloseableIterator<UfsStatus> it = ufs.list(uri)) {
      while (it.hasNext()) {
        UfsStatus s = it.next();
        assertEquals(null, names.put(s.name(), s.directory()), "listed twice: " + s.name());
      }
    }
    return names;
  }

  @Test
  void statusTellsFilesMarkedDirectoriesAndImplicitDirectoriesApart() throws Exception {
    put("st/file a#1%.txt", "hello");
    put("st/marked/", "");
    put("st/implicit/deep/x", "x");

    UfsStatus file = ufs.getStatus(uri("st/file a#1%.txt"));
    assertEquals("file a#1%.txt", file.name());
    assertFalse(file.directory());
    assertEquals(5, file.length());
    assertEquals(0644, file.mode());
    assertEquals("", file.owner());
    assertEquals("", file.group());
    assertTrue(file.modificationTimeMs() > 0);
    String etag = server.raw().headObject(b -> b.bucket(BUCKET).key("st/file a#1%.txt")).eTag();
    assertEquals(etag.replace("\"", ""), file.fingerprint());

    UfsStatus marked = ufs.getStatus(uri("st/marked"));
    assertTrue(marked.directory());
    assertEquals("marked", marked.name());
    assertEquals(0755, marked.mode());
    assertTrue(marked.modificationTimeMs() > 0, "a marker gives the directory a time");
    assertTrue(ufs.getStatus(uri("st/marked/")).directory(), "a trailing slash is the same");
    assertTrue(ufs.getStatus(uri("st/implicit")).directory());
    assertTrue(ufs.getStatus(uri("st/implicit/deep")).directory());
    assertTrue(ufs.getStatus(uri("st")).directory(), "a prefix is a directory");
    assertTrue(ufs.getStatus("s3://" + BUCKET).directory(), "the bucket root is a directory");
    assertTrue(ufs.getStatus("s3://" + BUCKET + "/").directory());

    NoSuchFileException missing =
        assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri("st/none")));
    assertEquals(uri("st/none"), missing.getFile());
    assertThrows(
        NoSuchFileException.class,
        () -> ufs.getStatus(uri("st/file a")),
        "a key prefix that is not followed by '/' is nothing");
    assertTrue(ufs.exists(uri("st/implicit")));
    assertFalse(ufs.exists(uri("st/none")));

    put("st/file a#1%.txt", "hello, changed");
    assertNotEquals(file.fingerprint(), ufs.getStatus(uri("st/file a#1%.txt")).fingerprint());
  }

  @Test
  void aPrefixOfTwoThousandFiveHundredKeysListsEachKeyOnceAndDeletesInBatches() throws Exception {
    int count = 2_500;
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> puts = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String key = String.format("many/key-%05d", i);
        puts.add(pool.submit(() -> put(key, "")));
      }
      for (Future<?> f : puts) {
        f.get();
      }
    } finally {
      pool.shutdown();
    }
    Set<String> names = new HashSet<>();
    int listed = 0;
    int pages;
    try (S3ListingIterator it = (S3ListingIterator) ufs.list(uri("many"))) {
      while (it.hasNext()) {
        UfsStatus s = it.next();
        assertFalse(s.directory());
        names.add(s.name());
        listed++;
      }
      pages = it.pagesFetched();
    }
    assertEquals(count, listed, "every key once");
    assertEquals(count, names.size());
    assertTrue(names.contains("key-00000") && names.contains("key-02499"));
    assertEquals(3, pages, "fetched in pages of 1,000");

    ufs.delete(uri("many"), true);
    assertEquals(List.of(), keysUnder("many/"));
    assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri("many")));
  }

  @Test
  void listingShowsFilesAndDirectoriesOneLevelDeep() throws Exception {
    put("nest/", "");
    put("nest/a", "a");
    put("nest/b/c", "c");
    put("nest/b/d/e", "e");
    put("nest/m/", "");
    assertEquals(Map.of("a", false, "b", true, "m", true), children(uri("nest")));
    assertEquals(Map.of("c", false, "d", true), children(uri("nest/b")));
    assertEquals(Map.of(), children(uri("nest/m")), "a marker alone is an empty directory");
    assertEquals(Map.of("e", false), children(uri("nest/b/d/")));
    assertTrue(children("s3://" + BUCKET).get("nest"), "the bucket root lists its prefixes");
    assertThrows(NotDirectoryException.class, () -> ufs.list(uri("nest/a")));
    assertThrows(NoSuchFileException.class, () -> ufs.list(uri("nest/none")));
  }

  @Test
  void mkdirsWritesMarkersForTheDirectoryAndItsMissingParents() throws Exception {
    ufs.mkdirs(uri("mk/a/b"), true);
    assertEquals(List.of("mk/", "mk/a/", "mk/a/b/"), keysUnder("mk"));
    ufs.mkdirs(uri("mk/a/b"), true);
    assertThrows(FileAlreadyExistsException.class, () -> ufs.mkdirs(uri("mk/a/b"), false));
    assertThrows(NoSuchFileException.class, () -> ufs.mkdirs(uri("mk/none/c"), false));
    ufs.mkdirs(uri("mk/a/b/c"), false);
    assertTrue(ufs.getStatus(uri("mk/a/b/c")).directory());

    ufs.delete(uri("mk/a/b/c"), false);
    assertTrue(ufs.getStatus(uri("mk/a/b")).directory(), "the parent outlives its child");

    put("mk/file", "f");
    assertThrows(FileAlreadyExistsException.class, () -> ufs.mkdirs(uri("mk/file"), true));
    ufs.mkdirs("s3://" + BUCKET, true);
  }

  @Test
  void deleteRemovesFilesAndEmptyDirectoriesAndRecursesOnlyWhenAsked() throws Exception {
    put("del/f", "f");
    ufs.delete(uri("del/f"), false);
    assertThrows(NoSuchFileException.class, () -> ufs.getStatus(uri("del/f")));

    put("del/dir/", "");
    put("del/dir/x", "x");
    put("del/dir/sub/y", "y");
    assertThrows(DirectoryNotEmptyException.class, () -> ufs.delete(uri("del/dir"), false));
    assertEquals(3, keysUnder("del/dir/").size(), "nothing deleted");
    ufs.delete(uri("del/dir"), true);
    assertEquals(List.of(), keysUnder("del/dir"));

    assertThrows(
        NoSuchFileException.class,
        () -> ufs.mkdirs(uri("del/empty"), false),
        "the last key under del/ is gone, and del/ with it");
    ufs.mkdirs(uri("del/empty"), true);
    ufs.delete(uri("del/empty"), false);
    assertFalse(ufs.exists(uri("del/empty")));
    assertTrue(ufs.exists(uri("del")), "the parent's marker stays");
    assertThrows(NoSuchFileException.class, () -> ufs.delete(uri("del/none"), true));
    assertThrows(NoSuchFileException.class, () -> ufs.delete(uri("del/none"), false));
  }

  @Test
  void renameMovesAFileAndRefusesAnExistingTarget() throws Exception {
    put("mv/src file", "content");
    put("mv/taken", "t");
    ufs.rename(uri("mv/src file"), uri("mv/dst #1"));
    assertFalse(ufs.exists(uri("mv/src file")));
    assertEquals(
        "content",
        server.raw().getObjectAsBytes(b -> b.bucket(BUCKET).key("mv/dst #1")).asUtf8String());
    assertThrows(
        FileAlreadyExistsException.class, () -> ufs.rename(uri("mv/dst #1"), uri("mv/taken")));
    assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("mv/none"), uri("mv/n2")));
  }

  @Test
  void renameMovesADirectoryKeyByKey() throws Exception {
    put("mvd/a/", "");
    put("mvd/a/x", "x");
    put("mvd/a/sub/", "");
    put("mvd/a/sub/y", "y");
    put("mvd/b/", "");
    ufs.rename(uri("mvd/a"), uri("mvd/c"));
    assertEquals(
        List.of("mvd/b/", "mvd/c/", "mvd/c/sub/", "mvd/c/sub/y", "mvd/c/x"), keysUnder("mvd/"));
    assertEquals(Map.of("x", false, "sub", true), children(uri("mvd/c")));
    assertThrows(FileAlreadyExistsException.class, () -> ufs.rename(uri("mvd/c"), uri("mvd/b")));
  }

  /** S3 has the interface's defaults: replacing deletes the target first; no links. */
  @Test
  void renameWithReplaceDeletesTheTargetFirstAndNoOtherKindsAreHeld() throws Exception {
    put("rp/new", "new");
    put("rp/old", "old");
    ufs.rename(uri("rp/new"), uri("rp/old"), true);
    assertEquals(
        "new", server.raw().getObjectAsBytes(b -> b.bucket(BUCKET).key("rp/old")).asUtf8String());
    put("rp/a/x", "x");
    put("rp/empty/", "");
    ufs.rename(uri("rp/a"), uri("rp/empty"), true);
    assertEquals(List.of("rp/empty/x", "rp/old"), keysUnder("rp/"));
    put("rp/full/y", "y");
    put("rp/b/z", "z");
    assertThrows(
        DirectoryNotEmptyException.class, () -> ufs.rename(uri("rp/b"), uri("rp/full"), true));
    assertTrue(
        assertThrows(
                FileSystemException.class, () -> ufs.rename(uri("rp/old"), uri("rp/full"), true))
            .getMessage()
            .contains("only a directory can replace a directory"));
    assertEquals(
        List.of("rp/b/z", "rp/empty/x", "rp/full/y", "rp/old"),
        keysUnder("rp/"),
        "nothing changed by the refusals");
    assertThrows(NoSuchFileException.class, () -> ufs.rename(uri("rp/none"), uri("rp/old"), true));

    assertEquals(
        "s3 stores cannot hold symbolic links",
        assertThrows(
                UnsupportedOperationException.class, () -> ufs.createSymlink(uri("rp/link"), "old"))
            .getMessage());
    assertEquals(
        "s3 stores cannot hold hard links",
        assertThrows(
                UnsupportedOperationException.class,
                () -> ufs.createHardLink(uri("rp/old"), uri("rp/link")))
            .getMessage());
    assertEquals(
        "s3 stores cannot hold sockets",
        assertThrows(
                UnsupportedOperationException.class,
                () -> ufs.createSpecialFile(uri("rp/s"), UfsFileType.SOCKET, 0600, 0))
            .getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> ufs.createSpecialFile(uri("rp/s"), UfsFileType.REGULAR, 0600, 0));
    assertEquals(ufs.getStatus(uri("rp/old")), ufs.getTargetStatus(uri("rp/old")));
    assertEquals(UfsFileType.REGULAR, ufs.getStatus(uri("rp/old")).type());
    assertEquals(UfsFileType.DIRECTORY, ufs.getStatus(uri("rp/full")).type());
  }

  @Test
  void renameCopiesObjectsAboveTheSingleCopyLimitInParts() throws Exception {
    byte[] content = S3ReadWriteTest.randomBytes(12 * (1 << 20) + 5, 7);
    server.raw().putObject(b -> b.bucket(BUCKET).key("big/src"), RequestBody.fromBytes(content));
    S3Options options = S3Options.parse(server.options(S3Options.PART_SIZE, "5MB"));
    try (S3UnderFileSystem small =
        S3UnderFileSystemProvider.openStore(
            S3Location.parse("s3://" + BUCKET), options, 5L << 20)) {
      small.rename(uri("big/src"), uri("big/dst"));
    }
    assertArrayEquals(
        content, server.raw().getObjectAsBytes(b -> b.bucket(BUCKET).key("big/dst")).asByteArray());
    assertEquals(List.of("big/dst"), keysUnder("big/"));
    String etag = ufs.getStatus(uri("big/dst")).fingerprint();
    assertTrue(etag.endsWith("-3"), "assembled from three copied parts: " + etag);
  }

  @Test
  void underStoresOpensS3BySchemeAndSharesOneStorePerBucketAndOptions() throws Exception {
    try (UnderStores stores = new UnderStores()) {
      var a = stores.get("s3://" + BUCKET + "/one", server.options());
      var b = stores.get("s3://" + BUCKET + "/two", server.options());
      assertTrue(a instanceof S3UnderFileSystem);
      assertSame(a, b);
      assertEquals("s3", a.scheme());
      assertTrue(a.getStatus("s3://" + BUCKET).directory());
    }
  }
}
