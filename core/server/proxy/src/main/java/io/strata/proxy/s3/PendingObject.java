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
 * An object being written (PutObject, CopyObject, CompleteMultipartUpload), which replaces the
 * object at its key only once complete and checked, as in S3; or joined from files of its mount
 * ({@link #concat}), placed the same way.
 *
 * <p>The namespace replaces a file when its replacement is created, not when that completes:
 * writing over an object in place would take the old object away for the whole upload, and lose it
 * for good when the upload then fails (a wrong Content-MD5 or checksum, a cut connection). So a key
 * that holds an object gets its new bytes in a file of the bucket's hidden uploads folder, moved
 * onto the key once complete; readers see the old object until then, and a failed write leaves it
 * as it was. Only the moment between removing the old file and the move shows no object. A key with
 * nothing at it is written in place, where an incomplete file is neither listed nor read and a
 * failed write leaves nothing. The move is a rename in the under store: free in file systems and
 * HDFS, a copy in object stores.
 *
 * <p>The caller holds the key's lock ({@link KeyLocks}) from {@link #create} to {@link #complete}
 * or {@link #cancel}. A staged file the proxy never moved (it died) stays in the uploads folder
 * until {@link MultipartUploads#removeExpired} removes it.
 */
final class PendingObject {
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Names of staged files in the uploads folder; never an upload id (32 hex digits). */
  static final String STAGED_PREFIX = "put-";

  private final ProxyContext ctx;
  private final String path;
  private final String key;
  private final Principal principal;

  /** The stream of the object's bytes; null for an object joined by {@link #concat}. */
  private final FileOutStream out;

  private final boolean staged;

  private PendingObject(
      ProxyContext ctx,
      String path,
      String key,
      Principal principal,
      FileOutStream out,
      boolean staged) {
    this.ctx = ctx;
    this.path = path;
    this.key = key;
    this.principal = principal;
    this.out = out;
    this.staged = staged;
  }

  /**
   * Starts writing the object of {@code key} at {@code path} in {@code bucket}.
   *
   * @param mode the object's mode (its ACL's: {@link RequestedAcl})
   * @param createOnly fail with PreconditionFailed when something is at the key (If-None-Match)
   * @throws S3Exception KeyConflict when the key names a folder or a path below a file
   */
  static PendingObject create(
      ProxyContext ctx,
      String bucket,
      String path,
      String key,
      Principal p,
      int mode,
      boolean createOnly)
      throws StrataException {
    CreateOptions options =
        CreateOptions.defaults().recursive(true).owner(p.user()).group(p.primaryGroup()).mode(mode);
    // A new key (the common case) costs one master call: the create that fails when the key
    // is taken, which also decides If-None-Match in the same step.
    FileInfo existing;
    try {
      return new PendingObject(
          ctx, path, key, p, ctx.fs().createFile(path, options.overwrite(false)), false);
    } catch (StrataException e) {
      if (e.code() == ErrorCode.ALREADY_EXISTS && createOnly) {
        throw new S3Exception(
            S3ErrorCode.PRECONDITION_FAILED,
            "At least one of the"
                + " pre-conditions you specified did not hold: If-None-Match (the key exists)");
      }
      if (e.code() == ErrorCode.INVALID_ARGUMENT || e.code() == ErrorCode.FAILED_PRECONDITION) {
        throw keyConflict(key, e.getMessage());
      }
      if (e.code() != ErrorCode.ALREADY_EXISTS) {
        throw e;
      }
      existing = statusOrNull(ctx, path);
    }
    if (existing == null) {
      // Deleted since the create found it: write in place after all.
      return create(ctx, bucket, path, key, p, mode, createOnly);
    }
    if (existing.getDirectory()) {
      throw keyConflict(key, "a folder is at " + path);
    }
    return new PendingObject(
        ctx, path, key, p, ctx.fs().createFile(stagePath(ctx, bucket), options), true);
  }

  /**
   * Writes a small object whose bytes are all here and checked. A new key in an existing folder
   * (what data-preparation tools write most) costs one master call: a worker writes the bytes where
   * the key belongs, and the master commits the file at once ({@link
   * io.strata.client.FileSystem#writeNewFile}). Otherwise (the key holds an object, its folder is
   * missing, or the key conflicts with a file or folder) the object is written as {@link #create}
   * places any object.
   *
   * @param mode the object's mode
   * @param createOnly fail with PreconditionFailed when something is at the key (If-None-Match)
   * @return the object's status at its key
   */
  static FileInfo putSmall(
      ProxyContext ctx,
      String bucket,
      String path,
      String key,
      Principal p,
      int mode,
      boolean createOnly,
      byte[] bytes,
      Map<String, ByteString> xattrs)
      throws IOException {
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
      if (e.code() == ErrorCode.ALREADY_EXISTS && createOnly) {
        throw new S3Exception(
            S3ErrorCode.PRECONDITION_FAILED,
            "At least one of the"
                + " pre-conditions you specified did not hold: If-None-Match (the key exists)");
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
    PendingObject pending = create(ctx, bucket, path, key, p, mode, createOnly);
    try {
      pending.out().write(bytes);
      return pending.complete(xattrs);
    } catch (IOException | RuntimeException e) {
      pending.cancel();
      throw e;
    }
  }

  /** A new file name in the bucket's uploads folder, where a replacing object is staged. */
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
   * io.strata.client.FileSystem#concat}); placed as {@link #complete} places a written object: in
   * place when nothing is at the key, else staged aside and moved onto it. The sources may be
   * consumed, whatever the outcome.
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
    return new PendingObject(ctx, path, key, p, null, true).place(done.getPath());
  }

  /** The stream of the object's bytes. */
  FileOutStream out() {
    return out;
  }

  /**
   * Completes the file with the object's metadata and puts it at the key.
   *
   * @return the object's status at its key
   */
  FileInfo complete(Map<String, ByteString> xattrs) throws IOException {
    out.setXattrsOnComplete(xattrs);
    out.close();
    FileInfo done = out.completedStatus();
    return staged ? place(done.getPath()) : done;
  }

  /** Moves a complete staged file onto the key, or deletes it when that fails. */
  private FileInfo place(String stage) throws StrataException {
    try {
      moveIntoPlace(stage);
    } catch (StrataException | RuntimeException e) {
      deleteQuietly(stage);
      throw e;
    }
    return ctx.fs().getStatus(path);
  }

  /** Discards what was written; the key keeps what it had. */
  void cancel() {
    out.cancel();
  }

  private void moveIntoPlace(String stage) throws StrataException {
    // Bounded: each round either moves the file or finds the key changed by a writer outside
    // this proxy (a mount, another proxy) between the removal and the move.
    for (int attempt = 1; ; attempt++) {
      FileInfo current = statusOrNull(ctx, path);
      if (current != null) {
        if (current.getDirectory()) {
          throw keyConflict(key, "a folder was made at " + path + " meanwhile");
        }
        try {
          ctx.fs().delete(path, false);
        } catch (StrataException e) {
          if (e.code() != ErrorCode.NOT_FOUND) {
            throw e;
          }
        }
      }
      try {
        ctx.fs().rename(stage, path);
        return;
      } catch (StrataException e) {
        if (attempt >= 3) {
          throw e;
        }
        if (e.code() == ErrorCode.NOT_FOUND) {
          // The key's folder went with its last other key meanwhile.
          ctx.fs()
              .createDirectory(
                  PathNames.parent(path),
                  true,
                  true,
                  0,
                  principal.user(),
                  principal.primaryGroup());
        } else if (e.code() != ErrorCode.ALREADY_EXISTS) {
          throw e;
        }
      }
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
