package io.strata.client;

import io.strata.proto.CreateFileRequest;

/**
 * How {@link FileSystem#createFile} creates a file. Immutable: each setter returns a copy.
 * Defaults: no overwrite, parents must exist, the master's block size, the master's default mode
 * (0644), owner and group (the master's user and group).
 */
public final class CreateOptions {
  private static final CreateOptions DEFAULTS =
      new CreateOptions(false, false, 0, 0, "", "", false);

  private final boolean overwrite;
  private final boolean recursive;
  private final long blockSize;
  private final int mode;
  private final String owner;
  private final String group;
  private final boolean newVersion;

  private CreateOptions(
      boolean overwrite,
      boolean recursive,
      long blockSize,
      int mode,
      String owner,
      String group,
      boolean newVersion) {
    this.overwrite = overwrite;
    this.recursive = recursive;
    this.blockSize = blockSize;
    this.mode = mode;
    this.owner = owner;
    this.group = group;
    this.newVersion = newVersion;
  }

  public static CreateOptions defaults() {
    return DEFAULTS;
  }

  /** Replace an existing file (never a directory). */
  public CreateOptions overwrite(boolean value) {
    return new CreateOptions(value, recursive, blockSize, mode, owner, group, newVersion);
  }

  /** Create missing parent directories. */
  public CreateOptions recursive(boolean value) {
    return new CreateOptions(overwrite, value, blockSize, mode, owner, group, newVersion);
  }

  /** Bytes per block; 0 means strata.master.file.block.size. */
  public CreateOptions blockSize(long value) {
    if (value < 0) {
      throw new IllegalArgumentException("block size must be positive or 0: " + value);
    }
    return new CreateOptions(overwrite, recursive, value, mode, owner, group, newVersion);
  }

  /** POSIX permission bits; 0 means the default (0644). */
  public CreateOptions mode(int value) {
    return new CreateOptions(overwrite, recursive, blockSize, value, owner, group, newVersion);
  }

  /**
   * Owner of the file and of the parents {@link #recursive} creates; "" means the master's default
   * (its user).
   */
  public CreateOptions owner(String value) {
    return new CreateOptions(
        overwrite, recursive, blockSize, mode, nonNull(value, "owner"), group, newVersion);
  }

  /**
   * Group of the file and of the parents {@link #recursive} creates; "" means the master's default
   * (its group).
   */
  public CreateOptions group(String value) {
    return new CreateOptions(
        overwrite, recursive, blockSize, mode, owner, nonNull(value, "group"), newVersion);
  }

  private static String nonNull(String value, String what) {
    if (value == null) {
      throw new IllegalArgumentException(what + " must not be null (\"\" means the default)");
    }
    return value;
  }

  /**
   * Write a new version of the existing complete file instead of a new file: the file keeps its
   * inode number, names (hard links) and attributes, and readers see its current content until the
   * stream is closed; a failed write leaves it as it was. The other options do not apply. Needs a
   * cluster at metadata layout 2.
   */
  public CreateOptions newVersion(boolean value) {
    return new CreateOptions(overwrite, recursive, blockSize, mode, owner, group, value);
  }

  /** Whether this writes a new version of an existing file. */
  public boolean newVersion() {
    return newVersion;
  }

  public boolean overwrite() {
    return overwrite;
  }

  public boolean recursive() {
    return recursive;
  }

  public long blockSize() {
    return blockSize;
  }

  public int mode() {
    return mode;
  }

  /** The owner to create with; "" for the master's default. */
  public String owner() {
    return owner;
  }

  /** The group to create with; "" for the master's default. */
  public String group() {
    return group;
  }

  /**
   * The master's create request for {@code path} with these options: overwrite, recursive, block
   * size, mode, owner and group (not {@link #newVersion}, which only {@link FileSystem#createFile}
   * sends).
   */
  CreateFileRequest.Builder request(String path) {
    return CreateFileRequest.newBuilder()
        .setPath(path)
        .setOverwrite(overwrite)
        .setRecursive(recursive)
        .setBlockSize(blockSize)
        .setMode(mode)
        .setOwner(owner)
        .setGroup(group);
  }
}
