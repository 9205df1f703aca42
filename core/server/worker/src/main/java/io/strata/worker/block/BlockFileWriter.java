package io.strata.worker.block;

import io.strata.common.BlockChecksums;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes one block file sequentially, with Direct I/O when it was opened that way (see {@link
 * BlockFileOpener}), so that a large copy does not fill the page cache.
 *
 * <p>Guarantees: after {@link #close} the file holds exactly the bytes given to {@link #write}, in
 * order, and its length is exactly {@link #length()}, whether or not Direct I/O was used. With
 * Direct I/O every write goes to the file system at a 4 KiB-aligned position with a 4 KiB-aligned
 * length; the last, partial chunk is padded with zeros and the padding is cut off on close through
 * an ordinary channel. Not thread-safe: one writer belongs to one copy.
 *
 * <p>Contract on buffers with Direct I/O: each buffer passed to {@link #write} is direct, its
 * position is at an address aligned to {@link #ALIGNMENT}, and every write but the last covers a
 * multiple of {@link #ALIGNMENT} bytes. The last write may be shorter; it is padded in place, so
 * the buffer's capacity must reach the next multiple of {@link #ALIGNMENT} after its limit (true of
 * any buffer made with {@code allocateDirect(n + 4095).alignedSlice(4096)} for a multiple-of-4096
 * {@code n}). Without Direct I/O any buffer is accepted.
 */
public final class BlockFileWriter implements AutoCloseable {
  /** Alignment of buffer addresses, file positions and lengths under Direct I/O. */
  public static final int ALIGNMENT = 4096;

  private final Path path;
  private final FileChannel channel;
  private final boolean direct;
  private final boolean force;
  private long length;
  // Computed from the bytes as they are written, so the block's checksums cost no read-back.
  private final BlockChecksums.Builder checksums = BlockChecksums.builder();
  private boolean padded;
  private boolean closed;

  BlockFileWriter(Path path, FileChannel channel, boolean direct, boolean force) {
    this.path = path;
    this.channel = channel;
    this.direct = direct;
    this.force = force;
  }

  /** The file being written. */
  public Path path() {
    return path;
  }

  /** True when writes bypass the page cache. */
  public boolean isDirect() {
    return direct;
  }

  /** Bytes written so far, without padding: the length the file has after close. */
  public long length() {
    return length;
  }

  /**
   * Appends every remaining byte of {@code src}, leaving its position at its limit.
   *
   * @throws IllegalArgumentException when Direct I/O is on and the buffer breaks the contract in
   *     the class description
   * @throws IllegalStateException after a short (padded) write under Direct I/O, or after close
   */
  public void write(ByteBuffer src) throws IOException {
    if (closed) {
      throw new IllegalStateException("block file " + path + " is already closed");
    }
    if (!src.hasRemaining()) {
      return;
    }
    int bytes = src.remaining();
    checksums.update(src);
    if (!direct) {
      while (src.hasRemaining()) {
        channel.write(src);
      }
      length += bytes;
      return;
    }
    if (padded) {
      throw new IllegalStateException(
          "block file "
              + path
              + " already got its last, partial "
              + "chunk at byte "
              + length
              + "; no more bytes may follow under Direct I/O");
    }
    checkAligned(src);
    int limit = src.limit();
    int tail = bytes % ALIGNMENT;
    if (tail != 0) {
      int paddedLimit = limit + ALIGNMENT - tail;
      if (paddedLimit > src.capacity()) {
        throw new IllegalArgumentException(
            "the last chunk of "
                + path
                + " needs room for "
                + (ALIGNMENT - tail)
                + " bytes of padding after its limit; give a buffer whose "
                + "capacity is a multiple of "
                + ALIGNMENT);
      }
      src.limit(paddedLimit);
      for (int i = limit; i < paddedLimit; i++) {
        src.put(i, (byte) 0);
      }
      padded = true;
    }
    long position = length;
    while (src.hasRemaining()) {
      position += channel.write(src, position);
    }
    src.limit(limit);
    src.position(limit);
    length += bytes;
  }

  /** The checksums of every byte written; call once, after the last write. */
  public BlockChecksums checksums() {
    return checksums.build();
  }

  private void checkAligned(ByteBuffer src) {
    if (!src.isDirect()) {
      throw new IllegalArgumentException("Direct I/O to " + path + " needs a direct buffer");
    }
    if (src.alignmentOffset(src.position(), ALIGNMENT) != 0) {
      throw new IllegalArgumentException(
          "Direct I/O to "
              + path
              + " needs a buffer whose "
              + "position is aligned to "
              + ALIGNMENT
              + " bytes; allocate it with alignedSlice");
    }
  }

  /**
   * Closes the file: under Direct I/O cuts off the padding of the last chunk, and forces the file
   * to the device when the writer was opened with force. Closing twice does nothing.
   */
  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try (channel) {
      if (direct && (padded || force)) {
        // Truncation and fsync are metadata work; an ordinary channel has no alignment rules.
        try (FileChannel plain = FileChannel.open(path, StandardOpenOption.WRITE)) {
          if (padded) {
            plain.truncate(length);
          }
          if (force) {
            plain.force(true);
          }
        }
      } else if (force) {
        channel.force(true);
      }
    }
  }
}
