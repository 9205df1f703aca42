package io.strata.proxy.s3;

import io.strata.client.CloseableIterator;
import io.strata.common.NameOrder;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.xml.ObjectVersionListing;
import io.strata.proxy.xml.S3XmlWriter;
import io.strata.proxy.xml.VersionEntry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

/**
 * ListObjectVersions of a bucket whose versioning was enabled once (a bucket that never had it is
 * listed by {@link KeyListing#listVersions}): every version and delete marker, keys in S3's order
 * and each key's versions newest first, its current one marked IsLatest; below a prefix, rolled up
 * at a delimiter, a page of at most max-keys entries (a common prefix counts as one) resuming after
 * {@code key-marker} and, within that key, after {@code version-id-marker}.
 *
 * <p>Current objects come from a {@link KeyWalk} of the bucket, streamed. The keys that have
 * noncurrent versions come from a walk of the bucket's versions folder ({@link ObjectVersions})
 * below the prefix, gathered and sorted before the page is made: memory holds one name per such key
 * below the prefix (not per version). The two are merged in key order; each key's noncurrent
 * versions are one listing of its folder of versions.
 */
final class VersionListing {
  private final ProxyContext ctx;
  private final KeyListing unversioned;
  private final ObjectVersions versions;

  VersionListing(ProxyContext ctx, KeyListing unversioned) {
    this.ctx = ctx;
    this.unversioned = unversioned;
    this.versions = new ObjectVersions(ctx);
  }

  void list(S3Request r) throws StrataException {
    FileInfo bucket = BucketOperations.bucketFolder(ctx, r);
    if (BucketVersioning.of(bucket) == BucketVersioning.State.UNVERSIONED) {
      unversioned.listVersions(r);
      return;
    }
    ctx.access().checkList(r.principal(), bucket);
    boolean url = KeyListing.urlEncoding(r);
    String prefix = r.query().get("prefix", "");
    String delimiter = r.query().get("delimiter", "");
    String keyMarker = r.query().get("key-marker", "");
    String versionIdMarker = r.query().get("version-id-marker", "");
    if (!versionIdMarker.isEmpty() && keyMarker.isEmpty()) {
      throw new S3Exception(
          S3ErrorCode.INVALID_ARGUMENT,
          "A version-id marker cannot be specified without a key marker");
    }
    int maxKeys = KeyListing.maxKeys(r);
    Page page = new Page(maxKeys);
    if (!versionIdMarker.isEmpty()
        && keyMarker.startsWith(prefix)
        && rolledUp(keyMarker, prefix, delimiter) == null) {
      // The rest of the versions of the key the previous page stopped in.
      List<VersionEntry> all =
          versionsOf(r.bucket(), keyMarker, currentFile(r.bucket(), keyMarker));
      int at = 0;
      while (at < all.size() && !all.get(at).versionId().equals(versionIdMarker)) {
        at++;
      }
      page.addAll(keyMarker, all.subList(Math.min(at + 1, all.size()), all.size()));
    }
    Iterator<String> noncurrent =
        keysWithVersions(r.bucket(), prefix, delimiter, keyMarker).iterator();
    try (KeyWalk walk = new KeyWalk(ctx, bucket.getPath(), prefix, delimiter, keyMarker)) {
      KeyWalk.Entry current = walk.next();
      String kept = noncurrent.hasNext() ? noncurrent.next() : null;
      while (!page.truncated && (current != null || kept != null)) {
        int order =
            current == null ? 1 : kept == null ? -1 : NameOrder.compare(current.key(), kept);
        String key = order <= 0 ? current.key() : kept;
        FileInfo file = order <= 0 ? current.file() : null;
        if (order <= 0) {
          current = walk.next();
        }
        if (order >= 0) {
          kept = noncurrent.hasNext() ? noncurrent.next() : null;
        }
        if (rolledUp(key, prefix, delimiter) != null) {
          page.addPrefix(key);
        } else {
          page.addAll(key, versionsOf(r.bucket(), key, file));
        }
      }
    }
    r.xml(
        S3XmlWriter.listObjectVersions(
            new ObjectVersionListing(
                r.bucket(),
                prefix,
                keyMarker,
                versionIdMarker,
                page.truncated ? page.lastKey : null,
                page.truncated ? page.lastVersionId : null,
                maxKeys,
                delimiter,
                page.truncated,
                url,
                page.entries,
                page.prefixes)));
  }

  /** The entries of one page, up to max-keys; truncated once one more was offered. */
  private static final class Page {
    final int maxKeys;
    final List<VersionEntry> entries = new ArrayList<>();
    final List<String> prefixes = new ArrayList<>();
    boolean truncated;
    String lastKey;
    String lastVersionId;

