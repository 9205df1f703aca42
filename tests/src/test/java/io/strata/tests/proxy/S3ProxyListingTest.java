package io.strata.tests.proxy;

import static io.strata.tests.proxy.S3ProxyTestCluster.assertS3Error;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.strata.client.CloseableIterator;
import io.strata.proto.FileInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.ListObjectVersionsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.ObjectVersion;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * ListObjects and ListObjectsV2 through the S3 proxy with the AWS SDK, checked against a model of
 * S3's listing (keys in UTF-8 byte order, rolled up at the delimiter after the prefix, resumed
 * after a marker) and against the namespace's own listings; paging reaches every key exactly once,
 * at every page size.
 */
class S3ProxyListingTest {
  private static final String BUCKET = "listing";

  /** The keys of {@link #BUCKET}; "empty/" is a folder made in the namespace, not through S3. */
  private static final List<String> KEYS =
      List.of(
          "a-b",
          "a.txt",
          "a/",
          "a/x",
          "a/y/z",
          "a/y-1",
          "a0",
          "b-c-d",
          "b-c/e",
          "b-c/f-g",
          "b.c",
          "c d",
          "c+d",
          "c%d",
          "c&d=e",
          "dir/",
          "dir2/",
          "dir2/f",
          "deep/1/2/3/leaf",
          "deep/1/x",
          "ü",
          "日本",
          "～",
          "😀",
          "z-/a",
          "empty/");

  @TempDir static Path dir;
  static S3ProxyTestCluster cluster;
  static S3Client s3;

  @BeforeAll
  static void start() throws Exception {
    cluster = S3ProxyTestCluster.shared();
    s3 = cluster.client();
    s3.createBucket(b -> b.bucket(BUCKET));
    for (String k : KEYS) {
      if (k.equals("empty/")) {
        cluster.fs().createDirectory("/" + BUCKET + "/empty", false, false);
      } else {
        s3.putObject(
            b -> b.bucket(BUCKET).key(k), RequestBody.fromString(k.endsWith("/") ? "" : k));
      }
    }
  }

  @AfterAll
  static void stop() {
    if (s3 != null) {
      s3.close();
    }
  }

