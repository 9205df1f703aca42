package io.strata.common;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The CRC32C of every chunk of a block, computed once where the block's bytes enter the cluster and
 * kept beside the block file ({@link BlockFiles#checksums}), so that whoever reads the file -- the
 * worker before it sends bytes, a client reading it directly -- can tell a block that changed at
 * rest (a flipped bit, a torn or truncated write) before handing a byte on.
 *
 * <p>CRC32C because the JVM computes it with the processor's CRC instruction (several GB/s per
 * core), the checksum HDFS and most storage systems use. One per {@value #CHUNK} bytes rather than
 * HDFS's 512: reads here are of whole small files or long runs of large ones, so the checksums of a
 * 64 MiB block fit in 8 KiB (one read, 0.01% of the block), and a small positioned read verifies at
 * most two chunks -- and each chunk only once for as long as a reader keeps the file open.
 *
 * <p>The file is a 20-byte header -- magic {@code SCRC}, format version, chunk size, block length
 * -- and the chunks' checksums, 4 bytes each, big-endian. Immutable.
 */
public final class BlockChecksums {
  /** Bytes per checksum. */
  public static final int CHUNK = 32 << 10;

  private static final int MAGIC = 0x53435243;
  private static final int VERSION = 1;
  private static final int HEADER = 20;

  private final int chunkSize;
  private final long blockLength;
  private final int[] crcs;

  private BlockChecksums(int chunkSize, long blockLength, int[] crcs) {
    this.chunkSize = chunkSize;
    this.blockLength = blockLength;
    this.crcs = crcs;
  }

  public int chunkSize() {
    return chunkSize;
  }

  /** The length of the block the checksums are of. */
  public long blockLength() {
    return blockLength;
  }

  public int chunks() {
    return crcs.length;
  }

  /** The chunk that holds byte {@code offset} of the block. */
  public int chunkOf(long offset) {
    return (int) (offset / chunkSize);
  }

  /** Computes the checksums of bytes as they are written, in order, in pieces of any size. */
  public static final class Builder {
    private final CRC32C crc = new CRC32C();
    private int[] crcs = new int[16];
    private int count;
    private int inChunk;
    private long length;

    /** Adds the bytes from {@code src}'s position to its limit; the position does not move. */
    public Builder update(ByteBuffer src) {
      ByteBuffer b = src.duplicate();
      while (b.hasRemaining()) {
        int n = Math.min(b.remaining(), CHUNK - inChunk);
        int limit = b.limit();
        b.limit(b.position() + n);
        crc.update(b);
        b.limit(limit);
        advance(n);
      }
      return this;
    }

    public Builder update(byte[] bytes, int offset, int length) {
      return update(ByteBuffer.wrap(bytes, offset, length));
    }

    private void advance(int n) {
      inChunk += n;
      length += n;
      if (inChunk == CHUNK) {
        add((int) crc.getValue());
        crc.reset();
        inChunk = 0;
      }
    }

    private void add(int value) {
      if (count == crcs.length) {
        crcs = Arrays.copyOf(crcs, count * 2);
      }
      crcs[count++] = value;
    }

    /** Bytes added so far. */
    public long length() {
      return length;
    }

    /** The checksums of everything added; the builder must not be used afterwards. */
    public BlockChecksums build() {
      if (inChunk > 0) {
        add((int) crc.getValue());
        inChunk = 0;
      }
      return new BlockChecksums(CHUNK, length, Arrays.copyOf(crcs, count));
    }
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Computes the checksums of a whole file, reading it through {@code buffer}. */
  public static BlockChecksums compute(Path file, ByteBuffer buffer) throws IOException {
    Builder b = builder();
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long position = 0;
      while (true) {
        buffer.clear();
        int n = ch.read(buffer, position);
        if (n < 0) {
          break;
        }
        buffer.flip();
        b.update(buffer);
        position += n;
      }
    }
    return b.build();
  }

  /** The file's form: header and checksums. */
  public byte[] encode() {
    ByteBuffer out = ByteBuffer.allocate(HEADER + 4 * crcs.length).order(ByteOrder.BIG_ENDIAN);
    out.putInt(MAGIC).putInt(VERSION).putInt(chunkSize).putLong(blockLength);
    for (int c : crcs) {
      out.putInt(c);
    }
    return out.array();
  }

  /**
   * Reads the checksums kept at {@code file}.
   *
   * @return null when there is no such file (a block cached before blocks had checksums)
   * @throws IOException when the file cannot be read or is not a checksum file of this format
   */
  public static BlockChecksums read(Path file) throws IOException {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      return null;
    }
    ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
    if (bytes.length < HEADER || in.getInt() != MAGIC || in.getInt() != VERSION) {
      throw new IOException(file + " is not a block checksum file of format " + VERSION);
    }
    int chunkSize = in.getInt();
    long blockLength = in.getLong();
    long chunks = chunkSize <= 0 ? -1 : (blockLength + chunkSize - 1) / chunkSize;
    if (chunks < 0 || blockLength < 0 || bytes.length != HEADER + 4 * chunks) {
      throw new IOException(
          file + " is damaged: its length does not match the block length it records");
    }
    int[] crcs = new int[(int) chunks];
    for (int i = 0; i < crcs.length; i++) {
      crcs[i] = in.getInt();
    }
    return new BlockChecksums(chunkSize, blockLength, crcs);
  }

  /**
   * Writes the checksums to {@code file} through a temporary file in its folder and a rename, so
   * that a crash never leaves a partial checksum file under the name.
   */
  public void write(Path file) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.write(tmp, encode());
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * The first chunk whose checksum differs from {@code other}'s, or -1 when the two are of the same
   * bytes; a block length that differs makes chunk 0 differ.
   */
  public int firstDifference(BlockChecksums other) {
    if (other.blockLength != blockLength || other.chunkSize != chunkSize) {
      return 0;
    }
    for (int i = 0; i < crcs.length; i++) {
      if (crcs[i] != other.crcs[i]) {
        return i;
      }
    }
    return -1;
  }

  /** The stored CRC32C of chunk {@code chunk}. */
  public int crc(int chunk) {
    return crcs[chunk];
  }

  /**
   * The CRC32C of each piece of bytes {@code offset} to {@code offset + length} of a block, the
   * range cut at every multiple of {@code chunkSize}: what a worker sends with the bytes and a
   * reader checks them against. {@code crcOfPiece} gives a piece's checksum from its block offset
   * and length.
   */
  public static int[] pieces(long offset, long length, int chunkSize, PieceChecksum crcOfPiece)
      throws IOException {
    if (length <= 0) {
      return new int[0];
    }
    long end = offset + length;
    int count = (int) ((end - 1) / chunkSize - offset / chunkSize + 1);
    int[] out = new int[count];
    long at = offset;
    for (int i = 0; i < count; i++) {
      long next = Math.min((at / chunkSize + 1) * chunkSize, end);
      out[i] = crcOfPiece.crc(at, (int) (next - at));
      at = next;
    }
    return out;
  }

  /** The checksum of one piece of a block, from its offset in the block and its length. */
  @FunctionalInterface
  public interface PieceChecksum {
    int crc(long offset, int length) throws IOException;
  }

  /**
   * Checks bytes {@code offset} to {@code offset + length} of a block, held in {@code bytes} from
   * {@code at}, against the checksums of its pieces (see {@link #pieces}).
   *
   * @return the block offset of the first piece that does not match, or -1 when all do
   */
  public static long firstBadPiece(
      byte[] bytes, int at, long offset, int length, int chunkSize, List<Integer> expected) {
    long end = offset + length;
    long piece = offset;
    CRC32C crc = new CRC32C();
    for (int i = 0; piece < end; i++) {
      long next = Math.min((piece / chunkSize + 1) * chunkSize, end);
      if (i >= expected.size()) {
        return piece;
      }
      crc.reset();
      crc.update(bytes, at + (int) (piece - offset), (int) (next - piece));
      if ((int) crc.getValue() != expected.get(i)) {
        return piece;
      }
      piece = next;
    }
    return -1;
  }

  /** Whether {@code bytes} (position to limit) are chunk {@code chunk} whole; position unmoved. */
  public boolean matches(int chunk, ByteBuffer bytes) {
    if (chunk < 0 || chunk >= crcs.length || bytes.remaining() != chunkLength(chunk)) {
      return false;
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes.duplicate());
    return (int) crc.getValue() == crcs[chunk];
  }

  /** The length of chunk {@code chunk}: the chunk size, or less for the block's last. */
  public int chunkLength(int chunk) {
    return (int) Math.min(chunkSize, blockLength - (long) chunk * chunkSize);
  }

  /**
   * Verifies the chunks of {@code file} that bytes {@code offset} to {@code offset + length} of the
   * block fall in, reading them through {@code scratch} (at least {@link #chunkSize} bytes).
   *
   * @return the first chunk that does not match, or -1 when all do; a file shorter than the block
   *     fails at its first missing chunk
   */
  public int verify(FileChannel file, long offset, long length, ByteBuffer scratch)
      throws IOException {
    if (length <= 0) {
      return -1;
    }
    int first = chunkOf(offset);
    int last = chunkOf(Math.min(blockLength, offset + length) - 1);
    for (int c = first; c <= last; c++) {
      if (!verifyChunk(file, c, scratch)) {
        return c;
      }
    }
    return -1;
  }

  /** Whether chunk {@code chunk} of {@code file} matches, read through {@code scratch}. */
  public boolean verifyChunk(FileChannel file, int chunk, ByteBuffer scratch) throws IOException {
    int n = chunkLength(chunk);
    scratch.clear().limit(n);
    long position = (long) chunk * chunkSize;
    while (scratch.hasRemaining()) {
      int read = file.read(scratch, position + scratch.position());
      if (read < 0) {
        return false;
      }
    }
    scratch.flip();
    return matches(chunk, scratch);
  }
}
