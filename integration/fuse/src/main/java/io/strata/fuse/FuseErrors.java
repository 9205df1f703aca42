package io.strata.fuse;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.strata.common.error.ErrorCode;
import io.strata.common.error.PosixError;
import io.strata.common.error.StrataException;
import java.io.UncheckedIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import ru.serce.jnrfuse.ErrorCodes;

/**
 * Turns a failure of a Strata call into the negative errno a FUSE operation returns. Expected
 * answers (a missing path, a denied permission) map silently; failures of the cluster (it is
 * unreachable, or something broke) map to EIO and log one line naming the operation and path, since
 * the application only ever sees "Input/output error".
 */
final class FuseErrors {
  private static final Logger LOG = LoggerFactory.getLogger(FuseErrors.class);

  private FuseErrors() {}

  /**
   * Kinds of refused operation already logged (such as "setxattr of security.selinux"), at most
   * 1,024: a `cp -a` of a tree asks for the same refused attributes on every entry, and one line
   * per kind says as much as one per entry.
   */
  private static final Cache<String, Boolean> LOGGED_REFUSALS =
      Caffeine.newBuilder().maximumSize(1024).build();

  /**
   * Logs an operation the mount refuses because Strata does not support it, so that an
   * application's EOPNOTSUPP/EPERM can be traced to its cause: once per kind of operation for the
   * mount's life, naming the first path it was refused for.
   *
   * @return whether this call logged (false when that kind was logged before)
   */
  static boolean logUnsupported(String operation, String path) {
    if (LOGGED_REFUSALS.asMap().putIfAbsent(operation, Boolean.TRUE) != null) {
      return false;
    }
    LOG.info(
        "Refused {} of {}: not supported by a Strata mount (later refusals of the same are not"
            + " logged)",
        operation,
        path);
    return true;
  }

  /** The negative errno for {@code failure} of {@code operation} on namespace path {@code path}. */
  static int toErrno(String operation, String path, Throwable failure) {
    Throwable t = failure;
    if (t instanceof UncheckedIOException && t.getCause() != null) {
      t = t.getCause();
    }
    if (!(t instanceof StrataException se)) {
      LOG.error("FUSE {} of {} failed", operation, path, t);
      return -ErrorCodes.EIO();
    }
    if (se.posix() != null) {
      return -errno(se.posix());
    }
    ErrorCode code = se.code();
    switch (code) {
      case NOT_FOUND:
        return -ErrorCodes.ENOENT();
      case PERMISSION_DENIED:
        return -ErrorCodes.EACCES();
      case ALREADY_EXISTS:
        return -ErrorCodes.EEXIST();
      case INVALID_ARGUMENT:
        return -ErrorCodes.EINVAL();
      case FAILED_PRECONDITION:
        // A file still being written, for example: it becomes readable when its writer closes.
        return -ErrorCodes.EBUSY();
      case UNIMPLEMENTED:
        return -ErrorCodes.EOPNOTSUPP();
      case DEADLINE_EXCEEDED:
        // An under store that does not answer in time (the master says which, and the key).
        LOG.warn("FUSE {} of {} timed out: {}", operation, path, se.getMessage());
        return -ErrorCodes.ETIMEDOUT();
      case RESOURCE_EXHAUSTED:
        // A worker's cache full of blocks it must hold (not in their under store yet).
        LOG.warn("FUSE {} of {}: no room: {}", operation, path, se.getMessage());
        return -ErrorCodes.ENOSPC();
      case STALE:
        // The handle's version of the file is gone from the under store: as NFS says it.
        LOG.info("FUSE {} of {}: {}", operation, path, se.getMessage());
        return -ErrorCodes.ESTALE();
      default:
        LOG.warn("FUSE {} of {} failed with {}: {}", operation, path, code, se.getMessage());
        return -ErrorCodes.EIO();
    }
  }

  /** The errno of a POSIX error a failure carries. */
  static int errno(PosixError e) {
    return switch (e) {
      case EPERM -> ErrorCodes.EPERM();
      case ENOTEMPTY -> ErrorCodes.ENOTEMPTY();
      case ENOTDIR -> ErrorCodes.ENOTDIR();
      case EISDIR -> ErrorCodes.EISDIR();
      case EXDEV -> ErrorCodes.EXDEV();
      case ENAMETOOLONG -> ErrorCodes.ENAMETOOLONG();
      case EINVAL -> ErrorCodes.EINVAL();
      case ENOSPC -> ErrorCodes.ENOSPC();
      case EMLINK -> ErrorCodes.EMLINK();
      case EFBIG -> ErrorCodes.EFBIG();
    };
  }
}
