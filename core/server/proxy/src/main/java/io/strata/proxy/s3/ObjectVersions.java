package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.netty.handler.codec.http.HttpHeaders;
import io.strata.client.CloseableIterator;
import io.strata.client.CreateOptions;
import io.strata.client.FileOutStream;
import io.strata.client.SyncOption;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.Principal;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * The versions of objects in a versioned bucket ({@link BucketVersioning}): keeping the object a
 * write or delete replaces as a noncurrent version, finding a version by id, and removing one.
 *
 * <p>The current version of a key is the file at the key, as in an unversioned bucket, with its
 * version id in the extended attribute {@code strata.s3.version-id} (none: the version {@code
 * null}). Noncurrent versions and delete markers are files of the bucket's hidden versions folder
 * ({@link PathNames#VERSIONS_FOLDER}), in a folder per key at the key's own path below it: {@code
 * <bucket>/.strata-versions/<key>/<version>}. There, folders are keys and files are versions, so
 * the two never mix up. A version's file name is its id, which starts with the inverted time it was
 * written, so that a key's folder lists its versions newest first; the {@code null} version's file
 * is that time followed by {@code .null}. A replaced object moves there by a rename in the
 * namespace (no byte is copied in the cache); a delete marker is an empty file with the attribute
 * {@code strata.s3.delete-marker}. When no file is at a key, its newest version, if any, is a
 * delete marker: deleting the current version by id moves the newest noncurrent object back onto
 * the key, as S3 makes it current again.
 *
 * <p>The callers hold the key's lock ({@link KeyLocks}). Versions are ordinary hidden files: they
 * are cached, freed and expire like any other file.
 */
final class ObjectVersions {
  /** The extended attribute of a current object with its version id. */
  static final String VERSION_ID = "strata.s3.version-id";

  /** The extended attribute that makes a file of the versions folder a delete marker. */
  static final String DELETE_MARKER = "strata.s3.delete-marker";

  /** The id of the version written while versioning was never enabled or suspended. */
  static final String NULL_ID = "null";

  private static final String NULL_SUFFIX = ".null";
  private static final Pattern ID = Pattern.compile("[0-9a-f]{24}");
  private static final SecureRandom RANDOM = new SecureRandom();

  /** The last time given to a version by this proxy, in microseconds: ids never repeat here. */
  private static final AtomicLong LAST_MICROS = new AtomicLong();

  private final ProxyContext ctx;
  private final BucketVersioning versioning;
  private final LifecycleExpiry lifecycle;

  ObjectVersions(ProxyContext ctx) {
    this.ctx = ctx;
    this.versioning = new BucketVersioning(ctx);
    this.lifecycle = new LifecycleExpiry(ctx);
  }

  /** One version of a key: its file, its id, and whether it is a delete marker. */
  record Version(FileInfo file, String id, boolean deleteMarker) {}

  /** What a deletion did: the version it removed or the delete marker it made. */
  record Deletion(String versionId, boolean deleteMarker) {}

  /**
   * Gives an object about to be written in {@code bucket} its version id, as an attribute in {@code
   * xattrs}.
   *
   * @return the id to answer in {@code x-amz-version-id}; null when the bucket is unversioned or
   *     the key is a folder key (folders have no versions)
   */
  String stamp(String bucket, String key, Map<String, ByteString> xattrs) throws StrataException {
    BucketVersioning.State s = versioning.of(bucket);
    if (s == BucketVersioning.State.UNVERSIONED || key.endsWith("/")) {
      return null;
    }
    if (s == BucketVersioning.State.SUSPENDED) {
      xattrs.remove(VERSION_ID);
      return NULL_ID;
    }
    String id = newId();
    xattrs.put(VERSION_ID, ByteString.copyFromUtf8(id));
    return id;
  }

  /**
   * Keeps the current object of {@code key} as a noncurrent version, moved aside, when the bucket
   * versions its objects and the object is not the {@code null} version of a suspended bucket.
   *
   * @return whether it was moved aside; if not, it is still at its key, for the caller to replace
   */
  boolean keepAsNoncurrent(String bucket, String key, FileInfo current) throws StrataException {
    BucketVersioning.State s = versioning.of(bucket);
    String id = idOf(current);
    if (s == BucketVersioning.State.UNVERSIONED
        || (s == BucketVersioning.State.SUSPENDED && id.equals(NULL_ID))) {
      return false;
    }
    if (id.equals(NULL_ID)) {
      removeNullVersions(bucket, key);
    }
    String name =
        id.equals(NULL_ID)
            ? nullName(TimeUnit.MILLISECONDS.toMicros(current.getModificationTimeMs()))
            : id;
    moveToVersions(bucket, key, current.getPath(), name);
    return true;
  }

  /**
   * Takes the current object of {@code key} away: kept as a noncurrent version when the bucket
   * versions its objects, deleted otherwise (an unversioned bucket, or the {@code null} version of
   * a suspended one).
   */
  void retire(String bucket, String key, FileInfo current) throws StrataException {
    if (!keepAsNoncurrent(bucket, key, current)) {
      deleteIfThere(current.getPath());
    }
  }

  /**
   * After an object was written with {@code versionId} (from {@link #stamp}): a {@code null}
   * version replaces the key's earlier {@code null} version or delete marker; the bucket's
   * lifecycle rules are put into effect on the new object and the versions it replaced.
   */
  void written(String bucket, String key, String versionId) throws StrataException {
    if (NULL_ID.equals(versionId)) {
      removeNullVersions(bucket, key);
    }
    lifecycle.keyChanged(bucket, key);
  }

  /** Whether a DeleteObject of {@code key} is one for this class rather than a plain delete. */
  boolean handlesDelete(String bucket, String key, String versionId) throws StrataException {
    if (key.endsWith("/")) {
      return false;
    }
    return versionId != null || versioning.of(bucket) != BucketVersioning.State.UNVERSIONED;
  }

  /**
   * Deletes {@code key} in a versioned bucket, or one version of it. Without a version id the
   * current object becomes noncurrent (or goes, when it is the {@code null} version of a suspended
   * bucket) and a delete marker becomes the key's newest version. With one, that version is removed
   * for good; when it was the current version, the newest noncurrent object becomes current again.
   * A version id that names no version deletes nothing, as in S3. The bucket's lifecycle rules are
   * then put into effect on what the key's versions have become.
   */
  Deletion delete(Principal p, String bucket, String key, String versionId) throws IOException {
    Deletion d = deleteVersion(p, bucket, key, versionId);
    lifecycle.keyChanged(bucket, key);
    return d;
  }

  private Deletion deleteVersion(Principal p, String bucket, String key, String versionId)
      throws IOException {
    String path = ctx.buckets().objectPath(bucket, key);
    FileInfo current = currentFile(path);
    if (versionId == null) {
      BucketVersioning.State s = versioning.of(bucket);
      if (current != null) {
        retire(bucket, key, current);
      }
      String id = s == BucketVersioning.State.ENABLED ? newId() : NULL_ID;
      if (id.equals(NULL_ID)) {
        removeNullVersions(bucket, key);
      }
      writeDeleteMarker(p, bucket, key, id);
      return new Deletion(id, true);
    }
    checkId(versionId);
    if (current != null && idOf(current).equals(versionId)) {
      deleteIfThere(path);
      makeNewestCurrent(bucket, key, path);
      return new Deletion(versionId, false);
    }
    Version v = findNoncurrent(bucket, key, versionId);
    if (v == null) {
      return new Deletion(versionId, false);
    }
    deleteIfThere(v.file().getPath());
    if (current == null) {
      makeNewestCurrent(bucket, key, path);
    }
    removeEmptyKeyFolders(bucket, key);
    return new Deletion(versionId, v.deleteMarker());
  }

  /**
   * The version {@code versionId} of {@code key}, with its blocks when asked, for GetObject,
   * HeadObject and a copy's source.
   *
   * @throws S3Exception NoSuchVersion when there is none; MethodNotAllowed (with {@code
   *     x-amz-delete-marker: true}) when it is a delete marker, which has no bytes
   */
  FileInfo readable(String bucket, String key, String versionId, boolean withBlocks)
      throws StrataException {
    BucketOperations.bucketFolder(ctx, bucket);
    checkId(versionId);
    if (!key.endsWith("/")) {
      String path = ctx.buckets().objectPath(bucket, key);
      FileInfo current = currentFile(path);
      if (current != null && idOf(current).equals(versionId)) {
        return withBlocks ? ctx.statuses().get(path) : current;
      }
      Version v = findNoncurrent(bucket, key, versionId);
      if (v != null) {
        if (v.deleteMarker()) {
          throw new S3Exception(
                  S3ErrorCode.METHOD_NOT_ALLOWED,
                  "The specified method is not allowed against this resource: version "
                      + versionId
                      + " of "
                      + key
                      + " is a delete marker, which has no content (delete it by its version id"
                      + " to make the version before it current)")
              .withHeader("x-amz-delete-marker", "true")
              .withHeader("x-amz-version-id", versionId)
              .withHeader("Last-Modified", HttpDates.format(v.file().getModificationTimeMs()));
        }
        return withBlocks
            ? ctx.fs().getStatus(v.file().getPath(), SyncOption.DEFAULT, true)
            : v.file();
      }
    } else if (versionId.equals(NULL_ID)) {
      return ObjectReads.object(ctx, bucket, key, withBlocks);
    }
    throw new S3Exception(
        S3ErrorCode.NO_SUCH_VERSION,
        "The specified version does not exist: " + key + " has no version " + versionId);
  }

  /**
   * {@code noSuchKey} for a read of a key with no object, with {@code x-amz-delete-marker: true}
   * and the marker's id when the key's newest version is a delete marker, as S3 answers.
   */
  S3Exception explainMissing(String bucket, String key, S3Exception noSuchKey)
      throws StrataException {
    if (key.endsWith("/") || versioning.of(bucket) == BucketVersioning.State.UNVERSIONED) {
      return noSuchKey;
    }
    List<Version> versions = noncurrent(bucket, key);
    if (!versions.isEmpty() && versions.get(0).deleteMarker()) {
      noSuchKey
          .withHeader("x-amz-delete-marker", "true")
          .withHeader("x-amz-version-id", versions.get(0).id());
    }
    return noSuchKey;
  }

  /** Sets {@code x-amz-version-id} of an object answered, when it has a version id. */
  static void versionHeader(HttpHeaders h, FileInfo f, String asked) {
    if (f.getXattrsMap().containsKey(VERSION_ID) || asked != null) {
      h.set("x-amz-version-id", idOf(f));
    }
  }

  /**
   * Refuses a bucket deletion while noncurrent versions or delete markers are kept, as S3 does:
   * they would go with the bucket's folder otherwise.
   */
  void checkNoneKept(String bucket) throws StrataException {
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(versionsFolder(bucket))) {
      if (it.hasNext()) {
        throw new S3Exception(
            S3ErrorCode.BUCKET_NOT_EMPTY,
            "The bucket you tried to delete is not empty: "
                + bucket
                + " keeps noncurrent versions or delete markers (ListObjectVersions names them;"
                + " delete each by its version id)");
      }
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
  }

  /** The noncurrent versions and delete markers of {@code key}, newest first. */
  List<Version> noncurrent(String bucket, String key) throws StrataException {
    List<Version> out = new ArrayList<>();
    try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(keyFolder(bucket, key))) {
      while (it.hasNext()) {
        FileInfo f = it.next();
        if (!f.getDirectory() && f.getComplete()) {
          out.add(
              new Version(f, idOfName(f.getName()), f.getXattrsMap().containsKey(DELETE_MARKER)));
        }
      }
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND
          && e.code() != ErrorCode.INVALID_ARGUMENT
          && e.code() != ErrorCode.FAILED_PRECONDITION) {
        throw e;
      }
    }
    return out;
  }

  /** The version id of a current object: its attribute, or {@code null} when it has none. */
  static String idOf(FileInfo current) {
    ByteString v = current.getXattrsMap().get(VERSION_ID);
    return v == null ? NULL_ID : v.toStringUtf8();
  }

  /** The hidden folder of a bucket's noncurrent versions. */
  String versionsFolder(String bucket) {
    return ctx.buckets().path(bucket) + "/" + PathNames.VERSIONS_FOLDER;
  }

  private String keyFolder(String bucket, String key) {
    return versionsFolder(bucket) + "/" + key;
  }

  private static String idOfName(String name) {
    return name.endsWith(NULL_SUFFIX) ? NULL_ID : name;
  }

  /** A new version id: the inverted time (so that newer sorts first) and random digits. */
  static String newId() {
    byte[] random = new byte[4];
    RANDOM.nextBytes(random);
    return invertedTime(nextMicros()) + HexFormat.of().formatHex(random);
  }

  private static String nullName(long micros) {
    return invertedTime(micros) + NULL_SUFFIX;
  }

  private static String invertedTime(long micros) {
    return String.format("%016x", Long.MAX_VALUE - micros);
  }

  private static long nextMicros() {
    long now = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
    return LAST_MICROS.updateAndGet(last -> Math.max(last + 1, now));
  }

  private static void checkId(String versionId) {
    if (!versionId.equals(NULL_ID) && !ID.matcher(versionId).matches()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "Invalid version id specified: "
              + versionId
              + " (give an id from x-amz-version-id or ListObjectVersions, or 'null')");
    }
  }

  private Version findNoncurrent(String bucket, String key, String versionId)
      throws StrataException {
    for (Version v : noncurrent(bucket, key)) {
      if (v.id().equals(versionId)) {
        return v;
      }
    }
    return null;
  }

  /** The complete file at {@code path}; null when there is none (or a folder is there). */
  private FileInfo currentFile(String path) throws StrataException {
    FileInfo f = BucketOperations.status(ctx, path);
    return f == null || f.getDirectory() || !f.getComplete() ? null : f;
  }

  private void moveToVersions(String bucket, String key, String from, String name)
      throws StrataException {
    String to = keyFolder(bucket, key) + "/" + name;
    try {
      ctx.fs().rename(from, to);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
      // The key's first noncurrent version: its folder is made now.
      ctx.fs().createDirectory(keyFolder(bucket, key), true, true);
      try {
        ctx.fs().rename(from, to);
      } catch (StrataException again) {
        if (again.code() != ErrorCode.NOT_FOUND) {
          throw again;
        }
        // The object went meanwhile (deleted outside the proxy): nothing to keep.
      }
    }
  }

  private void writeDeleteMarker(Principal p, String bucket, String key, String id)
      throws IOException {
    String name = id.equals(NULL_ID) ? nullName(nextMicros()) : id;
    FileOutStream out =
        ctx.fs()
            .createFile(
                keyFolder(bucket, key) + "/" + name,
                CreateOptions.defaults().recursive(true).owner(p.user()).group(p.primaryGroup()));
    try {
      out.setXattrsOnComplete(Map.of(DELETE_MARKER, ByteString.EMPTY));
      out.close();
    } catch (IOException | RuntimeException e) {
      out.cancel();
      throw e;
    }
  }

  /** Moves the newest noncurrent version back onto the key, unless it is a delete marker. */
  private void makeNewestCurrent(String bucket, String key, String path) throws StrataException {
    List<Version> versions = noncurrent(bucket, key);
    if (versions.isEmpty() || versions.get(0).deleteMarker()) {
      return;
    }
    String from = versions.get(0).file().getPath();
    try {
      ctx.fs().rename(from, path);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
      // The key's folder went with its last other key.
      ctx.fs().createDirectory(PathNames.parent(path), true, true);
      ctx.fs().rename(from, path);
    }
    removeEmptyKeyFolders(bucket, key);
  }

  private void removeNullVersions(String bucket, String key) throws StrataException {
    boolean removed = false;
    for (Version v : noncurrent(bucket, key)) {
      if (v.id().equals(NULL_ID)) {
        deleteIfThere(v.file().getPath());
        removed = true;
      }
    }
    if (removed) {
      removeEmptyKeyFolders(bucket, key);
    }
  }

  /** Deletes the key's folder of versions and those above it while they hold nothing. */
  private void removeEmptyKeyFolders(String bucket, String key) throws StrataException {
    String top = versionsFolder(bucket);
    String dir = keyFolder(bucket, key);
    while (!dir.equals(top) && PathNames.isUnder(dir, top)) {
      try {
        ctx.fs().deleteUnlessVisibleChildren(dir);
      } catch (StrataException e) {
        if (e.code() == ErrorCode.FAILED_PRECONDITION) {
          return;
        }
        if (e.code() != ErrorCode.NOT_FOUND) {
          throw e;
        }
      }
      dir = PathNames.parent(dir);
    }
  }

  private void deleteIfThere(String path) throws StrataException {
    try {
      ctx.fs().delete(path, false);
    } catch (StrataException e) {
      if (e.code() != ErrorCode.NOT_FOUND) {
        throw e;
      }
    }
  }
}
