package io.strata.common.error;

/**
 * The POSIX error a failure stands for, where its {@link ErrorCode} alone does not tell: a FUSE
 * mount must answer {@code rmdir} of a non-empty folder with ENOTEMPTY and a rename of a folder
 * over a file with ENOTDIR, while both are FAILED_PRECONDITION to other clients. It travels beside
 * the code (a gRPC trailer, see {@link GrpcErrors}); a caller that does not know it, or a server
 * that does not send it, falls back to the code's own meaning. The names are the errno names, so
 * that logs and messages read as the system call's would; never renumber or rename them, since they
 * cross the wire by name.
 */
public enum PosixError {
  /** Operation not permitted: the store cannot hold it, or only the owner or root may. */
  EPERM,
  ENOTEMPTY,
  ENOTDIR,
  EISDIR,
  /** Across mounts (a rename or a hard link from one mount to another). */
  EXDEV,
  /** A name over 255 bytes, or a path over PATH_MAX. */
  ENAMETOOLONG,
  EINVAL,
  /** No space left (the mount's bounded write staging folder is full). */
  ENOSPC,
  /** Too many links to one file. */
  EMLINK,
  /** A file larger than it may be. */
  EFBIG;

  /** The error named {@code name}, or null for a name this release does not know. */
  public static PosixError fromName(String name) {
    if (name == null) {
      return null;
    }
    for (PosixError e : values()) {
      if (e.name().equals(name)) {
        return e;
      }
    }
    return null;
  }
}
