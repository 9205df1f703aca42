package io.strata.underfs;

import java.util.Objects;

/**
 * What an under store says of one path: the entry itself, so a symbolic link is described as a link
 * with its target, not as what it points to (see {@link UnderFileSystem#getStatus}).
 *
 * <p>Guarantees, checked when built: no component is null; {@code directory} is true exactly when
 * {@code type} is {@link UfsFileType#DIRECTORY}; {@code symlinkTarget} is empty unless the entry is
 * a {@link UfsFileType#SYMLINK}; {@code rdev} is 0 unless it is a device node.
 *
 * @param name last path component
 * @param directory whether the path is a directory (or a common prefix in object stores); the same
 *     as {@code type == DIRECTORY}, kept because most callers ask only this
 * @param length bytes; 0 for directories, FIFOs, sockets and device nodes; for a symbolic link the
 *     byte length of its target text, as lstat reports it
 * @param modificationTimeMs last modification time, milliseconds since the epoch
 * @param mode POSIX permission bits, or 0 when the store has none
 * @param owner owner name, or "" when the store has none
 * @param group group name, or "" when the store has none
 * @param fingerprint text that changes whenever the content changes (length and mtime, an ETag, a
 *     checksum); used to notice files changed behind Strata's back. For a symbolic link it is
 *     {@code "link:" + target}; "" for directories and for entries with no content
 * @param type the kind of entry
 * @param symlinkTarget the target text of a symbolic link, as stored (relative or absolute, not
 *     resolved); "" for every other kind
 * @param rdev the device number of a device node as the kernel encodes a {@code dev_t} (what stat
 *     reports as {@code st_rdev}); 0 for every other kind
 */
public record UfsStatus(
    String name,
    boolean directory,
    long length,
    long modificationTimeMs,
    int mode,
    String owner,
    String group,
    String fingerprint,
    UfsFileType type,
    String symlinkTarget,
    long rdev) {

  public UfsStatus {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(owner, "owner");
    Objects.requireNonNull(group, "group");
    Objects.requireNonNull(fingerprint, "fingerprint");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(symlinkTarget, "symlinkTarget");
    if (directory != (type == UfsFileType.DIRECTORY)) {
      throw new IllegalArgumentException(
          "Status of '" + name + "' says directory=" + directory + " but type " + type);
    }
    if (type != UfsFileType.SYMLINK && !symlinkTarget.isEmpty()) {
      throw new IllegalArgumentException(
          "Status of '"
              + name
              + "' is a "
              + type
              + " with a symbolic link target '"
              + symlinkTarget
              + "'");
    }
    if (!type.device() && rdev != 0) {
      throw new IllegalArgumentException(
          "Status of '" + name + "' is a " + type + " with a device number " + rdev);
    }
  }

  /** A regular file or a directory, as every store has. */
  public UfsStatus(
      String name,
      boolean directory,
      long length,
      long modificationTimeMs,
      int mode,
      String owner,
      String group,
      String fingerprint) {
    this(
        name,
        directory,
        length,
        modificationTimeMs,
        mode,
        owner,
        group,
        fingerprint,
        directory ? UfsFileType.DIRECTORY : UfsFileType.REGULAR,
        "",
        0);
  }

  /** Whether this is a regular file: a file of bytes, the only kind Strata caches. */
  public boolean regularFile() {
    return type == UfsFileType.REGULAR;
  }
}