    Page(int maxKeys) {
      this.maxKeys = maxKeys;
    }

    private boolean full() {
      if (entries.size() + prefixes.size() >= maxKeys) {
        truncated = true;
      }
      return truncated;
    }

    void addPrefix(String prefix) {
      if (!full()) {
        prefixes.add(prefix);
        lastKey = prefix;
        lastVersionId = null;
      }
    }

    void addAll(String key, List<VersionEntry> versions) {
      for (VersionEntry v : versions) {
        if (full()) {
          return;
        }
        entries.add(v);
        lastKey = key;
        lastVersionId = v.versionId();
      }
    }
  }

  /**
   * The versions of {@code key}, newest first: its current object ({@code current}, or none when
   * null) and its noncurrent versions and delete markers.
   */
  private List<VersionEntry> versionsOf(String bucket, String key, FileInfo current)
      throws StrataException {
    List<VersionEntry> out = new ArrayList<>();
    if (current != null) {
      out.add(
          new VersionEntry(
              KeyListing.entry(key, current, true), ObjectVersions.idOf(current), true, false));
    }
    if (!key.endsWith("/")) {
      for (ObjectVersions.Version v : versions.noncurrent(bucket, key)) {
        out.add(
            new VersionEntry(
                KeyListing.entry(key, v.file(), true), v.id(), out.isEmpty(), v.deleteMarker()));
      }
    }
    return out;
  }

  /** The complete file at {@code key}; null when none is there. */
  private FileInfo currentFile(String bucket, String key) throws StrataException {
    if (key.endsWith("/")) {
      return null;
    }
    FileInfo f = BucketOperations.status(ctx, ctx.buckets().objectPath(bucket, key));
    return f == null || f.getDirectory() || !f.getComplete() ? null : f;
  }

  /**
   * The common prefix {@code key} rolls up into at the delimiter, or null when it is listed as
   * itself.
   */
  private static String rolledUp(String key, String prefix, String delimiter) {
    if (delimiter.isEmpty()) {
      return null;
    }
    int at = key.indexOf(delimiter, prefix.length());
    return at < 0 ? null : key.substring(0, at + delimiter.length());
  }

  /**
   * The keys below {@code prefix} with noncurrent versions or delete markers, rolled up at the
   * delimiter, after {@code keyMarker}, in S3's order: the folders of the versions folder that hold
   * files, walked from the prefix's folder down.
   */
  private TreeSet<String> keysWithVersions(
      String bucket, String prefix, String delimiter, String keyMarker) throws StrataException {
    TreeSet<String> out = new TreeSet<>(NameOrder.COMPARATOR);
    int slash = prefix.lastIndexOf('/');
    String dirPart = prefix.substring(0, slash + 1);
    if (dirPart.startsWith("/") || dirPart.contains("//")) {
      return out;
    }
    String start = versions.versionsFolder(bucket);
    String startKey = "";
    if (!dirPart.isEmpty()) {
      startKey = dirPart.substring(0, dirPart.length() - 1);
      start = start + "/" + startKey;
    }
    Deque<String[]> pending = new ArrayDeque<>();
    pending.push(new String[] {start, startKey});
    while (!pending.isEmpty()) {
      String[] dir = pending.pop();
      String dirKey = dir[1];
      boolean hasVersions = false;
      try (CloseableIterator<FileInfo> it = ctx.fs().listStatus(dir[0])) {
        while (it.hasNext()) {
          FileInfo f = it.next();
          if (!f.getDirectory()) {
            hasVersions = true;
            continue;
          }
          String child = dirKey.isEmpty() ? f.getName() : dirKey + "/" + f.getName();
          if (child.startsWith(prefix) || prefix.startsWith(child + "/")) {
            String rolled = child.startsWith(prefix) ? rolledUp(child, prefix, delimiter) : null;
            if (rolled == null || !out.contains(rolled)) {
              pending.push(new String[] {f.getPath(), child});
            }
          }
        }
      } catch (StrataException e) {
        if (e.code() != ErrorCode.NOT_FOUND
            && e.code() != ErrorCode.INVALID_ARGUMENT
            && e.code() != ErrorCode.FAILED_PRECONDITION) {
          throw e;
        }
      }
      if (hasVersions && !dirKey.isEmpty() && dirKey.startsWith(prefix)) {
        String rolled = rolledUp(dirKey, prefix, delimiter);
        String listed = rolled == null ? dirKey : rolled;
        if (keyMarker.isEmpty() || NameOrder.compare(listed, keyMarker) > 0) {
          out.add(listed);
        }
      }
    }
    return out;
  }
}