  static int utf8Compare(String a, String b) {
    return Arrays.compareUnsigned(
        a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
  }

  /** An entry of a listing: a key, or a common prefix. */
  record Entry(String name, boolean prefix) {
    @Override
    public String toString() {
      return prefix ? name + " (prefix)" : name;
    }
  }

  /** S3's answer, all pages together: keys after {@code after}, rolled up at the delimiter. */
  static List<Entry> model(List<String> keys, String prefix, String delimiter, String after) {
    List<String> sorted = new ArrayList<>(keys);
    sorted.sort(S3ProxyListingTest::utf8Compare);
    List<Entry> out = new ArrayList<>();
    for (String k : sorted) {
      if (!k.startsWith(prefix)) {
        continue;
      }
      int at = delimiter.isEmpty() ? -1 : k.indexOf(delimiter, prefix.length());
      if (at >= 0) {
        String cp = k.substring(0, at + delimiter.length());
        // A marker inside a common prefix has passed all of it.
        if (utf8Compare(cp, after) <= 0 || after.startsWith(cp)) {
          continue;
        }
        if (out.isEmpty() || !out.get(out.size() - 1).name().equals(cp)) {
          out.add(new Entry(cp, true));
        }
      } else if (utf8Compare(k, after) > 0) {
        out.add(new Entry(k, false));
      }
    }
    return out;
  }

  /** One page's entries in S3 order. */
  static List<Entry> page(List<S3Object> contents, List<CommonPrefix> prefixes) {
    List<Entry> out = new ArrayList<>();
    contents.forEach(o -> out.add(new Entry(o.key(), false)));
    prefixes.forEach(p -> out.add(new Entry(p.prefix(), true)));
    out.sort((a, b) -> utf8Compare(a.name(), b.name()));
    return out;
  }

  /** Every page of ListObjects (v1), following NextMarker or the last key. */
  static List<Entry> listV1(
      S3Client c,
      String bucket,
      String prefix,
      String delimiter,
      int maxKeys,
      String marker,
      String encoding) {
    List<Entry> all = new ArrayList<>();
    String next = marker;
    for (int pages = 0; ; pages++) {
      assertTrue(pages < 100_000, "paging does not end");
      String m = next;
      ListObjectsResponse r =
          c.listObjects(
              b ->
                  b.bucket(bucket)
                      .prefix(prefix)
                      .delimiter(delimiter.isEmpty() ? null : delimiter)
                      .maxKeys(maxKeys)
                      .marker(m.isEmpty() ? null : m)
                      .encodingType(encoding));
      List<Entry> page = page(r.contents(), r.commonPrefixes());
      String what =
          "v1 prefix '"
              + prefix
              + "' delimiter '"
              + delimiter
              + "' max "
              + maxKeys
              + " marker '"
              + m
              + "'";
      assertTrue(page.size() <= maxKeys, what);
      assertEquals(maxKeys, r.maxKeys(), what);
      assertEquals(m, r.marker() == null ? "" : r.marker(), what);
      all.addAll(page);
      if (!r.isTruncated()) {
        assertNull(r.nextMarker(), what);
        return all;
      }
      assertFalse(page.isEmpty(), what);
      String last = page.get(page.size() - 1).name();
      if (delimiter.isEmpty()) {
        // S3 sends NextMarker only with a delimiter; the last key is the marker.
        assertNull(r.nextMarker(), what);
        next = last;
      } else {
        assertEquals(last, r.nextMarker(), what);
        next = r.nextMarker();
      }
    }
  }

  /** Every page of ListObjectsV2, following the continuation token. */
  static List<Entry> listV2(
      S3Client c,
      String bucket,
      String prefix,
      String delimiter,
      int maxKeys,
      String startAfter,
      boolean fetchOwner) {
    List<Entry> all = new ArrayList<>();
    String token = null;
    for (int pages = 0; ; pages++) {
      assertTrue(pages < 100_000, "paging does not end");
      String t = token;
      ListObjectsV2Response r =
          c.listObjectsV2(
              b ->
                  b.bucket(bucket)
                      .prefix(prefix)
                      .delimiter(delimiter.isEmpty() ? null : delimiter)
                      .maxKeys(maxKeys)
                      .startAfter(startAfter.isEmpty() ? null : startAfter)
                      .continuationToken(t)
                      .fetchOwner(fetchOwner));
      List<Entry> page = page(r.contents(), r.commonPrefixes());
      String what =
          "v2 prefix '"
              + prefix
              + "' delimiter '"
              + delimiter
              + "' max "
              + maxKeys
              + " start-after '"
              + startAfter
              + "' token "
              + t;
      assertTrue(page.size() <= maxKeys, what);
      assertEquals(page.size(), r.keyCount(), what);
      assertEquals(maxKeys, r.maxKeys(), what);
      assertEquals(t, r.continuationToken(), what);
      assertEquals(startAfter.isEmpty() ? null : startAfter, r.startAfter(), what);
      for (S3Object o : r.contents()) {
        if (fetchOwner) {
          assertNotNull(o.owner(), what);
          assertEquals(System.getProperty("user.name"), o.owner().id(), what);
        } else {
          assertNull(o.owner(), what);
        }
      }
      all.addAll(page);
      if (!r.isTruncated()) {
        assertNull(r.nextContinuationToken(), what);
        return all;
      }
      assertFalse(page.isEmpty(), what);
      assertNotNull(r.nextContinuationToken(), what);
      token = r.nextContinuationToken();
    }
  }

  static void assertOncePerEntry(List<Entry> listed, String what) {
    Set<Entry> seen = new HashSet<>();
    for (Entry e : listed) {
      assertTrue(seen.add(e), what + ": " + e + " listed twice");
    }
  }

  @Test
  void keysAreListedInUtf8ByteOrder() {
    List<String> listed =
        s3.listObjectsV2(b -> b.bucket(BUCKET)).contents().stream().map(S3Object::key).toList();
    List<String> expected = KEYS.stream().sorted(S3ProxyListingTest::utf8Compare).toList();
    assertEquals(expected, listed);
    // The order S3 documents for these: '-' and '.' sort before '/', which sorts before '0'.
    List<String> some =
        listed.stream().filter(k -> List.of("a-b", "a.txt", "a/x", "a0").contains(k)).toList();
    assertEquals(List.of("a-b", "a.txt", "a/x", "a0"), some);
    // And by code point beyond the BMP: U+FF5E before U+1F600, unlike Java's UTF-16 order.
    assertTrue(listed.indexOf("～") < listed.indexOf("😀"), listed::toString);
  }

  @Test
  void everyPageSizePrefixAndDelimiterListsEveryKeyOnceInOrder() {
    List<String> keys = KEYS;
    int listings = 0;
    // "/" and "a//" match no key: a key never starts with '/' or holds "//".
    for (String prefix :
        List.of("", "a", "a/", "b-c", "dir2/", "deep/", "c", "nope", "/", "a//", "/a/")) {
      // Delimiters of one character below, at and above '/', and of two.
      for (String delimiter : List.of("", "/", "-", ".", "/y", "1/")) {
        List<Entry> expected = model(keys, prefix, delimiter, "");
        // Pages of one key are the slowest: for none and '/' only.
        int[] sizes =
            delimiter.isEmpty() || delimiter.equals("/")
                ? new int[] {1, 2, 1000}
                : new int[] {2, 1000};
        for (int maxKeys : sizes) {
          String what = "prefix '" + prefix + "' delimiter '" + delimiter + "' max " + maxKeys;
          List<Entry> v1 = listV1(s3, BUCKET, prefix, delimiter, maxKeys, "", null);
          assertEquals(expected, v1, "v1 " + what);
          assertOncePerEntry(v1, what);
          List<Entry> v2 = listV2(s3, BUCKET, prefix, delimiter, maxKeys, "", maxKeys == 2);
          assertEquals(expected, v2, "v2 " + what);
          listings += 2;
        }
      }
    }
    assertEquals(11 * (2 * 3 + 4 * 2) * 2, listings);
  }

  @Test
  void listingsResumeAfterAMarkerOrStartAfter() {
    List<String> keys = KEYS;
    for (String after :
        List.of("a.txt", "a/", "a/y", "b", "b-c/", "c d", "dir2/f", "zzz", "a/y/z")) {
      for (String delimiter : List.of("", "/", "-")) {
        for (int maxKeys : new int[] {2, 1000}) {
          String what = "after '" + after + "' delimiter '" + delimiter + "' max " + maxKeys;
          List<Entry> expected = model(keys, "", delimiter, after);
          assertEquals(
              expected, listV1(s3, BUCKET, "", delimiter, maxKeys, after, null), "v1 " + what);
          assertEquals(
              expected, listV2(s3, BUCKET, "", delimiter, maxKeys, after, false), "v2 " + what);
        }
      }
    }
  }

  /**
   * ListObjectVersions in a bucket whose versioning was never enabled: every key once, as its
   * latest version {@code null}, in the order and with the roll-up of ListObjects, paged by key
   * marker at every page size.
   */
  @Test
  void versionListingsNameEveryKeyOnceAsItsLatestNullVersion() {
    for (String prefix : List.of("", "a", "deep/")) {
      for (String delimiter : List.of("", "/")) {
        for (int maxKeys : new int[] {1, 3, 1000}) {
          String what = "prefix '" + prefix + "' delimiter '" + delimiter + "' max " + maxKeys;
          List<Entry> all = new ArrayList<>();
          String keyMarker = null;
          String versionMarker = null;
          for (int pages = 0; ; pages++) {
            assertTrue(pages < 1000, "paging does not end: " + what);
            String km = keyMarker;
            String vm = versionMarker;
            ListObjectVersionsResponse r =
                s3.listObjectVersions(
                    b ->
                        b.bucket(BUCKET)
                            .prefix(prefix)
                            .delimiter(delimiter.isEmpty() ? null : delimiter)
                            .maxKeys(maxKeys)
                            .keyMarker(km)
                            .versionIdMarker(vm));
            assertTrue(r.versions().size() + r.commonPrefixes().size() <= maxKeys, what);
            assertEquals(List.of(), r.deleteMarkers(), what);
            for (ObjectVersion v : r.versions()) {
              assertEquals("null", v.versionId(), what);
              assertTrue(v.isLatest(), what);
              assertNotNull(v.eTag(), what);
            }
            List<Entry> page = new ArrayList<>();
            r.versions().forEach(v -> page.add(new Entry(v.key(), false)));
            r.commonPrefixes().forEach(cp -> page.add(new Entry(cp.prefix(), true)));
            page.sort((x, y) -> utf8Compare(x.name(), y.name()));
            all.addAll(page);
            if (!r.isTruncated()) {
              break;
            }
            keyMarker = r.nextKeyMarker();
            versionMarker = r.nextVersionIdMarker();
            assertEquals("null", versionMarker, what);
          }
          assertEquals(model(KEYS, prefix, delimiter, ""), all, what);
        }
      }
    }
    // A version id other than null names nothing here, and a version marker needs a key marker.
    assertS3Error(
        "InvalidArgument",
        400,
        () -> s3.listObjectVersions(b -> b.bucket(BUCKET).keyMarker("a0").versionIdMarker("v1")));
    assertS3Error(
        "InvalidArgument",
        400,
        () -> s3.listObjectVersions(b -> b.bucket(BUCKET).versionIdMarker("null")));
  }

  /** How cleanup scripts and test harnesses empty a bucket: through its version listing. */
  @Test
  void aBucketIsEmptiedThroughItsVersionListing() {
    String bucket = "emptied-by-versions";
    s3.createBucket(b -> b.bucket(bucket));
    for (int i = 0; i < 5; i++) {
      String key = "k" + i + (i % 2 == 0 ? "" : "/nested");
      s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromString(key));
    }
    for (ListObjectVersionsResponse page :
        s3.listObjectVersionsPaginator(b -> b.bucket(bucket).maxKeys(2))) {
      if (page.versions().isEmpty()) {
        continue;
      }
      s3.deleteObjects(
          b ->
              b.bucket(bucket)
                  .delete(
                      d ->
                          d.objects(
                              page.versions().stream()
                                  .map(
                                      v ->
                                          ObjectIdentifier.builder()
                                              .key(v.key())
                                              .versionId(v.versionId())
                                              .build())
                                  .toList())));
    }
    assertEquals(List.of(), s3.listObjectVersions(b -> b.bucket(bucket)).versions());
    s3.deleteBucket(b -> b.bucket(bucket));
  }

