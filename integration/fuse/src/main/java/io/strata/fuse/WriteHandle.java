package io.strata.fuse;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One handle of a file opened for writing (or reading and writing) through the mount. Every handle
 * of a file shares its {@link StagedFile}, so each sees what any other wrote; the handle itself
 * only remembers whether it wrote since the file was last written through, so that its close
 * ({@code flush}) writes the file through exactly when this handle changed it.
 */
final class WriteHandle {
  private final StagedFile file;
  private final int flags;
  private volatile boolean changed;
  private volatile boolean released;

  /**
   * @param changedAlready whether the file already differs from the cluster on account of this open
   *     (a new file, or one opened with O_TRUNC), so that closing it writes it through
   */
  WriteHandle(StagedFile file, int flags, boolean changedAlready) {
    this.file = file;
    this.flags = flags;
    this.changed = changedAlready;
  }

  StagedFile file() {
    return file;
  }

  /** The namespace path the file is written through now. */
  String path() {
    return file.path();
  }

  int flags() {
    return flags;
  }

  /** Writes {@code src} at {@code offset}; returns the number of bytes written. */
  int write(long offset, ByteBuffer src) throws IOException {
    int n = src.remaining();
    file.write(offset, src);
    changed = true;
    return n;
  }

  /** Cuts or extends the file through this handle (ftruncate). */
  void truncate(long size) throws IOException {
    file.truncate(size);
    changed = true;
  }

  /** Extends the file to {@code size} bytes at least (fallocate). */
  void extendTo(long size) throws IOException {
    file.extendTo(size);
    changed = true;
  }

  /** Whether this handle changed the file since it was last written through. */
  boolean changed() {
    return changed;
  }

  /** The file was written through: this handle's changes are in the cluster. */
  void writtenThrough() {
    changed = false;
  }

  /** Marks the handle released; true the first time only. */
  synchronized boolean release() {
    if (released) {
      return false;
    }
    released = true;
    return true;
  }
}
