package io.strata.proxy.s3;

import com.google.protobuf.ByteString;
import io.strata.client.CreateOptions;
import io.strata.client.FileOutStream;
import io.strata.common.PathNames;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.StrataException;
import io.strata.proto.FileInfo;
import io.strata.proxy.access.Principal;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * An object being written (PutObject, CopyObject, CompleteMultipartUpload), which takes its key
 * only once complete and checked, as in S3; or joined from files of its mount ({@link #concat}),
 * placed the same way.
 *
 * <p>Writers of one key never wait on each other's uploads: each writes its own file in the
 * bucket's hidden uploads folder, and only the last step, {@link #placeOnKey}, is serialised per
 * key ({@link KeyLocks}): it checks the write's conditions ({@link WriteConditions}) against the
 * object at the key and moves the file onto the key with a replacing rename, one namespace change.
 * Readers see the old object until that change and the new one whole after it, never nothing
 * between and never a mix; of concurrent writers the later completion wins. A failed write (a wrong
 * Content-MD5 or checksum, a cut connection, a failed condition) deletes its file and leaves the
 * key as it was.
 *
 * <p>A write goes straight to its key only where it appears there whole in one master call and
 * never over another object: a body held whole ({@link #putSmall}, with {@link
 * io.strata.client.FileSystem#writeNewFile}) and a join of parts ({@link #concat}), both to a key
 * with nothing at it; when another writer filled the key first, they are staged and placed as
 * above. A streamed body is always staged: a file created at the key would be there, incomplete,
 * for the whole upload, and a writer of the same key finishing first could then neither replace it
 * (that would destroy the upload still in flight) nor wait for it (a client may send one upload
 * from inside the other). The price is the move: a rename, free in file systems and HDFS, a copy in
 * object stores, for streamed bodies and copies (most objects written to new keys are small or
 * multipart, and pay nothing).
 *
 * <p>{@link #placeOnKey} is the one place where an object takes a key that holds another. A staged
 * file whose writer never placed it (the proxy died) stays in the uploads folder until {@link
 * MultipartUploads#removeExpired} removes it.
 */
final class PendingObject {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Names of staged files in the uploads folder; never an upload id (32 hex digits). */
  static final String STAGED_PREFIX = "put-";

  private final ProxyContext ctx;
  private final String bucket;
  private final String path;
  private final String key;
  private final Principal principal;

  /** The stream of the object's bytes to its staged file; null for {@link #concat}. */
  private final FileOutStream out;

  private PendingObject(
      ProxyContext ctx,
      String bucket,
      String path,
      String key,
      Principal principal,
      FileOutStream out) {
    this.ctx = ctx;
    this.bucket = bucket;
    this.path = path;
    this.key = key;
    this.principal = principal;
    this.out = out;
  }

  /**
   * Starts writing the object of {@code key} at {@code path} in {@code bucket}, to a staged file.
   *
   * @param mode the object's mode (its ACL's: {@link RequestedAcl})
   * @throws S3Exception KeyConflict when a folder is at the key
   */
  static PendingObject create(
      ProxyContext ctx, String bucket, String path, String key, Principal p, int mode)
      throws StrataException {
    FileInfo existing = statusOrNull(ctx, path);
    if (existing != null && existing.getDirectory()) {
      throw keyConflict(key, "a folder is at " + path);
    }
    CreateOptions options =
        CreateOptions.defaults().recursive(true).owner(p.user()).group(p.primaryGroup()).mode(mode);
    return new PendingObject(
        ctx, bucket, path, key, p, ctx.fs().createFile(stagePath(ctx, bucket), options));
  }

  /**
   * Writes a small object whose bytes are all here and checked. A new key in an existing folder
   * (what data-preparation tools write most) costs one master call: a worker writes the bytes where
   * the key belongs, and the master commits the file at once, refusing when something took the key
   * meanwhile ({@link io.strata.client.FileSystem#writeNewFile}). Otherwise (the key holds an
   * object, its folder is missing, the key conflicts with a file or folder, or the write has an
   * If-Match) the object is staged and placed as {@link #create} places any object.
   *
   * @param mode the object's mode
   * @return the object's status at its key
   */
  static FileInfo putSmall(
      ProxyContext ctx,
      String bucket,
      String path,
      String key,
      Principal p,
      int mode,
      WriteConditions conditions,
      byte[] bytes,
      Map<String, ByteString> xattrs)
      throws IOException {
    if (conditions.allowEmptyKey()) {
      try {
        FileOutStream out =
            ctx.fs()
                .writeNewFile(
                    path,
                    CreateOptions.defaults().owner(p.user()).group(p.primaryGroup()).mode(mode));
        try {
          out.write(bytes);
          out.setXattrsOnComplete(xattrs);
          out.close();
        } catch (IOException | RuntimeException e) {
          out.cancel();
          throw e;
        }
        return out.completedStatus();
      } catch (StrataException e) {
        if (e.code() == ErrorCode.ALREADY_EXISTS && conditions.createOnly()) {
          throw WriteConditions.preconditionFailed("If-None-Match (the key exists)");
        }
        boolean placedOtherwise =
            e.code() == ErrorCode.ALREADY_EXISTS
                || e.code() == ErrorCode.NOT_FOUND
                || e.code() == ErrorCode.FAILED_PRECONDITION
                || e.code() == ErrorCode.INVALID_ARGUMENT;
        if (!placedOtherwise) {
          throw e;
        }
      }
    }
    PendingObject pending = create(ctx, bucket, path, key, p, mode);
    try {
      pending.out().write(bytes);
    } catch (IOException | RuntimeException e) {
      pending.cancel();
      throw e;
    }
    return pending.complete(xattrs, conditions);
  }

  /** A new file name in the bucket's uploads folder, where an object is staged. */
  private static String stagePath(ProxyContext ctx, String bucket) {
    byte[] id = new byte[16];
    RANDOM.nextBytes(id);
    return ctx.buckets().path(bucket)
        + "/"
        + PathNames.UPLOADS_FOLDER
        + "/"
        + STAGED_PREFIX
        + HexFormat.of().formatHex(id);
  }

  /**
   * Writes the object of {@code key} as the concatenation of {@code sources}, files of the key's
   * mount, joined in their under store without their bytes passing through the proxy ({@link
   * io.strata.client.FileSystem#concat}): in place when nothing is at the key (the join appears
   * whole in one master call), else joined aside in the uploads folder and placed by {@link
   * #placeOnKey}. The sources may be consumed, whatever the outcome.
   *
   * @param mode the object's mode
   * @return the object's status at its key
   * @throws S3Exception KeyConflict when the key names a folder or a path below a file
   */
  static FileInfo concat(
      ProxyContext ctx,
      String bucket,
      String path,
      String key,
      Principal p,
      int mode,
      List<FileInfo> sources,
      Map<String, ByteString> xattrs)
      throws IOException {
    CreateOptions options =
        CreateOptions.defaults().recursive(true).owner(p.user()).group(p.primaryGroup()).mode(mode);
    try {
      return ctx.fs().concat(path, sources, options.overwrite(false), xattrs);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.INVALID_ARGUMENT || e.code() == ErrorCode.FAILED_PRECONDITION) {
        throw keyConflict(key, e.getMessage());
      }
      if (e.code() != ErrorCode.ALREADY_EXISTS) {
        throw e;
      }
    }
    FileInfo existing = statusOrNull(ctx, path);
    if (existing != null && existing.getDirectory()) {
      throw keyConflict(key, "a folder is at " + path);
    }
    // Staged even when the key was emptied meanwhile: trying in place again could find the
    // same refusal for ever (a file in the under store that the namespace does not know).
    FileInfo done = ctx.fs().concat(stagePath(ctx, bucket), sources, options, xattrs);
    return new PendingObject(ctx, bucket, path, key, p, null)
        .placeOrDiscard(done.getPath(), WriteConditions.NONE);
  }

  /** The stream of the object's bytes. */
  FileOutStream out() {
    return out;
  }

  /**
   * Completes the staged file with the object's metadata and puts it at the key, when {@code
   * conditions} hold for what is there then; deletes it otherwise.
   *
   * @return the object's status at its key
   */
  FileInfo complete(Map<String, ByteString> xattrs, WriteConditions conditions) throws IOException {
    try {
      out.setXattrsOnComplete(xattrs);
      out.close();
    } catch (IOException | RuntimeException e) {
      out.cancel();
      throw e;
    }
    return placeOrDiscard(out.completedStatus().getPath(), conditions);
  }

  /** Discards what was written; the key keeps what it had. */
  void cancel() {
    out.cancel();
  }

  /** {@link #placeOnKey}, deleting the staged file when that fails. */
  private FileInfo placeOrDiscard(String stage, WriteConditions conditions) throws StrataException {
    try {
      return placeOnKey(stage, conditions);
    } catch (StrataException | RuntimeException e) {
      deleteQuietly(stage);
      throw e;
    }
  }

  /**
   * Moves the complete file {@code stage} onto the key, replacing the object there in one namespace
   * change, when {@code conditions} hold for that object. Holds the key's lock, so that the check
   * and the move of one writer are not split by another's; nothing else of a write runs under it.
   *
   * @return the object's status at its key
   * @throws S3Exception PreconditionFailed or NoSuchKey when a condition fails, KeyConflict when a
   *     folder is at the key or a file where its folder would be
   */
  private FileInfo placeOnKey(String stage, WriteConditions conditions) throws StrataException {
    try (KeyLocks.Held held = ctx.locks().lock(path)) {
      // Bounded: a second round only follows a folder made for the key.
      for (int attempt = 1; ; attempt++) {
        FileInfo current = statusOrNull(ctx, path);
        if (current != null && current.getDirectory()) {
          throw keyConflict(key, "a folder was made at " + path + " meanwhile");
        }
        conditions.check(current, key);
        if (current != null) {
          // Versioning hook: in a bucket that versions its objects, the object replaced is kept
          // as a noncurrent version; otherwise the move below replaces it in the same change.
          new ObjectVersions(ctx).keepAsNoncurrent(bucket, key, current);
        }
        try {
          // Without replacing for If-None-Match: * so that a writer outside this proxy that
          // took the key since the check still fails this one.
          ctx.fs().rename(stage, path, !conditions.createOnly());
          return ctx.fs().getStatus(path);
        } catch (StrataException e) {
          if (e.code() == ErrorCode.ALREADY_EXISTS && conditions.createOnly()) {
            throw WriteConditions.preconditionFailed("If-None-Match (the key exists)");
          }
          if (e.code() == ErrorCode.FAILED_PRECONDITION || e.code() == ErrorCode.INVALID_ARGUMENT) {
            throw keyConflict(key, e.getMessage());
          }
          if (e.code() != ErrorCode.NOT_FOUND || attempt >= 2) {
            throw e;
          }
          // The key's folder went with its last other key meanwhile, or was never made.
          makeFolder();
        }
      }
    }
  }

  private void makeFolder() throws StrataException {
    try {
      ctx.fs()
          .createDirectory(
              PathNames.parent(path), true, true, 0, principal.user(), principal.primaryGroup());
    } catch (StrataException e) {
      if (e.code() == ErrorCode.FAILED_PRECONDITION || e.code() == ErrorCode.INVALID_ARGUMENT) {
        throw keyConflict(key, e.getMessage());
      }
      throw e;
    }
  }

  private void deleteQuietly(String stage) {
    try {
      ctx.fs().delete(stage, false);
    } catch (StrataException e) {
      // Left for the cleaner of abandoned uploads.
    }
  }

  /** The status at a path; null when nothing is there or a file is where a folder would be. */
  private static FileInfo statusOrNull(ProxyContext ctx, String path) throws StrataException {
    try {
      return ctx.fs().getStatus(path);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.NOT_FOUND
          || e.code() == ErrorCode.INVALID_ARGUMENT
          || e.code() == ErrorCode.FAILED_PRECONDITION) {
        return null;
      }
      throw e;
    }
  }

  static S3Exception keyConflict(String key, String why) {
    return new S3Exception(
        S3ErrorCode.KEY_CONFLICT,
        "Cannot store the key "
            + key
            + ": "
            + why
            + " (in Strata a key cannot be both an object and a prefix of other keys)");
  }
}