  @Test
  void maxKeysZeroListsNothingAndIsNotTruncated() {
    ListObjectsV2Response v2 = s3.listObjectsV2(b -> b.bucket(BUCKET).maxKeys(0));
    assertEquals(0, v2.keyCount());
    assertFalse(v2.isTruncated());
    assertNull(v2.nextContinuationToken());
    assertTrue(v2.contents().isEmpty() && v2.commonPrefixes().isEmpty());
    ListObjectsResponse v1 = s3.listObjects(b -> b.bucket(BUCKET).maxKeys(0).delimiter("/"));
    assertFalse(v1.isTruncated());
    assertTrue(v1.contents().isEmpty() && v1.commonPrefixes().isEmpty());
    // Over 1000 is 1000, as in S3.
    assertEquals(1000, s3.listObjectsV2(b -> b.bucket(BUCKET).maxKeys(5000)).maxKeys());
    assertS3Error(
        "InvalidArgument", 400, () -> s3.listObjectsV2(b -> b.bucket(BUCKET).maxKeys(-1)));
    assertS3Error(
        "InvalidArgument",
        400,
        () -> s3.listObjectsV2(b -> b.bucket(BUCKET).continuationToken("not a token!")));
  }

  @Test
  void urlEncodingEncodesKeysAndPrefixes() throws Exception {
    // Through the SDK, which decodes what it asked to be encoded.
    List<Entry> expected = model(KEYS, "", "/", "");
    assertEquals(expected, listV1(s3, BUCKET, "", "/", 3, "", "url"));
    List<String> plain =
        s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("c")).contents().stream()
            .map(S3Object::key)
            .toList();
    assertEquals(List.of("c d", "c%d", "c&d=e", "c+d"), plain);
    assertEquals(
        plain,
        s3.listObjectsV2(b -> b.bucket(BUCKET).prefix("c").encodingType("url")).contents().stream()
            .map(S3Object::key)
            .toList());
    // As sent: every character a URL needs encoded is, and the answer says so.
    S3ProxyTestCluster.Response raw =
        cluster.signed(
            "GET",
            "/" + BUCKET + "?list-type=2&prefix=c&encoding-type=url",
            Map.of(),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertEquals(200, raw.status(), raw.text());
    String xml = raw.text();
    assertTrue(xml.contains("<EncodingType>url</EncodingType>"), xml);
    for (String encoded :
        List.of(
            "<Key>c%20d</Key>", "<Key>c%25d</Key>", "<Key>c%26d%3De</Key>", "<Key>c%2Bd</Key>")) {
      assertTrue(xml.contains(encoded), encoded + " in " + xml);
    }
    S3ProxyTestCluster.Response unicode =
        cluster.signed(
            "GET",
            "/" + BUCKET + "?list-type=2&delimiter=%2F&encoding-type=url&start-after=u",
            Map.of(),
            null,
            S3ProxyTestCluster.ACCESS_KEY,
            S3ProxyTestCluster.SECRET_KEY,
            Clock.systemUTC());
    assertTrue(unicode.text().contains("<Key>%C3%BC</Key>"), unicode.text());
    // S3 leaves '/' as it is.
    assertTrue(unicode.text().contains("<Prefix>z-/</Prefix>"), unicode.text());
  }

