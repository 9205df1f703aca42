package io.strata.master.journal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import io.strata.common.Version;
import io.strata.proto.journal.JournalHeader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The {@code HEADER} file of a snapshot or backup: one record holding a {@link JournalHeader}
 * (format version, writing release, last applied index, term and entry sequence). A record is a
 * protobuf varint32 length, that many bytes, and the CRC32C of those bytes as 4 big-endian bytes,
 * so a damaged header is told apart from one of another format.
 */
public final class HeaderFile {
  public static final String NAME = "HEADER";
  public static final String SNAPSHOT_KIND = "snapshot";
  public static final String BACKUP_KIND = "backup";
  private static final String DAMAGED_HINT =
      " (use another backup, or remove this snapshot's"
          + " folder so that the master falls back to an older snapshot or the log)";

  /** Largest header accepted; anything bigger is damage, not a header. */
  private static final int MAX_BYTES = 1 << 20;

  private HeaderFile() {}

  /**
   * A header of a state of metadata layout {@code layoutVersion}: the cluster's finalized layout,
   * which may be older than this release's, so that the previous release still reads what this one
   * wrote until the cluster is finalized.
   */
  public static JournalHeader.Builder newHeader(String kind, int layoutVersion) {
    return JournalHeader.newBuilder()
        .setFormatVersion(layoutVersion)
        .setRelease(Version.RELEASE)
        .setCreatedMs(System.currentTimeMillis())
        .setKind(kind);
  }

  /** Writes the header atomically (temporary file, force, rename, force the folder). */
  public static void write(Path file, JournalHeader header) throws IOException {
    byte[] data = header.toByteArray();
    int n = CodedOutputStream.computeUInt32SizeNoTag(data.length);
    ByteBuffer out = ByteBuffer.allocate(n + data.length + 4);
    CodedOutputStream cos = CodedOutputStream.newInstance(out);
    cos.writeUInt32NoTag(data.length);
    cos.flush();
    out.put(data).putInt(checksum(data)).flip();
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            temp,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      while (out.hasRemaining()) {
        ch.write(out);
      }
      ch.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    }
  }

  /** Reads a header; fails naming the file when it is damaged. */
  public static JournalHeader read(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    try {
      CodedInputStream in = CodedInputStream.newInstance(all);
      int length = in.readUInt32();
      int start = in.getTotalBytesRead();
      if (length < 0 || length > MAX_BYTES || start + length + 4 != all.length) {
        throw new IOException(
            "Header file "
                + file
                + " is damaged: a record of "
                + length
                + " bytes does not fill its "
                + all.length
                + " bytes"
                + DAMAGED_HINT);
      }
      byte[] data = new byte[length];
      System.arraycopy(all, start, data, 0, length);
      int stored = ByteBuffer.wrap(all, start + length, 4).getInt();
      if (stored != checksum(data)) {
        throw new IOException(
            "Header file " + file + " is damaged: checksum mismatch" + DAMAGED_HINT);
      }
      return JournalHeader.parseFrom(data);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new IOException(
          "Header file " + file + " is damaged: " + e.getMessage() + DAMAGED_HINT, e);
    }
  }

  /** Fails when a header is of another kind or of a format newer than this release reads. */
  public static void check(JournalHeader header, Path file) throws IOException {
    if (header.getFormatVersion() > Version.LAYOUT_VERSION) {
      throw new IOException(
          file
              + " holds metadata layout "
              + header.getFormatVersion()
              + " (written by release "
              + header.getRelease()
              + "), but this release ("
              + Version.RELEASE
              + ") reads layouts up to "
              + Version.LAYOUT_VERSION
              + ". Run release "
              + header.getRelease()
              + " or newer; to go back to an older release after "
              + "`strata fsadmin upgrade finalize`, restore the backup of `strata fsadmin upgrade "
              + "prepare` instead.");
    }
    if (!SNAPSHOT_KIND.equals(header.getKind()) && !BACKUP_KIND.equals(header.getKind())) {
      throw new IOException(
          file
              + " is a journal '"
              + header.getKind()
              + "' header where a snapshot or backup was expected");
    }
  }

  static int checksum(byte[] data) {
    CRC32C crc = new CRC32C();
    crc.update(data, 0, data.length);
    return (int) crc.getValue();
  }
}
