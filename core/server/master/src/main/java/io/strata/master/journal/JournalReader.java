package io.strata.master.journal;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;

/**
 * Reads the records of one journal file in the format {@link Journal} documents, keeping the
 * byte offset of each so that damage can be reported (and a torn tail cut off) exactly.
 */
final class JournalReader implements Closeable {
  /** Largest record accepted; anything bigger is damage, not data. */
  static final int MAX_RECORD_BYTES = 64 << 20;

  /** A record that could not be read at {@code offset}. */
  static final class DamagedRecordException extends IOException {
    final long offset;
    /** True when the damage can be a write cut short by a crash: nothing valid follows it. */
    final boolean tornTail;
    final String reason;

    DamagedRecordException(Path file, long offset, String reason, boolean tornTail) {
      super("Journal file " + file + " is damaged at offset " + offset + ": " + reason);
      this.offset = offset;
      this.tornTail = tornTail;
      this.reason = reason;
    }
  }

  private final Path file;
  private final long size;
  private final InputStream in;
  private long offset;

  JournalReader(Path file) throws IOException {
    this.file = file;
    this.size = Files.size(file);
    this.in = new BufferedInputStream(Files.newInputStream(file), 1 << 16);
  }

  /** Offset of the next record. */
  long offset() {
    return offset;
  }

  /** The next record's message bytes, or null at a clean end of the file. */
  byte[] next() throws IOException {
    long start = offset;
    if (start == size) {
      return null;
    }
    int length = 0;
    int shift = 0;
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new DamagedRecordException(file, start, "the record length is cut short", true);
      }
      offset++;
      length |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
      shift += 7;
      if (shift > 28) {
        throw damaged(start, "the record length is not a valid varint");
      }
    }
    if (length <= 0 || length > MAX_RECORD_BYTES) {
      throw damaged(start, "bad record length " + length);
    }
    if (offset + length + 4 > size) {
      throw new DamagedRecordException(file, start, "the record is cut short (" + length
          + " bytes announced, " + Math.max(0, size - offset - 4) + " present)", true);
    }
    byte[] data = in.readNBytes(length);
    int crc = 0;
    for (int i = 0; i < 4; i++) {
      int b = in.read();
      if (data.length != length || b < 0) {
        throw new DamagedRecordException(file, start, "the file shrank while being read", true);
      }
      crc = (crc << 8) | b;
    }
    offset += length + 4L;
    if (crc != checksum(data)) {
      // A record whose checksum fails is a torn write only when it is the very last one.
      throw new DamagedRecordException(file, start, "checksum mismatch", offset == size);
    }
    return data;
  }

  private DamagedRecordException damaged(long start, String reason) throws IOException {
    return new DamagedRecordException(file, start, reason, restIsZero());
  }

  /** Whether everything after the current position is zero bytes (space a crash left behind). */
  private boolean restIsZero() throws IOException {
    int b;
    while ((b = in.read()) >= 0) {
      if (b != 0) {
        return false;
      }
    }
    return true;
  }

  static int checksum(byte[] data) {
    CRC32C crc = new CRC32C();
    crc.update(data);
    return (int) crc.getValue();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