  @Test
  void listingsAgreeWithTheNamespace() throws Exception {
    // At every folder: its files are the keys and its folders the common prefixes of a
    // listing with the delimiter '/'; a folder marker is the key of the folder itself.
    List<String> folders = new ArrayList<>(List.of(""));
    for (int i = 0; i < folders.size(); i++) {
      String prefix = folders.get(i);
      String path =
          "/" + BUCKET + (prefix.isEmpty() ? "" : "/" + prefix.substring(0, prefix.length() - 1));
      TreeSet<String> files = new TreeSet<>();
      TreeSet<String> dirs = new TreeSet<>();
      try (CloseableIterator<FileInfo> it = cluster.fs().listStatus(path)) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          if (f.getDirectory()) {
            dirs.add(prefix + f.getName() + "/");
            folders.add(prefix + f.getName() + "/");
          } else {
            files.add(prefix + f.getName());
          }
        }
      }
      ListObjectsV2Response r =
          s3.listObjectsV2(b -> b.bucket(BUCKET).prefix(prefix).delimiter("/"));
      TreeSet<String> keys = new TreeSet<>();
      r.contents().forEach(o -> keys.add(o.key()));
      if (!prefix.isEmpty() && keys.remove(prefix)) {
        assertTrue(KEYS.contains(prefix), prefix + " is listed as a key of its own");
      }
      assertEquals(files, keys, "files of " + path);
      assertEquals(
          dirs,
          new TreeSet<>(r.commonPrefixes().stream().map(CommonPrefix::prefix).toList()),
          "folders of " + path);
    }
    assertEquals(12, folders.size(), folders::toString);
    // And the whole bucket: every file of the namespace is a key, nothing else is.
    List<String> files =
        cluster.namespaceKeys("/" + BUCKET).stream().filter(k -> !k.endsWith("/")).toList();
    List<String> listed =
        s3.listObjectsV2(b -> b.bucket(BUCKET)).contents().stream()
            .map(S3Object::key)
            .filter(k -> !k.endsWith("/"))
            .sorted()
            .toList();
    assertEquals(files, listed);
  }

  @Test
  void folderMarkersAreListedAndDeletable() throws Exception {
    String bucket = "markers";
    s3.createBucket(b -> b.bucket(bucket));
    s3.putObject(b -> b.bucket(bucket).key("lonely/"), RequestBody.empty());
    s3.putObject(b -> b.bucket(bucket).key("parent/"), RequestBody.empty());
    s3.putObject(b -> b.bucket(bucket).key("parent/child"), RequestBody.fromString("c"));
    assertTrue(Files.isDirectory(cluster.ufs("/" + bucket + "/lonely")));
    assertEquals(
        List.of("lonely/", "parent/", "parent/child"),
        s3.listObjectsV2(b -> b.bucket(bucket)).contents().stream().map(S3Object::key).toList());
    assertEquals(0L, s3.headObject(b -> b.bucket(bucket).key("lonely/")).contentLength());
    assertEquals(
        "\"d41d8cd98f00b204e9800998ecf8427e\"",
        s3.headObject(b -> b.bucket(bucket).key("parent/")).eTag());
    // A marker takes no bytes.
    assertS3Error(
        "InvalidRequest",
        400,
        () -> s3.putObject(b -> b.bucket(bucket).key("full/"), RequestBody.fromString("bytes")));

    s3.deleteObject(b -> b.bucket(bucket).key("lonely/"));
    assertFalse(Files.exists(cluster.ufs("/" + bucket + "/lonely")));
    assertFalse(cluster.fs().exists("/" + bucket + "/lonely"));
    // Deleting the marker of a folder with keys leaves the keys.
    s3.deleteObject(b -> b.bucket(bucket).key("parent/"));
    assertEquals(
        List.of("parent/child"),
        s3.listObjectsV2(b -> b.bucket(bucket)).contents().stream().map(S3Object::key).toList());
    assertS3Error(
        "NoSuchKey", 404, () -> s3.getObjectAsBytes(b -> b.bucket(bucket).key("parent/")));
    s3.deleteObject(b -> b.bucket(bucket).key("parent/child"));
    assertEquals(0, s3.listObjectsV2(b -> b.bucket(bucket)).keyCount());
    s3.deleteBucket(b -> b.bucket(bucket));
    assertFalse(Files.exists(cluster.ufs("/" + bucket)));
  }

  @Test
  void twentyThousandKeysUnderOnePrefixPageByThousand() throws Exception {
    String bucket = "big";
    s3.createBucket(b -> b.bucket(bucket));
    // Written straight into the under store: 19,700 files, 100 folders of one file each,
    // and beside each folder two files whose names sort around it ('-' and '.' before '/').
    Path root = cluster.ufs("/" + bucket + "/many");
    Files.createDirectories(root);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 19_700; i++) {
      String name = String.format("f%05d", i);
      Files.writeString(root.resolve(name), name);
      keys.add("many/" + name);
    }
    for (int i = 0; i < 100; i++) {
      String m = String.format("m%03d", i);
      Files.createDirectories(root.resolve(m));
      Files.writeString(root.resolve(m).resolve("in"), m);
      Files.writeString(root.resolve(m + "-a"), m);
      Files.writeString(root.resolve(m + ".b"), m);
      keys.addAll(List.of("many/" + m + "/in", "many/" + m + "-a", "many/" + m + ".b"));
    }
    assertEquals(20_000, keys.size());
    cluster.loadFromUnderStore("/" + bucket);

    long start = System.nanoTime();
    List<Entry> flat = model(keys, "many/", "", "");
    assertEquals(20_000, flat.size());
    List<Entry> rolled = model(keys, "many/", "/", "");
    assertEquals(19_900 + 100, rolled.size());
    assertEquals(flat, listV1(s3, bucket, "many/", "", 1000, "", null));
    assertEquals(rolled, listV1(s3, bucket, "many/", "/", 1000, "", null));
    assertEquals(flat, listV2(s3, bucket, "many/", "", 1000, "", false));
    assertEquals(rolled, listV2(s3, bucket, "many/", "/", 1000, "", false));
    long seconds = (System.nanoTime() - start) / 1_000_000_000L;
    assertTrue(seconds < 60, "80 pages of 1000 keys took " + seconds + " s");
  }
}
