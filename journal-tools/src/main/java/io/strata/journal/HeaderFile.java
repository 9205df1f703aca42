package io.strata.journal;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.CRC32C;

/**
 * The {@code HEADER} file of a snapshot or backup: one record, a protobuf varint32 length, that
 * many bytes of a {@link JournalHeader}, and the CRC32C of those bytes as 4 big-endian bytes.
 *
 * <p>This is the record format of the master's {@code io.strata.master.journal.Journal} and
 * {@code JournalReader}. It is written again here because those classes are package-private to
 * the master, and a tool that inspects damaged folders needs to report exactly where a record
 * breaks (which the master's reader folds into its own recovery rules). The format is an on-disk
 * contract that never changes in place, so the two copies cannot drift without a format version.
 */
final class HeaderFile {
  static final String NAME = "HEADER";
  /** A header is a few dozen bytes; anything much larger is not a header. */
  private static final int MAX_BYTES = 1 << 20;

  private HeaderFile() {}

  /** Reads and checks the one record of a header file. */
  static JournalHeader read(Path file) throws IOException {
    if (!Files.isRegularFile(file)) {
      throw new JournalDamage(file, -1, -1, "the header file is missing");
    }
    byte[] bytes = Files.readAllBytes(file);
    if (bytes.length == 0) {
      throw new JournalDamage(file, 0, -1, "the header file is empty");
    }
    int length = 0;
    int pos = 0;
    for (int shift = 0; ; shift += 7) {
      if (pos == bytes.length) {
        throw new JournalDamage(file, 0, -1, "the record length is cut short");
      }
      if (shift > 28) {
        throw new JournalDamage(file, 0, -1, "the record length is not a valid varint");
      }
      int b = bytes[pos++] & 0xFF;
      length |= (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        break;
      }
    }
    if (length <= 0 || length > MAX_BYTES) {
      throw new JournalDamage(file, 0, -1, "bad record length " + length);
    }
    long end = (long) pos + length + 4;
    if (end > bytes.length) {
      throw new JournalDamage(file, 0, -1, "the record is cut short (" + length
          + " bytes announced, " + Math.max(0, bytes.length - pos - 4) + " present)");
    }
    if (end < bytes.length) {
      throw new JournalDamage(file, end, -1, (bytes.length - end)
          + " unexpected bytes after the header record");
    }
    int stored = 0;
    for (int i = 0; i < 4; i++) {
      stored = (stored << 8) | (bytes[pos + length + i] & 0xFF);
    }
    CRC32C crc = new CRC32C();
    crc.update(bytes, pos, length);
    if ((int) crc.getValue() != stored) {
      throw new JournalDamage(file, 0, -1, "checksum mismatch");
    }
    try {
      return JournalHeader.parseFrom(ByteBuffer.wrap(bytes, pos, length));
    } catch (InvalidProtocolBufferException e) {
      throw new JournalDamage(file, pos, -1, "the header is not a JournalHeader: "
          + e.getMessage(), e);
    }
  }

  /** Writes a header file through a temporary file and a rename, so it is whole or absent. */
  static void write(Path file, JournalHeader header) throws IOException {
    byte[] data = header.toByteArray();
    int n = CodedOutputStream.computeUInt32SizeNoTag(data.length);
    byte[] out = new byte[n + data.length + 4];
    CodedOutputStream cos = CodedOutputStream.newInstance(out, 0, n);
    cos.writeUInt32NoTag(data.length);
    cos.flush();
    System.arraycopy(data, 0, out, n, data.length);
    CRC32C crc = new CRC32C();
    crc.update(data);
    int c = (int) crc.getValue();
    for (int i = 0; i < 4; i++) {
      out[n + data.length + i] = (byte) (c >>> (24 - 8 * i));
    }
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.write(temp, out);
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
  }
}
