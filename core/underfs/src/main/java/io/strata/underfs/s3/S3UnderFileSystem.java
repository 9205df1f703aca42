package io.strata.underfs.s3;

import io.strata.underfs.StreamedConcat;
import io.strata.underfs.UfsOutputStream;
import io.strata.underfs.UfsStatus;
import io.strata.underfs.UnderFileSystem;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Error;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An under store on one S3 bucket ({@code s3://bucket/prefix/key}), over the AWS SDK's synchronous
 * client, which is safe to share: one store serves every thread of a process.
 *
 * <p>S3 has keys, not directories, so directories are emulated. A path is a file when an object has
 * its key; otherwise it is a directory when any key starts with {@code path/} (an implicit
 * directory) or a zero-byte {@code path/} marker exists. {@link #mkdirs} writes markers for the
 * directory and, when recursive, for each missing parent, so a directory made through Strata
 * outlives its last child. Files written through Strata get no parent markers of their own: their
 * key already makes every parent exist. A directory that exists only through its keys vanishes with
 * the last of them, as it does in S3.
 *
 * <p>Renames copy and then delete key by key: they are not atomic, and a failure part-way leaves
 * keys in both places, which a second rename or delete finishes.
 */
public final class S3UnderFileSystem implements UnderFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(S3UnderFileSystem.class);

  /** S3's largest listing page and its largest DeleteObjects batch. */
  static final int PAGE_SIZE = 1000;

  /** Objects up to this size are copied with one CopyObject; larger ones need UploadPartCopy. */
  static final long MAX_SINGLE_COPY = 5L << 30;

  static final int FILE_MODE = 0644;
  static final int DIRECTORY_MODE = 0755;

  /** The array a body is copied through into a direct buffer; the HTTP client buffers too. */
  static final int TRANSFER_SIZE = 64 * 1024;

  private final S3Client s3;
  private final S3Options options;
  private final S3Errors errors;
  private final S3Location root;
  private final S3UploadCleaner cleaner;
  private final S3Copier copier;
  private volatile CompletableFuture<Integer> cleanup = CompletableFuture.completedFuture(0);

  /**
   * A store on the bucket of {@code root}; takes ownership of the client.
   *
   * @param root the location the store was opened for; stale uploads are cleaned below it
   */
  S3UnderFileSystem(S3Client s3, S3Options options, S3Errors errors, S3Location root) {
    this(s3, options, errors, root, MAX_SINGLE_COPY);
  }

  /** As above, with the size past which copies go part by part lowered, for tests. */
  S3UnderFileSystem(
      S3Client s3, S3Options options, S3Errors errors, S3Location root, long maxSingleCopy) {
    this.s3 = s3;
    this.options = options;
    this.errors = errors;
    this.root = root;
    this.cleaner = new S3UploadCleaner(s3, errors, root, options.cleanupAge());
    this.copier = new S3Copier(s3, errors, options.partSize(), maxSingleCopy);
  }

  /** Starts the once-per-process cleanup of stale multipart uploads below the opened prefix. */
  void startStaleUploadCleanup() {
    cleanup = cleaner.startOnce();
  }

  /** The cleanup started on open; gives how many uploads it aborted. */
  CompletableFuture<Integer> staleUploadCleanup() {
    return cleanup;
  }

  @Override
  public String scheme() {
    return "s3";
  }

  private S3Location location(String uri) {
    S3Location loc = S3Location.parse(uri);
    if (!loc.bucket().equals(root.bucket())) {
      throw new IllegalArgumentException(
          "The S3 store of bucket '"
              + root.bucket()
              + "' at "
              + errors.endpoint()
              + " cannot serve "
              + uri
              + "; open a store for that bucket");
    }
    return loc;
  }

  @Override
  public UfsStatus getStatus(String uri) throws IOException {
    S3Location loc = location(uri);
    if (!loc.isRoot()) {
      Optional<HeadObjectResponse> head = head(loc);
      if (head.isPresent()) {
        HeadObjectResponse h = head.get();
        return fileStatus(loc.name(), h.contentLength(), h.lastModified(), h.eTag());
      }
    }
    Optional<UfsStatus> dir = probeDirectory(loc);
    if (dir.isPresent()) {
      return dir.get();
    }
    throw new NoSuchFileException(uri);
  }

  /** HEAD of an object; empty when there is no object with that key. */
  private Optional<HeadObjectResponse> head(S3Location loc) throws IOException {
    try {
      return Optional.of(s3.headObject(b -> b.bucket(loc.bucket()).key(loc.key())));
    } catch (SdkException e) {
      if (S3Errors.isNotFound(e)) {
        // A HEAD's 404 has no body to tell a missing key from a missing bucket; the listing
        // that follows a miss reports a missing bucket.
        return Optional.empty();
      }
      throw errors.translate("getting the status of", loc.uri(), e);
    }
  }

  /**
   * The status of a directory: the bucket root always (when the bucket exists), else a one-key
   * listing under {@code key/}; its marker, when first, gives the modification time.
   */
  private Optional<UfsStatus> probeDirectory(S3Location loc) throws IOException {
    ListObjectsV2Response page;
    try {
      page = s3.listObjectsV2(b -> b.bucket(loc.bucket()).prefix(loc.dirPrefix()).maxKeys(1));
    } catch (SdkException e) {
      throw errors.translate("getting the status of", loc.uri(), e);
    }
    if (loc.isRoot()) {
      return Optional.of(directoryStatus("", 0));
    }
    if (page.contents().isEmpty()) {
      return Optional.empty();
    }
    S3Object first = page.contents().get(0);
    long mtime =
        first.key().equals(loc.markerKey()) && first.lastModified() != null
            ? first.lastModified().toEpochMilli()
            : 0;
    return Optional.of(directoryStatus(loc.name(), mtime));
  }

  @Override
  public boolean exists(String uri) throws IOException {
    try {
      getStatus(uri);
      return true;
    } catch (NoSuchFileException e) {
      return false;
    }
  }

  @Override
  public CloseableIterator<UfsStatus> list(String uri) throws IOException {
    S3Location loc = location(uri);
    S3ListingIterator children = new S3ListingIterator(s3, errors, loc, PAGE_SIZE);
    if (!children.anyKeyUnderPrefix() && !loc.isRoot()) {
      if (head(loc).isPresent()) {
        throw new NotDirectoryException(uri);
      }
      throw new NoSuchFileException(uri);
    }
    return children;
  }

  @Override
  public int read(String uri, long position, byte[] buffer, int offset, int length)
      throws IOException {
    Objects.checkFromIndexSize(offset, length, buffer.length);
    return read(uri, position, ByteBuffer.wrap(buffer, offset, length));
  }

  /**
   * Reads the whole of {@code dst.remaining()} with one ranged GET and streams the body into {@code
   * dst}: a heap buffer's array directly, a direct buffer through a small transfer array (the SDK
   * hands the body out as a stream of arrays).
   */
  @Override
  public int read(String uri, long position, ByteBuffer dst) throws IOException {
    if (position < 0) {
      throw new IllegalArgumentException("Negative read position " + position + " in " + uri);
    }
    int length = dst.remaining();
    if (length == 0) {
      return 0;
    }
    S3Location loc = location(uri);
    if (loc.isRoot()) {
      throw new IOException("Cannot read " + uri + ": it is the bucket root, a directory");
    }
    String range = "bytes=" + position + "-" + (position + length - 1);
    ResponseInputStream<GetObjectResponse> in;
    try {
      in = s3.getObject(b -> b.bucket(loc.bucket()).key(loc.key()).range(range));
    } catch (SdkException e) {
      if (S3Errors.isRangeNotSatisfiable(e)) {
        return -1;
      }
      throw errors.translate("reading", uri, e);
    }
    try (in) {
      boolean whole = in.response().contentRange() == null;
      if (whole && position > 0 && !skip(in, position)) {
        return -1;
      }
      int n = fill(in, dst, length);
      if (whole) {
        in.abort(); // do not drain the rest of a whole object over the connection
      }
      return n == 0 ? -1 : n;
    } catch (IOException | SdkException e) {
      throw new IOException(
          "S3 at "
              + errors.endpoint()
              + " failed while reading "
              + uri
              + " at "
              + position
              + ": "
              + e.getMessage()
              + " (the read can be retried)",
          e);
    }
  }

  /** Skips a body to {@code position}, for a server that ignored the range; false at its end. */
  private static boolean skip(InputStream in, long position) throws IOException {
    for (long left = position; left > 0; ) {
      long skipped = in.skip(left);
      if (skipped <= 0) {
        if (in.read() < 0) {
          return false;
        }
        skipped = 1;
      }
      left -= skipped;
    }
    return true;
  }

  /** Reads up to {@code length} bytes of a body into {@code dst}; returns how many. */
  private static int fill(InputStream in, ByteBuffer dst, int length) throws IOException {
    if (dst.hasArray()) {
      int n = in.readNBytes(dst.array(), dst.arrayOffset() + dst.position(), length);
      dst.position(dst.position() + n);
      return n;
    }
    byte[] transfer = new byte[Math.min(length, TRANSFER_SIZE)];
    int done = 0;
    while (done < length) {
      int n = in.read(transfer, 0, Math.min(transfer.length, length - done));
      if (n < 0) {
        break;
      }
      dst.put(transfer, 0, n);
      done += n;
    }
    return done;
  }

  @Override
  public UfsOutputStream create(String uri, boolean overwrite, int mode) throws IOException {
    S3Location loc = location(uri);
    if (loc.isRoot()) {
      throw new IOException("Cannot write a file at " + uri + ": it is the bucket root");
    }
    if (!overwrite && head(loc).isPresent()) {
      throw new FileAlreadyExistsException(uri);
    }
    // S3 keeps no POSIX mode: every file reads back as 0644.
    return new S3OutputStream(
        s3, errors, loc, overwrite, options.partSize(), options.multipartThreshold());
  }

  /**
   * Joins the objects on the server: a multipart upload of the target whose parts are
   * UploadPartCopy ranges of the sources ({@link S3Copier#concat}), so no byte passes through
   * Strata, and the sources stay as they are. S3 wants every part but the last to hold at least 5
   * MiB: sources that break that rule are copied through this process instead.
   */
  @Override
  public UfsStatus concat(List<String> sources, String target, boolean overwrite, int mode)
      throws IOException {
    StreamedConcat.checkSources(sources, target);
    S3Location to = location(target);
    if (to.isRoot()) {
      throw new IOException("Cannot write a file at " + target + ": it is the bucket root");
    }
    if (!overwrite && head(to).isPresent()) {
      throw new FileAlreadyExistsException(target);
    }
    List<S3Location> from = new ArrayList<>(sources.size());
    List<Long> sizes = new ArrayList<>(sources.size());
    for (String source : sources) {
      S3Location loc = location(source);
      HeadObjectResponse h = loc.isRoot() ? null : head(loc).orElse(null);
      if (h == null) {
        throw new NoSuchFileException(source);
      }
      from.add(loc);
      sizes.add(h.contentLength());
    }
    if (!copier.canJoin(sizes)) {
      LOG.debug(
          "Copying {} objects into {} through Strata: S3 cannot join parts of these " + "sizes {}",
          sources.size(),
          target,
          sizes);
      return StreamedConcat.write(this, sources, target, overwrite, mode);
    }
    copier.concat(from, sizes, to, overwrite);
    return getStatus(target);
  }

  @Override
  public void mkdirs(String uri, boolean recursive) throws IOException {
    S3Location loc = location(uri);
    if (loc.isRoot()) {
      probeDirectory(loc); // fails with NOT_FOUND when the bucket is missing
      if (!recursive) {
        throw new FileAlreadyExistsException(uri);
      }
      return;
    }
    if (head(loc).isPresent()) {
      throw new FileAlreadyExistsException(uri, null, "a file has that name");
    }
    if (probeDirectory(loc).isPresent()) {
      if (!recursive) {
        throw new FileAlreadyExistsException(uri);
      }
      return;
    }
    List<S3Location> missing = new ArrayList<>();
    missing.add(loc);
    for (S3Location p = loc.parent(); !p.isRoot(); p = p.parent()) {
      if (probeDirectory(p).isPresent()) {
        break;
      }
      if (!recursive) {
        throw new NoSuchFileException(p.uri());
      }
      if (head(p).isPresent()) {
        throw new FileAlreadyExistsException(p.uri(), null, "a file is in the way of " + uri);
      }
      missing.add(p);
    }
    for (int i = missing.size() - 1; i >= 0; i--) {
      putMarker(missing.get(i));
    }
  }

  private void putMarker(S3Location dir) throws IOException {
    try {
      s3.putObject(
          b -> b.bucket(dir.bucket()).key(dir.markerKey()).contentLength(0L), RequestBody.empty());
    } catch (SdkException e) {
      throw errors.translate("creating the directory", dir.uri(), e);
    }
  }

  @Override
  public void delete(String uri, boolean recursive) throws IOException {
    S3Location loc = location(uri);
    if (loc.isRoot()) {
      throw new IOException(
          "Refusing to delete "
              + uri
              + ": it is the bucket root; delete "
              + "what is below it instead");
    }
    if (head(loc).isPresent()) {
      deleteKeys(loc, List.of(loc.key()));
      return;
    }
    if (!recursive) {
      ListObjectsV2Response page;
      try {
        page = s3.listObjectsV2(b -> b.bucket(loc.bucket()).prefix(loc.dirPrefix()).maxKeys(2));
      } catch (SdkException e) {
        throw errors.translate("deleting", uri, e);
      }
      if (page.contents().isEmpty()) {
        throw new NoSuchFileException(uri);
      }
      for (S3Object o : page.contents()) {
        if (!o.key().equals(loc.markerKey())) {
          throw new DirectoryNotEmptyException(uri);
        }
      }
      deleteKeys(loc, List.of(loc.markerKey()));
      return;
    }
    long deleted =
        forEachPageBelow(
            loc,
            "deleting",
            objects -> deleteKeys(loc, objects.stream().map(S3Object::key).toList()));
    if (deleted == 0) {
      throw new NoSuchFileException(uri);
    }
    LOG.debug("Deleted {} keys below {}", deleted, loc);
  }

  @Override
  public void rename(String src, String dst) throws IOException {
    S3Location from = location(src);
    S3Location to = location(dst);
    if (from.isRoot() || to.isRoot()) {
      throw new IOException(
          "Cannot rename "
              + src
              + " to "
              + dst
              + ": the bucket root cannot "
              + "be moved or replaced");
    }
    if (to.key().startsWith(from.dirPrefix())) {
      throw new IOException(
          "Cannot rename " + src + " to " + dst + ": a directory cannot move " + "below itself");
    }
    if (exists(dst)) {
      throw new FileAlreadyExistsException(dst);
    }
    Optional<HeadObjectResponse> head = head(from);
    if (head.isPresent()) {
      copier.copy(from, to, head.get().contentLength());
      deleteKeys(from, List.of(from.key()));
      return;
    }
    String fromPrefix = from.dirPrefix();
    String toPrefix = to.dirPrefix();
    long moved =
        forEachPageBelow(
            from,
            "renaming",
            objects -> {
              List<String> keys = new ArrayList<>(objects.size());
              for (S3Object o : objects) {
                copier.copy(
                    from.withKey(o.key()),
                    to.withKey(toPrefix + o.key().substring(fromPrefix.length())),
                    o.size());
                keys.add(o.key());
              }
              deleteKeys(from, keys);
            });
    if (moved == 0) {
      throw new NoSuchFileException(src);
    }
    LOG.debug("Renamed {} keys from {} to {}", moved, from, to);
  }

  /** Work on one page of keys. */
  private interface PageAction {
    void accept(List<S3Object> objects) throws IOException;
  }

  /**
   * Runs an action on every key under a directory, a page at a time (no delimiter, so the whole
   * subtree); returns the number of keys seen. Deleting the keys of a page as it is handled is
   * safe: continuation tokens point past the last key returned, not at a position.
   */
  private long forEachPageBelow(S3Location dir, String action, PageAction pageAction)
      throws IOException {
    Iterator<ListObjectsV2Response> pages =
        s3.listObjectsV2Paginator(
                b -> b.bucket(dir.bucket()).prefix(dir.dirPrefix()).maxKeys(PAGE_SIZE))
            .iterator();
    long seen = 0;
    while (true) {
      ListObjectsV2Response page;
      try {
        if (!pages.hasNext()) {
          return seen;
        }
        page = pages.next();
      } catch (SdkException e) {
        throw errors.translate(action, dir.uri(), e);
      }
      if (!page.contents().isEmpty()) {
        pageAction.accept(page.contents());
        seen += page.contents().size();
      }
    }
  }

  /** Deletes up to {@link #PAGE_SIZE} keys with one DeleteObjects. */
  private void deleteKeys(S3Location about, List<String> keys) throws IOException {
    if (keys.size() == 1) {
      try {
        s3.deleteObject(b -> b.bucket(about.bucket()).key(keys.get(0)));
      } catch (SdkException e) {
        throw errors.translate("deleting", about.withKey(keys.get(0)).uri(), e);
      }
      return;
    }
    List<ObjectIdentifier> ids =
        keys.stream().map(k -> ObjectIdentifier.builder().key(k).build()).toList();
    DeleteObjectsResponse response;
    try {
      response =
          s3.deleteObjects(b -> b.bucket(about.bucket()).delete(d -> d.objects(ids).quiet(true)));
    } catch (SdkException e) {
      throw errors.translate("deleting keys below", about.uri(), e);
    }
    if (!response.errors().isEmpty()) {
      S3Error first = response.errors().get(0);
      throw new IOException(
          "S3 at "
              + errors.endpoint()
              + " refused to delete "
              + response.errors().size()
              + " of "
              + keys.size()
              + " keys below "
              + about.uri()
              + ", first "
              + about.withKey(first.key()).uri()
              + ": "
              + first.code()
              + " "
              + first.message()
              + "; check the bucket's policy and retry the delete");
    }
  }

  static UfsStatus fileStatus(String name, Long size, Instant lastModified, String etag) {
    return new UfsStatus(
        name,
        false,
        size == null ? 0 : size,
        lastModified == null ? 0 : lastModified.toEpochMilli(),
        FILE_MODE,
        "",
        "",
        stripQuotes(etag));
  }

  static UfsStatus directoryStatus(String name, long modificationTimeMs) {
    return new UfsStatus(name, true, 0, modificationTimeMs, DIRECTORY_MODE, "", "", "");
  }

  /** ETags come quoted on the wire; the fingerprint is the bare value. */
  static String stripQuotes(String etag) {
    if (etag == null) {
      return "";
    }
    String s = etag.trim();
    if (s.startsWith("W/")) {
      s = s.substring(2);
    }
    return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"")
        ? s.substring(1, s.length() - 1)
        : s;
  }

  @Override
  public void close() {
    s3.close();
  }

  @Override
  public String toString() {
    return "S3UnderFileSystem{" + root.bucket() + " at " + errors.endpoint() + "}";
  }
}
