package io.strata.worker.block;

import io.strata.common.BlockChecksums;
import io.strata.common.VerifiedChunks;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Checks a cached block's file against the block's checksums before its bytes are served: the file
 * must still exist with the block's length, and each chunk a read touches must match. A chunk found
 * whole is not read again for the block's next reads while the file keeps the modification time it
 * had then (a write to it, such as a byte flipped by hand, changes that time); bytes that rot
 * without a write are the scrubber's to find ({@link BlockScrubber}). A block cached before blocks
 * had checksums is served unverified until the scrubber gives it checksums.
 *
 * <p>Thread-safe: the state of a block's verified chunks is a lock-free bit set, and two readers
 * that verify the same chunk at once both find what is there.
 */
public final class BlockVerifier {
  /** What a check found wrong, or null from {@link #check} when nothing. */
  public record Damage(String how) {}

  private final TieredBlockStore store;
  private final boolean enabled;

  /**
   * @param store where the blocks' checksums are kept
   * @param enabled false to serve every block unchecked ({@code strata.worker.block.verify=false})
   */
  BlockVerifier(TieredBlockStore store, boolean enabled) {
    this.store = store;
    this.enabled = enabled;
  }

  private final ThreadLocal<ByteBuffer> scratch =
      ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BlockChecksums.CHUNK));

  /** The checksums of a range's pieces (see {@link BlockChecksums#pieces}), and the chunk size. */
  public record Pieces(int chunkSize, int[] crcs) {}

  /**
   * The checksums that go with bytes {@code offset} to {@code offset + length} of {@code block}
   * over the data channel, for the reader to check: the stored checksum of each whole chunk, and
   * the pieces at the range's ends computed from the block file (read once each, at most a chunk).
   * Call after {@link #check} passed for the range.
   *
   * @return null when the block has no checksums or verification is off
   */
  public Pieces pieceChecksums(BlockMeta block, long offset, long length) throws IOException {
    if (!enabled) {
      return null;
    }
    BlockChecksums checksums = store.checksums(block);
    if (checksums == null || checksums.blockLength() != block.length()) {
      return null;
    }
    int chunkSize = checksums.chunkSize();
    FileChannel[] file = new FileChannel[1];
    try {
      int[] crcs =
          BlockChecksums.pieces(
              offset,
              length,
              chunkSize,
              (at, n) -> {
                int chunk = checksums.chunkOf(at);
                if (at == (long) chunk * chunkSize && n == checksums.chunkLength(chunk)) {
                  return checksums.crc(chunk);
                }
                if (file[0] == null) {
                  file[0] = FileChannel.open(block.path(), StandardOpenOption.READ);
                }
                ByteBuffer bytes = scratch.get();
                bytes.clear().limit(n);
                while (bytes.hasRemaining()) {
                  if (file[0].read(bytes, at + bytes.position()) < 0) {
                    throw new java.io.EOFException(
                        "block file " + block.path() + " ends before byte " + (at + n));
                  }
                }
                bytes.flip();
                java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
                crc.update(bytes);
                return (int) crc.getValue();
              });
      return new Pieces(chunkSize, crcs);
    } finally {
      if (file[0] != null) {
        file[0].close();
      }
    }
  }

  /** The chunks of one block found whole, for the file's modification time they were found at. */
  record Verified(long modifiedNanos, VerifiedChunks chunks) {}

  /**
   * Checks the chunks of {@code block} that bytes {@code offset} to {@code offset + length} fall
   * in.
   *
   * @return null when they may be served; what is wrong otherwise
   */
  public Damage check(BlockMeta block, long offset, long length) {
    if (!enabled) {
      return null;
    }
    BasicFileAttributes attrs;
    try {
      attrs =
          Files.readAttributes(block.path(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    } catch (NoSuchFileException e) {
      return new Damage("its file " + block.path() + " is gone");
    } catch (IOException e) {
      return new Damage("its file " + block.path() + " cannot be read: " + e.getMessage());
    }
    if (attrs.size() != block.length()) {
      return new Damage(
          "its file has " + attrs.size() + " bytes where the block has " + block.length());
    }
    BlockChecksums checksums;
    try {
      checksums = store.checksums(block);
    } catch (IOException e) {
      return new Damage("its checksums cannot be read: " + e.getMessage());
    }
    if (checksums == null || length <= 0) {
      return null;
    }
    if (checksums.blockLength() != block.length()) {
      return new Damage(
          "its checksums are of " + checksums.blockLength() + " bytes, not " + block.length());
    }
    long modified = attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
    Verified v = block.verified;
    if (v == null || v.modifiedNanos != modified) {
      v = new Verified(modified, new VerifiedChunks(checksums.chunks()));
      block.verified = v;
    }
    int first = checksums.chunkOf(offset);
    int last = checksums.chunkOf(Math.min(block.length(), offset + length) - 1);
    FileChannel file = null;
    try {
      for (int c = first; c <= last; c++) {
        if (v.chunks().has(c)) {
          continue;
        }
        if (file == null) {
          file = FileChannel.open(block.path(), StandardOpenOption.READ);
        }
        if (!checksums.verifyChunk(file, c, scratch.get())) {
          return new Damage(
              "chunk " + c + " (bytes from " + (long) c * checksums.chunkSize() + ")");
        }
        v.chunks().add(c);
      }
    } catch (NoSuchFileException e) {
      return new Damage("its file " + block.path() + " is gone");
    } catch (IOException e) {
      return new Damage("its file cannot be read: " + e.getMessage());
    } finally {
      if (file != null) {
        try {
          file.close();
        } catch (IOException e) {
          // Read only; nothing to lose.
        }
      }
    }
    return null;
  }
}
