package io.strata.proxy.s3;

import io.strata.client.CloseableIterator;
import io.strata.common.NameOrder;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.checksum.ChecksumValue;
import io.strata.proxy.xml.KeyEncoding;
import io.strata.proxy.xml.ObjectEntry;
import io.strata.proxy.xml.ObjectListingV1;
import io.strata.proxy.xml.ObjectListingV2;
import io.strata.proxy.xml.ObjectVersionListing;
import io.strata.proxy.xml.Owner;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.VersionEntry;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * ListObjects (version 1, with marker), ListObjectsV2 (with continuation token and start-after) and
 * ListObjectVersions (with key marker): one page of at most max-keys keys and common prefixes,
 * taken from a {@link KeyWalk} that streams the namespace's listings, so a prefix of any size costs
 * one page of the result and one listing page per folder level. The continuation token is the last
 * key or prefix of the page, base64url-encoded: a page resumes exactly after it, whatever changed
 * meanwhile.
 */
final class KeyListing {
  /** The most keys S3 returns in one page. */
  static final int MAX_KEYS = 1000;

  private final ProxyContext ctx;

  KeyListing(ProxyContext ctx) {
    this.ctx = ctx;
  }

  private record Page(
      List<ObjectEntry> contents, List<String> prefixes, boolean truncated, String last) {}

  private Page page(
      S3Request r, String prefix, String delimiter, String after, int maxKeys, boolean withOwner)
      throws StrataException {
    FileInfo bucket = BucketOperations.bucketFolder(ctx, r);
    ctx.access().checkList(r.principal(), bucket);
    List<ObjectEntry> contents = new ArrayList<>();
    List<String> prefixes = new ArrayList<>();
    String last = null;
    boolean truncated = false;
    if (maxKeys > 0) {
      try (KeyWalk walk = new KeyWalk(ctx, bucket.getPath(), prefix, delimiter, after)) {
        KeyWalk.Entry e;
        while ((e = walk.next()) != null) {
          if (e.commonPrefix()) {
            prefixes.add(e.key());
          } else {
            contents.add(entry(e.key(), e.file(), withOwner));
          }
          last = e.key();
          if (contents.size() + prefixes.size() == maxKeys) {
            truncated = walk.peek() != null;
            break;
          }
        }
      }
    }
    return new Page(contents, prefixes, truncated, last);
  }

  static ObjectEntry entry(String key, FileInfo f, boolean withOwner) {
    ChecksumValue c = ObjectMetadata.checksum(f);
    return new ObjectEntry(
        key,
        Instant.ofEpochMilli(f.getModificationTimeMs()),
        ObjectMetadata.etag(f),
        f.getDirectory() ? 0 : f.getLength(),
        "STANDARD",
        withOwner ? new Owner(f.getOwner(), f.getOwner()) : null,
        c == null ? null : c.algorithm(),
        c == null ? null : c.type());
  }

  static int maxKeys(S3Request r) {
    return Math.min(MAX_KEYS, r.query().getInt("max-keys", MAX_KEYS, 0, Integer.MAX_VALUE));
  }

  static boolean urlEncoding(S3Request r) {
    return KeyEncoding.isUrlEncoding(r.query().get("encoding-type"));
  }

  void listV1(S3Request r) throws StrataException {
    boolean url = urlEncoding(r);
    String prefix = r.query().get("prefix", "");
    String delimiter = r.query().get("delimiter", "");
    String marker = r.query().get("marker", "");
    int maxKeys = maxKeys(r);
    Page p = page(r, prefix, delimiter, marker, maxKeys, true);
    r.xml(
        S3XmlWriter.listObjects(
            new ObjectListingV1(
                r.bucket(),
                prefix,
                marker,
                p.truncated() ? p.last() : null,
                maxKeys,
                delimiter,
                p.truncated(),
                url,
                p.contents(),
                p.prefixes())));
  }

  void listV2(S3Request r) throws StrataException {
    boolean url = urlEncoding(r);
    String prefix = r.query().get("prefix", "");
    String delimiter = r.query().get("delimiter", "");
    String token = r.query().get("continuation-token");
    String startAfter = r.query().get("start-after", "");
    String after = startAfter;
    if (token != null) {
      after = decodeToken(token);
      if (NameOrder.compare(after, startAfter) < 0) {
        after = startAfter;
      }
    }
    int maxKeys = maxKeys(r);
    boolean fetchOwner = "true".equalsIgnoreCase(r.query().get("fetch-owner"));
    Page p = page(r, prefix, delimiter, after, maxKeys, fetchOwner);
    r.xml(
        S3XmlWriter.listObjectsV2(
            new ObjectListingV2(
                r.bucket(),
                prefix,
                r.query().has("start-after") ? startAfter : null,
                token,
                p.truncated() ? encodeToken(p.last()) : null,
                maxKeys,
                delimiter,
                p.truncated(),
                url,
                fetchOwner,
                p.contents(),
                p.prefixes())));
  }

  /**
   * ListObjectVersions of a bucket whose versioning was never enabled (the others are {@link
   * VersionListing}'s): every object has the one version S3 calls {@code null}, and the listing is
   * ListObjects' with each key as its latest version: a page resumes after {@code key-marker},
   * whose only version a {@code version-id-marker} of {@code null} names. Tools that empty a bucket
   * through this listing (deleting each key and version it names) empty it.
   */
  void listVersions(S3Request r) throws StrataException {
    boolean url = urlEncoding(r);
    String prefix = r.query().get("prefix", "");
    String delimiter = r.query().get("delimiter", "");
    String keyMarker = r.query().get("key-marker", "");
    String versionIdMarker = r.query().get("version-id-marker", "");
    if (!versionIdMarker.isEmpty()) {
      if (keyMarker.isEmpty()) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "A version-id marker cannot be specified without a key marker");
      }
      if (!versionIdMarker.equals(ObjectVersionListing.NULL_VERSION)) {
        throw new S3Exception(
            S3ErrorCode.INVALID_ARGUMENT,
            "Invalid version id specified: "
                + versionIdMarker
                + " (versioning is not enabled, so every object has the one version 'null')");
      }
    }
    int maxKeys = maxKeys(r);
    Page p = page(r, prefix, delimiter, keyMarker, maxKeys, true);
    r.xml(
        S3XmlWriter.listObjectVersions(
            new ObjectVersionListing(
                r.bucket(),
                prefix,
                keyMarker,
                versionIdMarker,
                p.truncated() ? p.last() : null,
                p.truncated() ? ObjectVersionListing.NULL_VERSION : null,
                maxKeys,
                delimiter,
                p.truncated(),
                url,
                p.contents().stream()
                    .map(o -> new VersionEntry(o, ObjectVersionListing.NULL_VERSION, true, false))
                    .toList(),
                p.prefixes())));
  }

  static String encodeToken(String key) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(key.getBytes(StandardCharsets.UTF_8));
  }

  static String decodeToken(String token) {
    try {
      return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT, "The continuation token provided is incorrect: " + token);
    }
  }

  /** Whether a folder has any entry a listing shows. */
  static boolean hasVisibleChild(ProxyContext ctx, String path) throws StrataException {
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(path)) {
      return it.hasNext();
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }
}
