package io.strata.client;

/**
 * How {@link FileSystem#createFile} creates a file. Immutable: each setter returns a copy.
 * Defaults: no overwrite, parents must exist, the master's block size, the master's default
 * mode (0644).
 */
public final class CreateOptions {
  private static final CreateOptions DEFAULTS = new CreateOptions(false, false, 0, 0);

  private final boolean overwrite;
  private final boolean recursive;
  private final long blockSize;
  private final int mode;

  private CreateOptions(boolean overwrite, boolean recursive, long blockSize, int mode) {
    this.overwrite = overwrite;
    this.recursive = recursive;
    this.blockSize = blockSize;
    this.mode = mode;
  }

  public static CreateOptions defaults() {
    return DEFAULTS;
  }

  /** Replace an existing file (never a directory). */
  public CreateOptions overwrite(boolean value) {
    return new CreateOptions(value, recursive, blockSize, mode);
  }

  /** Create missing parent directories. */
  public CreateOptions recursive(boolean value) {
    return new CreateOptions(overwrite, value, blockSize, mode);
  }

  /** Bytes per block; 0 means strata.master.file.block.size. */
  public CreateOptions blockSize(long value) {
    if (value < 0) {
      throw new IllegalArgumentException("block size must be positive or 0: " + value);
    }
    return new CreateOptions(overwrite, recursive, value, mode);
  }

  /** POSIX permission bits; 0 means the default (0644). */
  public CreateOptions mode(int value) {
    return new CreateOptions(overwrite, recursive, blockSize, value);
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
}
